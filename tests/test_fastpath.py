"""The fast paths agree with the grammar."""

from __future__ import annotations

import pytest
from helpers import CORPUS

from logparse.grammar.classify import PREFIX_RE, fast_batch
from logparse.grammar.sglang_line import parse_line
from logparse.grammar.variants import VARIANTS

BATCH_LINES = [v.sample for v in VARIANTS if v.kind in ("decode_batch", "prefill_batch") and v.sample.startswith("[")]
if CORPUS.is_dir():
    for p in sorted(CORPUS.glob("*/*.log")):
        BATCH_LINES += [
            l.rstrip("\n")
            for l in open(p, encoding="utf-8", errors="replace")
            if "] Decode batch" in l or "] Prefill batch" in l
        ][:20]


@pytest.mark.parametrize("line", BATCH_LINES)
def test_fast_batch_matches_grammar(line):
    m = PREFIX_RE.match(line)
    fast = fast_batch(line.rstrip(), m.end())
    slow = parse_line(line.rstrip())
    if fast is None:  # allowed: the grammar handles shapes the fast path does not know
        return
    assert fast[2] == slow[2]
    assert fast[0]["stamp"] == slow[0]["stamp"] and fast[0]["tags"] == slow[0]["tags"]
