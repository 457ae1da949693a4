"""Every known-noise pattern carries a sample that is classified as noise (lnav-style)."""

from __future__ import annotations

import pytest

from logparse.grammar.classify import NOISE, LineClassifier
from logparse.sources.records import Record


@pytest.mark.parametrize("entry", NOISE, ids=[n["name"] for n in NOISE])
def test_noise_sample(entry):
    clf = LineClassifier()
    res = clf.classify(Record(line_no=1, text=entry["sample"]))
    assert res.status == "noise", (entry["name"], res)
    assert res.reason == entry["category"]


def test_traceback_continuation_belongs_to_the_record():
    clf = LineClassifier()
    lines = [
        "[2025-07-02 10:00:20 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/x/scheduler.py", line 1, in run',
        "    scheduler = Scheduler(",
        "                ^^^^^^^^^^",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "",
        "[2025-07-02 10:00:21] Received sigquit from a child process. It usually means the child failed.",
    ]
    statuses = [clf.classify(Record(line_no=i, text=t)).status for i, t in enumerate(lines)]
    assert statuses == ["parsed", "noise", "noise", "noise", "parsed", "noise", "parsed"]


def test_warning_continuation():
    clf = LineClassifier()
    a = clf.classify(Record(line_no=1, text="/opt/x/site-packages/foo.py:12: UserWarning: something odd"))
    b = clf.classify(Record(line_no=2, text="  warnings.warn("))
    c = clf.classify(Record(line_no=3, text="  Example: a second line of the message"))
    assert (a.reason, b.reason, c.reason) == ("python_warning",) * 3


def test_unknown_line_is_kept_with_a_reason():
    res = LineClassifier().classify(Record(line_no=1, text="completely unknown text"))
    assert res.status == "unrecognized" and res.reason == "unknown line"


def test_near_miss_is_reported():
    res = LineClassifier().classify(Record(line_no=1, text="[2025-07-02 10:00:12] Memory pool end. avail mem=lots"))
    assert res.status == "unrecognized" and res.reason.startswith("near miss")


def test_interleaved_ranks_do_not_orphan_traceback_frames():
    clf = LineClassifier()
    lines = [
        "[2025-07-02 10:00:20 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/x/scheduler.py", line 1, in run',
        "[2025-07-02 10:00:20 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.37 GB",
        '  File "/x/model_runner.py", line 9, in init',
        "    self.init_memory_pool()",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    ]
    statuses = [clf.classify(Record(line_no=i, text=t)).status for i, t in enumerate(lines)]
    assert statuses == ["parsed", "noise", "parsed", "noise", "noise", "parsed"]
