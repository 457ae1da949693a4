"""The fast paths agree with the grammar."""

from __future__ import annotations

import pytest
from helpers import CORPUS, corpus_params

from logparse.engines.sglang.classify import PREFIX_RE, fast_batch
from logparse.engines.sglang.line import parse_line
from logparse.engines.sglang.variants import VARIANTS

BATCH_LINES = [v.sample for v in VARIANTS if v.kind in ("decode_batch", "prefill_batch") and v.sample.startswith("[")]


def _batch_lines(name: str) -> list[str]:
    """The first 20 batch lines of a corpus log."""
    with open(CORPUS / name, encoding="utf-8", errors="replace") as f:
        return [ln.rstrip("\n") for ln in f if "] Decode batch" in ln or "] Prefill batch" in ln][:20]


#: Batch lines of the genuine corpus; without it, one case skipped with the reason.
CORPUS_LINES = [
    line for name in corpus_params("*/*.log") for line in (_batch_lines(name) if isinstance(name, str) else [name])
]


@pytest.mark.parametrize("line", BATCH_LINES + CORPUS_LINES)
def test_fast_batch_matches_grammar(line):
    m = PREFIX_RE.match(line)
    fast = fast_batch(line.rstrip(), m.end())
    slow = parse_line(line.rstrip())
    if fast is None:  # allowed: the grammar handles shapes the fast path does not know
        return
    assert fast[2] == slow[2]
    assert fast[0]["stamp"] == slow[0]["stamp"] and fast[0]["tags"] == slow[0]["tags"]
