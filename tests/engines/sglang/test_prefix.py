"""SGLang's line prefix has one definition (logparse.engines.sglang.prefix), and every reader agrees.

The grammar (``grammars/sglang/line.lark``, rule ``prefix``) is the documented authority; the
classifier's fast path (``PREFIX_RE``) and the bulk path (``PREFIX_PATTERN``, run by
polars) are built from logparse.engines.sglang.prefix.  On every variant's sample and on one line
of each prefix era, the three must find the same stamp, the same tags (and level/location)
and the same start of the message.
"""

from __future__ import annotations

import re
from importlib import resources

import polars as pl
import pytest

from logparse.engines.sglang import bulk_blocks, bulk_classify
from logparse.engines.sglang import prefix as sglang_prefix
from logparse.engines.sglang.classify import PREFIX_RE, fast_batch
from logparse.engines.sglang.line import parse_line
from logparse.engines.sglang.variants import VARIANTS

#: One line of every prefix era (written by us).
ERA_SAMPLES = [
    "Init nccl begin.",  # 0.2.0-0.2.13: no prefix
    "[gpu=3] Init nccl begin.",  # the rank inside the message, not a prefix
    "[09:12:44 TP0] Init nccl begin.",  # 0.2.14-0.3.3.post1
    "[2025-04-02 09:12:44 TP5] Load weight begin. avail mem=77.31 GB",  # 0.3.4+
    "[2025-04-02 09:12:44] Load weight begin. avail mem=77.31 GB",  # single GPU, no tag
    "[2026-03-01 14:03:22.417 DP1 PP0 TP3 EP3] Memory pool end. avail mem=9.12 GB",  # SGLANG_LOG_MS
    "[2026-03-01 14:03:22.417123 TP1] Memory pool end. avail mem=9.12 GB",  # six digits
    "[2024-12-03 10:00:01 DP-1 TP1] Init torch distributed begin.",  # 0.3.6 single DP
    "[2026-02-05 08:00:00 ATTN_CP1 TP1] Init torch distributed begin.",
    "[2026-02-05 08:00:00 MOE_DP0 TP4 EP4] Init torch distributed begin.",
    "[2026-02-05 08:00:00 encode_server] Init torch distributed begin.",
    "[2026-02-05 08:00:00 encode_dp_worker[2]] Init torch distributed begin.",
    "[2026-03-21 03:30:04 TP0] INFO model_runner.py:412: Load weight begin. avail mem=51.20 GB",
    "[2026-03-21 03:30:04] WARNING srt/managers/scheduler.py:90: Memory pool end. avail mem=9.12 GB",
    "[2026-03-21 03:30:04 TP0] Decode batch. #running-req: 3, #token: 1200, token usage: 0.01, #queue-req: 0",
    "[2026-03-21 03:30:04 TP0] ERROR model_runner.py:7: Decode batch. #running-req: 3, #token: 12, #queue-req: 0",
    "Rank 2: Load weight begin. avail mem=30.50 GB",  # 0.1.x: the grammar's alone (no stamp)
    # builds and forks: another word in the bracket, before (or after) the rank tags
    "[2025-12-02 07:04:51 DisaggregationMode.DECODE TP1] Load weight begin. avail mem=77.10 GB",
    "[2025-12-02 07:04:51.250 DisaggregationMode.PREFILL DP0 TP3 EP3] Memory pool end. avail mem=9.12 GB",
    "[2025-12-02 07:04:51 prefill] KV Cache is allocated. #tokens: 52000, K size: 3.10 GB, V size: 3.10 GB",
    "[2025-12-02 07:04:51 TP0 node-7] Init torch distributed begin.",
    "[2025-12-02 07:04:51 TP2x] Init torch distributed begin.",  # not a tag: a word
    "[2025-12-02 07:04:51 decode TP0] Decode batch. #running-req: 3, #token: 1200, token usage: 0.01, #queue-req: 0",
]
SAMPLES = list(dict.fromkeys([v.sample for v in VARIANTS] + ERA_SAMPLES))


def grammar_prefix(line: str) -> tuple[dict, int] | None:
    """(prefix dict, message start) as the grammar reads them; None without a bracket prefix.

    The grammar's rule is ``"[" STAMP (" " (TAG | BRACKET_WORD))* "] " (LOG_LEVEL PYLOC ": ")?``:
    the text it consumed is rebuilt from its tokens (tags and words, in the line's order), and
    must be the start of the line."""
    prefix, _, _ = parse_line(line)
    if not prefix.get("stamp"):
        return None
    items = line[len(prefix["stamp"]) + 1 :].split("] ", 1)[0].split()
    assert sorted(items) == sorted(prefix["tags"] + prefix.get("words", [])), line
    assert [i for i in items if i in prefix["tags"]] == prefix["tags"], line
    consumed = "[" + prefix["stamp"] + "".join(" " + t for t in items) + "] "
    if "level" in prefix:
        consumed += f"{prefix['level']} {prefix['pyloc']}: "
    assert line.startswith(consumed), line
    return prefix, len(consumed)


def fast_path_prefix(line: str) -> tuple[dict, int] | None:
    m = PREFIX_RE.match(line)
    return None if m is None else (sglang_prefix.prefix_fields(m), m.end())


