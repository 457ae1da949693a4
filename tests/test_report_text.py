"""Reports of tests that feed lone surrogates reach the controller under pytest-xdist (``report_text.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from report_text import valid_utf8

#: Failing tests that put a lone surrogate in each part of a report: the assertion message, the
#: captured log, a user property; and a warning of a passing test.
INNER = """
import logging, warnings

def test_message():
    assert False, "not UTF-8: caf\\udce9"

def test_log():
    logging.getLogger("fuzz").warning("log caf\\udce9")
    assert False

def test_property(record_property):
    record_property("input", "caf\\ud800")
    assert False

def test_warning():
    warnings.warn("warned caf\\udce9")
"""


def test_valid_utf8_escapes_lone_surrogates_only():
    doc = {"k\udce9": ["caf\udce9", ("x\ud800y", 3)], "ok": "café ✓", "n": None}
    assert valid_utf8(doc) == {"k\\udce9": ["caf\\udce9", ("x\\ud800y", 3)], "ok": "café ✓", "n": None}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_surrogates_in_reports_do_not_kill_an_xdist_run(tmp_path):
    pytest.importorskip("xdist")
    (tmp_path / "conftest.py").write_text(
        "from report_text import pytest_report_to_serializable, pytest_warning_recorded  # noqa: F401\n"
    )
    (tmp_path / "test_inner.py").write_text(INNER)
    here = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1", "-rA", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=300,
    )
    out = ran.stdout + ran.stderr
    assert "INTERNALERROR" not in out, out[-3000:]
    assert "3 failed, 1 passed" in out, out[-3000:]
    assert ran.returncode == 1, out[-3000:]
    for shown in ("not UTF-8: caf\\udce9", "log caf\\udce9", "warned caf\\udce9"):
        assert shown in out, (shown, out[-3000:])
