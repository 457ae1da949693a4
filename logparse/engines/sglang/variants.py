"""Every format variant SGLang prints: the table is data, ``grammars/sglang/variants.toml``.

Each entry: a name, the release range in which SGLang prints exactly that wording
(from the log catalogue), one sample line written by us in that format, and the
fields the sample must parse to.  ``tests/engines/sglang/test_variants.py`` walks the whole table,
so adding a variant is one entry plus its sample, in the TOML file.

The table also dates logs: a parsed event's *signature* (kind, wording form, field
names) is looked up here, and the ranges of the matching variants narrow the
launch's release range.  Runtime lines (batch statistics) and uvicorn lines are in
the table for testing but do not date a log (``dates = false``): their shapes overlap
across many releases.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

from logparse.engines.sglang import versions
from logparse.grammar.variant_table import Variant, load_variants, signature_names, wording_evidence

LAST = "0.5.23"

#: The table, in file order: ``grammars/sglang/variants.toml`` (one ``[[variant]]`` per wording).
VARIANTS: list[Variant] = load_variants("sglang/variants.toml", LAST)

#: Kinds whose wording does not date a log (their shapes overlap across many releases).
_UNDATED_KINDS = ("decode_batch", "prefill_batch", "retract", "uvicorn", "server_args")


def signature(kind: str, form: str | None, fields: dict[str, Any]) -> tuple:
    """What identifies a wording: kind, form, which fields are present, and graph names' style."""
    keys = frozenset(k for k in fields if k not in ("exception",))
    name = fields.get("name")
    style = None
    if isinstance(name, str):
        words = name.split()
        style = " ".join(
            "<dev>"
            if w.lower() in ("cuda", "cpu", "npu", "xpu", "musa", "hpu") and w.islower()
            else "<DEV>"
            if w.lower() in ("cuda", "cpu", "npu", "xpu", "musa", "hpu")
            else w
            for w in words
        )
    return (kind, form, keys, style)


@lru_cache(maxsize=1)
def _index() -> dict[tuple, list[Variant]]:
    """Signature -> variants, from parsing every sample (cached on disk next to lark's tables:
    parsing 150 samples costs a quarter of a second on every run otherwise)."""
    import pickle

    by_name = {v.name: v for v in VARIANTS}
    cache = _index_cache_path()
    if cache:
        try:
            with open(cache, "rb") as fh:
                return {sig: [by_name[n] for n in names] for sig, names in pickle.load(fh).items()}
        except (OSError, EOFError, KeyError, pickle.UnpicklingError, ValueError, TypeError):
            pass
    from logparse.engines.sglang.line import parse_line

    names = signature_names(VARIANTS, parse_line, signature)
    if cache:
        try:
            tmp = f"{cache}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                pickle.dump(names, fh)
            os.replace(tmp, cache)
        except OSError:
            pass
    return {sig: [by_name[n] for n in ns] for sig, ns in names.items()}


def _index_cache_path() -> str:
    """Keyed by the variant table and the grammar: a change to either rebuilds the index."""
    import hashlib

    from logparse.data.tables import cache_folder
    from logparse.grammar.lalr import grammar_text

    digest = hashlib.sha256(
        repr([(v.name, v.sample, v.dates) for v in VARIANTS]).encode() + grammar_text("sglang/line.lark").encode()
    ).hexdigest()[:16]
    return os.path.join(cache_folder(), f"variants-{digest}.pickle")


def match(kind: str, form: str | None, fields: dict[str, Any]) -> list[Variant]:
    return _index().get(signature(kind, form, fields), [])


def evidence_for_events(events, launch) -> list[tuple[str, tuple[str, str]]]:
    """Release ranges implied by the wording of a launch's lines (one item per distinct wording)."""
    out = wording_evidence(events, _dates_kind, signature, match, versions.index, _body)
    # The prefix of the lines: era of SGLang's logging format.
    prefixes = _prefix_evidence(events, launch)
    out.extend(prefixes)
    return out


def _dates_kind(kind: str) -> bool:
    return kind not in _UNDATED_KINDS


def _body(text: str) -> str:
    return text.split("] ", 1)[-1] if text.startswith("[") else text


_RANK_COLON_RE = re.compile(r"Rank \d+: ")


def _prefix_evidence(events, launch) -> list[tuple[str, tuple[str, str]]]:
    out = []
    texts = [e.text for e in events[:200]]
    if any(_RANK_COLON_RE.match(t) for t in texts):
        out.append(("rank prefix 'Rank N: '", ("0.1.3", "0.1.16")))
    if any(t.startswith("[gpu_id=") for t in texts):
        out.append(("rank inside the message ([gpu_id=N])", ("0.1.17", "0.2.6")))
    elif any(t.startswith("[gpu=") for t in texts):
        out.append(("rank inside the message ([gpu=N])", ("0.2.7", "0.2.13")))
    stamps = [e.ts for e in events if e.ts]
    bracketed = [t for t in texts if t.startswith("[") and not t.startswith("[gpu")]
    if bracketed:
        if all(len(t) > 11 and t[1:5].isdigit() and t[5] == "-" for t in bracketed):
            out.append(("date in the line prefix", ("0.3.4", versions.last())))
        elif all(t[3] == ":" for t in bracketed if len(t) > 3):
            out.append(("time-only line prefix [HH:MM:SS]", ("0.2.14", "0.3.3.post1")))
    if any(t.startswith("[") and len(t) > 24 and t[20] == "." and t[21:24].isdigit() for t in texts):
        out.append(("milliseconds in the line prefix (SGLANG_LOG_MS)", ("0.5.6", versions.last())))
    if any(e.dp_rank == -1 for e in events):
        out.append(("DP-1 rank tag", ("0.3.6", "0.3.6")))
    if any(e.attn_cp_rank is not None or e.moe_dp_rank is not None for e in events):
        out.append(("ATTN_CP/MOE_DP rank tag", ("0.5.9", versions.last())))
    sched = [e for e in events if e.kind in ("load_begin", "load_end", "kv_alloc", "pool_end")]
    if sched and launch.tp_size == 1 and all(not e.tagged for e in sched) and bracketed:
        out.append(("no rank tag on a single-GPU scheduler", ("0.4.6.post2", versions.last())))
    for e in events:
        if e.tagged and e.pp_rank is not None and e.text.startswith("["):
            head = e.text.split("]", 1)[0]
            if " TP" in head and " PP" in head:
                if head.index(" PP") < head.index(" TP"):
                    out.append(("PP tag before TP", ("0.5.5.post1", versions.last())))
                else:
                    out.append(("PP tag after TP", ("0.4.6.post2", "0.5.5")))
            break
    del stamps
    return out
