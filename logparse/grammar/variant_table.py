"""What SGLang's and vLLM's variant tables share: the record, its loader, the signature index, the dating.

The tables themselves are data: ``grammars/sglang/variants.toml`` and ``grammars/vllm/variants.toml``
(one ``[[variant]]`` per wording, described at the top of each file), read by
:func:`load_variants`.  Each engine's module (:mod:`~logparse.engines.sglang.variants`,
:mod:`~logparse.engines.vllm.variants`) keeps what is its own: the signature of a wording, its
line grammar, its release list and its line prefixes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from logparse.data import tables

#: ``signature(kind, form, fields)``: what identifies a wording in an engine's table.
Signature = Callable[[str, str | None, dict[str, Any]], tuple]


@dataclass(frozen=True)
class Variant:
    name: str
    since: str
    until: str
    sample: str
    expect: dict[str, Any] = field(default_factory=dict)
    kind: str = ""
    dates: bool = True


def load_variants(filename: str, last: str) -> list[Variant]:
    """The ``[[variant]]`` entries of ``grammars/<filename>``, in file order; ``"last"`` in ``since`` or
    ``until`` is the newest release the engine's table knows (``last``)."""
    return [_variant(entry, last) for entry in tables.entries(filename, "variant")]


def _variant(entry: dict[str, Any], last: str) -> Variant:
    e = dict(entry)
    expect = dict(e.pop("expect", {}))
    for key in e.pop("unset", []):  # TOML has no null: the fields the sample leaves unset
        expect[key] = None
    for end in ("since", "until"):
        if e[end] == "last":
            e[end] = last
    return Variant(expect=expect, **e)


def signature_names(
    variants: Iterable[Variant], parse_line: Callable[[str], Any], signature: Signature
) -> dict[tuple, list[str]]:
    """Signature -> the names of the dating variants whose sample has it (``prefix_*`` date apart)."""
    names: dict[tuple, list[str]] = {}
    for v in variants:
        if not v.dates or v.name.startswith("prefix_"):
            continue
        _, _, (kind, fields, form) = parse_line(v.sample)
        names.setdefault(signature(kind, form, fields), []).append(v.name)
    return names


def union(vs: Iterable[Variant], index: Callable[[str], int]) -> tuple[str, str] | None:
    """The release range covering every variant of ``vs`` (``index``: a release's place), None for none."""
    vs = list(vs)
    if not vs:
        return None
    lo = min(vs, key=lambda v: index(v.since)).since
    hi = max(vs, key=lambda v: index(v.until)).until
    return (lo, hi)


def wording_evidence(
    events,
    dates_kind: Callable[[str], bool],
    signature: Signature,
    match: Callable[[str, str | None, dict[str, Any]], list[Variant]],
    index: Callable[[str], int],
    body: Callable[[str], str],
) -> list[tuple[str, tuple[str, str]]]:
    """Release ranges implied by the wording of the events (one item per distinct signature, for the
    kinds ``dates_kind`` accepts); names each matched event's ``variant``.  ``body``: a line without
    its prefix, as the evidence quotes it."""
    out: list[tuple[str, tuple[str, str]]] = []
    seen: set = set()
    for ev in events:
        if not dates_kind(ev.kind):
            continue
        sig = signature(ev.kind, ev.form, ev.fields)
        if sig in seen:
            continue
        seen.add(sig)
        vs = match(ev.kind, ev.form, ev.fields)
        rng = union(vs, index)
        if vs and rng is not None:
            ev.variant = vs[0].name
            out.append((f"'{shorten(body(ev.text))}' ({'/'.join(v.name for v in vs)})", rng))
    return out


def shorten(body: str, n: int = 48) -> str:
    return body if len(body) <= n else body[:n] + "…"
