"""The source layer on the team's genuine corpus (skipped when ../shared is absent)."""

from __future__ import annotations

import re
import time

import pytest
from helpers import CORPUS, NO_CORPUS, corpus_files, corpus_params

from logparse.sources import open_inputs

RESTART = CORPUS / "journal" / "0.5.23-restart"

pytestmark = pytest.mark.skipif(not RESTART.is_dir(), reason=NO_CORPUS if not CORPUS.is_dir() else f"{RESTART} missing")

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cat_lines() -> list[str]:
    data = (RESTART / "cat.txt").read_bytes()
    return [ln.decode("utf-8", "replace") for ln in data.split(b"\n")[:-1]]


@pytest.mark.parametrize("name", [n for n in corpus_params("*.txt", RESTART) if n != "commands.txt"])
def test_every_rendering_gives_the_cat_texts(name):
    src = next(open_inputs([str(RESTART / name)]))
    records = list(src.records())
    texts = [r.text for r in records if not r.marker]
    cat = _cat_lines()
    assert len(texts) == len(cat)
    lost = 0
    stripped = name.startswith(("short", "with-unit")) and ".all" not in name
    for got, want in zip(texts, cat):
        if got is None:  # [NB blob data] / "MESSAGE":null: a documented loss
            lost += 1
            continue
        if stripped:  # short* without -a strip ANSI and expand tabs
            want = _ANSI.sub("", want).replace("\t", " " * 8)
        assert got == want
    problems = [r for r in records if r.text is None]
    assert len(problems) == lost
    assert all(r.problem for r in problems)
    if lost:
        assert len(src.warnings) == 1 and f": {lost} journal message" in src.warnings[0]
    if name != "cat.txt":
        recs = [r for r in records if not r.marker]
        assert {r.unit for r in recs} == {"sglang.service"}
        assert {r.pid for r in recs} == {1, 4669, 7329}
        assert {r.host for r in recs} <= {"vm", None}
        # the second launch is in the second boot
        assert len({r.boot for r in recs if r.pid == 7329}) == 1
        assert {r.boot for r in recs if r.pid == 7329} != {r.boot for r in recs if r.pid == 4669}


def test_short_infers_2026_and_matches_json_times():
    short = [r for r in next(open_inputs([str(RESTART / "short.txt")])).records() if not r.marker]
    json_ = list(next(open_inputs([str(RESTART / "json.all.txt")])).records())
    assert {time.gmtime(r.ts).tm_year for r in short} == {2026}
    assert [r.ts for r in short] == [float(int(r.ts)) for r in json_]
    assert all("year from the SGLang timestamp" in r.notes for r in short)


def test_genuine_logs_pass_through_untouched():
    logs = corpus_files("*/*.log")
    assert logs
    for path in logs:
        src = next(open_inputs([str(path)]))
        recs = list(src.records())
        lines = path.read_bytes().split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        assert src.fmt == "plain", path
        assert len(recs) == len(lines), path
        for r, ln in zip(recs, lines):
            assert r.text == ln.decode("utf-8", "replace") and r.fmt == "plain" and not r.notes, (path, r.line_no)
