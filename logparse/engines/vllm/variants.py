"""Every vLLM line variant that carries a figure or an outcome (the vLLM log catalogue): the table is
data, ``grammars/vllm/variants.toml``.

Each entry: a name, the release range in which vLLM prints exactly that wording (catalogue §2, as
``since``/``until`` over :data:`logparse.engines.vllm.versions.RELEASES`), one sample line written
by us in that format (our own numbers), and the fields the sample must parse to.
``tests/engines/vllm/test_variants.py`` walks the table, as ``tests/engines/sglang/test_variants.py`` walks SGLang's.

The table also dates a log whose version is not printed (a pasted excerpt): an event's signature
(kind, wording form, field names) is looked up here, and the union of the matching variants'
ranges narrows the launch's release range.  ``prefix_*`` entries test the layers in front of the
message (process tags, formatter eras) and date through :func:`prefix_evidence`; runtime, uvicorn
and generic lines do not date (``dates = false``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from logparse.data import tables
from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.prefix import split_head
from logparse.grammar.variant_table import Variant, load_variants, signature_names, wording_evidence

LAST = vv.LAST


#: The table, in file order: ``grammars/vllm/variants.toml`` (one ``[[variant]]`` per wording).
VARIANTS: list[Variant] = load_variants("vllm/variants.toml", LAST)


def signature(kind: str, form: str | None, fields: dict[str, Any]) -> tuple:
    """What identifies a wording: kind, form and which fields are present."""
    return (kind, form, frozenset(k for k in fields if k not in ("exception", "detail")))


@lru_cache(maxsize=1)
def _index() -> dict[tuple, list[Variant]]:
    from logparse.engines.vllm.line import parse_line

    by_name = {v.name: v for v in VARIANTS}
    return {sig: [by_name[n] for n in ns] for sig, ns in signature_names(VARIANTS, parse_line, signature).items()}


def match(kind: str, form: str | None, fields: dict[str, Any]) -> list[Variant]:
    return _index().get(signature(kind, form, fields), [])


def evidence_for_events(events) -> list[tuple[str, vv.Range]]:
    """Release ranges implied by the wording of a launch's vLLM lines (one item per wording) and by
    their line prefix and process tags; the line numbers are apart (:func:`line_number_evidence`)."""
    out = wording_evidence(events, _dates_kind, signature, match, vv.index, _body)
    out.extend(prefix_evidence(events))
    return out


def _dates_kind(kind: str) -> bool:
    return kind.startswith("vllm_")


def _body(text: str) -> str:
    _, _, _, end = split_head(text)
    return text[end:]


#: Process-tag names and the releases that print them (catalogue §1.3.3, §7).
_TAG_RANGES: tuple[tuple[str, str, vv.Range], ...] = (
    ("VllmWorkerProcess", "(VllmWorkerProcess pid=N)", ("0.4.2", "0.10.2")),
    ("VllmWorker rank=", "(VllmWorker rank=R pid=N)", ("0.6.5", "0.10.0")),
    ("VllmWorker TP", "(VllmWorker TPn pid=N)", ("0.10.1", "0.10.1.1")),
    ("Worker_", "(Worker_TPn pid=N)", ("0.10.2", LAST)),
    ("EngineCore_DP", "(EngineCore_DPn pid=N)", ("0.10.2", LAST)),
    ("APIServer", "(APIServer pid=N)", ("0.10.1", LAST)),
    ("MainProcess", "(MainProcess pid=N)", ("0.31.0", LAST)),
)


def prefix_evidence(events) -> list[tuple[str, vv.Range]]:
    """The formatter era of the lines (bare ``file.py:N]`` vs ``[file.py:N]``) and the process tags."""
    out: list[tuple[str, vv.Range]] = []
    bare = bracketed = False
    names: set[str] = set()
    for ev in events[:400]:
        tags, _, lp, _ = split_head(ev.text)
        names.update(n for n, _, _ in tags if n)
        if lp is not None:
            bare = bare or lp.group("bare_loc") is not None
            bracketed = bracketed or lp.group("loc") is not None
    if bare and not bracketed:
        out.append(("line prefix 'file.py:N]' (no bracket)", ("0.4.0", "0.7.3")))
    elif bracketed and not bare:
        out.append(("line prefix '[file.py:N]'", ("0.8.0", LAST)))
    for start, label, rng in _TAG_RANGES:
        if any(n.startswith(start) for n in names):
            out.append((f"process tag {label}", rng))
    return out


# --------------------------------------------------------------------------- line-number fingerprints
#: (kind, form) -> the family of Appendix A's line numbers (form None: any form of the kind).
_FAMILY_OF: dict[tuple[str, str | None], str] = {
    ("vllm_version", "logo"): "version_banner",
    ("vllm_version", "server"): "version_banner",
    ("vllm_version", "api_server"): "api_server_version",
    ("vllm_args", "non_default"): "non_default_args",
    ("vllm_engine_init", None): "engine_init",
    ("vllm_weights", None): "weights",
    ("vllm_load_time", None): "load_time",
    ("vllm_profile", "time"): "v0_profile",
    ("vllm_profile", "budget"): "v0_profile",
    ("vllm_profile", "terms"): "v0_profile",
    ("vllm_blocks", None): "blocks",
    ("vllm_kv_memory", None): "kv_memory",
    ("vllm_kv_memory", "fixed"): "kv_memory",
    ("vllm_kv_memory", "rounded"): "kv_memory",
    ("vllm_kv_tokens", None): "kv_tokens",
    ("vllm_concurrency", None): "concurrency",
    ("vllm_graph", None): "graph",
    ("vllm_init_engine", None): "init_engine",
}


@lru_cache(maxsize=1)
def line_numbers() -> dict[str, dict[str, list[list[str]]]]:
    """Appendix A of the vLLM catalogue (``grammars/vllm/line_numbers.json``, built by
    ``tools/build_vllm_line_numbers.py``): family -> ``file.py:N`` -> release ranges."""

    return tables.document("vllm/line_numbers.json")


def _family(ev) -> str | None:
    return _FAMILY_OF.get((ev.kind, ev.form)) or _FAMILY_OF.get((ev.kind, None))


def line_number_evidence(events) -> list[tuple[str, vv.Range]]:
    """The releases whose source has each key line at the ``[file.py:N]`` the log shows (a release prints
    a different N for almost every key line: catalogue Appendix A).  A line number no release has (a dev
    build, a patched image) says nothing."""
    out: list[tuple[str, vv.Range]] = []
    seen: set[tuple[str, str]] = set()
    table = line_numbers()
    for ev in events:
        family = _family(ev) if ev.kind.startswith("vllm_") else None
        if family is None:
            continue
        _, _, lp, _ = split_head(ev.text)
        loc = (lp.group("loc") or lp.group("bare_loc")) if lp is not None else None
        if not loc:
            continue
        loc = loc.rsplit("/", 1)[-1]
        ranges = table.get(family, {}).get(loc)
        if ranges is None or (family, loc) in seen:
            continue
        seen.add((family, loc))
        lo = min((r[0] for r in ranges), key=vv.index)
        hi = max((r[1] for r in ranges), key=vv.index)
        out.append((f"line number {loc} of '{family.replace('_', ' ')}'", (lo, hi)))
    return out