def bulk_prefixes(lines: list[str]) -> list[tuple[dict, int] | None]:
    """What the bulk path's polars pattern finds (the same named groups)."""
    s = pl.Series(lines)
    groups = s.str.extract_groups(bulk_classify.PREFIX_PATTERN).to_list()
    whole = s.str.extract(bulk_classify.PREFIX_PATTERN, 0).to_list()
    out: list[tuple[dict, int] | None] = []
    for g, w in zip(groups, whole):
        if w is None:
            out.append(None)
            continue
        tags, words = sglang_prefix.split_items(g["tags"])
        info = {"stamp": g["stamp"], "tags": tags}
        if words:
            info["words"] = words
        if g["level"] is not None:
            info.update(level=g["level"], pyloc=g["pyloc"])
        out.append((info, len(w)))
    return out


def test_samples_cover_every_era():
    found = [fast_path_prefix(s) for s in SAMPLES]
    tags = {t for f in found if f for t in f[0]["tags"]}
    assert {"TP0", "DP-1", "ATTN_CP1", "MOE_DP0", "encode_server", "encode_dp_worker[2]", "PP0", "EP3"} <= tags
    assert any(f and len(f[0]["stamp"]) == 8 for f in found)  # HH:MM:SS
    assert any(f and "." in f[0]["stamp"] for f in found)
    assert any(f and "level" in f[0] for f in found)
    assert any(f is None for f in found)
    words = {w for f in found if f for w in f[0].get("words", ())}
    assert {"DisaggregationMode.DECODE", "prefill", "node-7", "TP2x"} <= words


def test_grammar_fast_path_and_bulk_agree_on_every_sample():
    bulk_found = bulk_prefixes(SAMPLES)
    for line, from_bulk in zip(SAMPLES, bulk_found):
        want = grammar_prefix(line)
        assert fast_path_prefix(line) == want, line
        assert from_bulk == want, line


@pytest.mark.parametrize("line", [s for s in SAMPLES if "Decode batch" in s or "Prefill batch" in s])
def test_fast_batch_reports_the_grammars_prefix(line):
    m = PREFIX_RE.match(line)
    fast = fast_batch(line, m.end(), sglang_prefix.prefix_fields(m))
    if fast is not None:
        assert fast[0] == parse_line(line)[0]
    assert fast_batch(line, m.end()) == fast  # the prefix dict rebuilt from the line: the same


def test_bulk_classification_uses_the_same_prefix():
    """A prefixed line without anything tracked is counted in bulk; an unprefixed one goes
    to Python (the classifier).  The two decide "prefixed" alike."""
    heads = [line[: m.end()] for line in ERA_SAMPLES if (m := PREFIX_RE.match(line))]
    heads += ["", "[gpu=3] ", "Rank 2: ", "[2026-02-05 08:00:00 WORKER1] ", "[12:00 TP0] ", "[2026-02-05 08:00:00 TP0]"]
    lines = [head + "hello from the scheduler" for head in heads]
    res = bulk_blocks.classify_block("\n".join(lines).encode(), "plain", False)
    python_rows = set(res.py_rows)
    for i, line in enumerate(lines):
        assert (i in python_rows) == (PREFIX_RE.match(line) is None), line


# ---------------------------------------------------------------------------------------
# the grammar's terminals are the module's pieces, character for character


def _lark_terminal(name: str) -> str:
    """A terminal of sglang_line.lark as one Python regexp: ``/a/ | /b/`` -> ``a|b``, with
    capturing groups written non-capturing and ``\\/`` unescaped."""
    text = resources.files("logparse.grammars").joinpath("sglang", "line.lark").read_text()
    m = re.search(rf"^{name}: (.+)$", text, re.M)
    assert m, name
    alternatives = re.findall(r"/((?:[^/\\]|\\.)+)/", m.group(1))
    joined = "|".join(alternatives).replace("\\/", "/")
    return re.sub(r"\((?!\?)", "(?:", joined)


def test_module_pieces_are_the_grammars_terminals():
    assert _lark_terminal("STAMP") == sglang_prefix.STAMP
    # TAG carries a lookahead in the grammar (a tag is a whole item, else the item is a word);
    # the fast paths split the items with WORD and test each against TAG_RE (the same rule)
    assert _lark_terminal("TAG").replace("(?=[ \\]])", "") == sglang_prefix.TAG
    assert _lark_terminal("TAG").count("(?=[ \\]])") == 3
    assert _lark_terminal("BRACKET_WORD.-1") == sglang_prefix.WORD
    assert _lark_terminal("PYLOC") == sglang_prefix.PYLOC
    # LOG_LEVEL carries a lookahead in the grammar (its own token); the module's piece is the level
    assert _lark_terminal("LOG_LEVEL") == f"(?:{sglang_prefix.LOG_LEVEL}) (?={sglang_prefix.PYLOC}: )"


def test_prefix_rule_shape():
    """The grammar's prefix rule is the shape the module composes: bracket, tags, level_loc."""
    text = resources.files("logparse.grammars").joinpath("sglang", "line.lark").read_text()
    assert 'prefix: "[" STAMP tag* "] " level_loc?' in text
    assert 'tag: " " TAG' in text
    assert '| " " BRACKET_WORD' in text
    assert 'level_loc: LOG_LEVEL PYLOC ": "' in text
