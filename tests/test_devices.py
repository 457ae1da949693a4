"""A device is no log: ``parse /dev/zero`` and ``ingest /dev/zero`` end at once with one line
(before: they read until killed); pipes and ``/dev/null`` are still read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import LOGPARSE, SAMPLES, cli, cli_env


@pytest.mark.parametrize("command", ["parse", "ingest"])
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_with_one_line(tmp_path: Path, command: str, device: str) -> None:
    res = cli(command, device, db=tmp_path / "h.duckdb")
    assert res.code == 2
    assert "a character device, not a log file" in res.err and res.err.count("\n") == 1


def test_stdin_redirected_from_a_device_is_refused() -> None:
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [*LOGPARSE, "parse", "-"], stdin=zero, capture_output=True, text=True, env=cli_env(), timeout=60
        )
    assert proc.returncode == 2 and "stdin: a character device" in proc.stderr


def test_dev_null_and_pipes_are_still_read() -> None:
    assert "0 lines" in cli("parse", "/dev/null").err + cli("parse", "/dev/null").out
    log = (SAMPLES / "vllm" / "v1-defaults-0.20.2.log").read_bytes()
    proc = subprocess.run([*LOGPARSE, "parse", "-"], input=log, capture_output=True, env=cli_env(), timeout=60)
    assert proc.returncode == 0 and b"meta/llama-3.1-8b" in proc.stdout
