"""Build genuine systemd journal files for tests, without a running journald.

The entries are written in the Journal Export Format (every ``MESSAGE`` in the
binary-safe ``NAME\\n<le64 length><bytes>\\n`` form), fed to the real
``systemd-journal-remote``, and the resulting ``.journal`` file is rendered by the
real ``journalctl --file``.  Tests that need this call :func:`require_tools` first,
which skips them when the systemd tools are not installed.
"""

from __future__ import annotations

import itertools
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Every rendering the source tests compare: name -> journalctl arguments.
RENDERINGS: dict[str, tuple[str, ...]] = {
    "short": ("-o", "short"),
    "short-precise": ("-o", "short-precise"),
    "short-iso": ("-o", "short-iso"),
    "short-iso-precise": ("-o", "short-iso-precise"),
    "short-full": ("-o", "short-full"),
    "short-unix": ("-o", "short-unix"),
    "short-monotonic": ("-o", "short-monotonic"),
    "with-unit": ("-o", "with-unit"),
    "cat": ("-o", "cat"),
    "json": ("-o", "json"),
    "json-seq": ("-o", "json-seq"),
    "json-pretty": ("-o", "json-pretty"),
    "export": ("-o", "export"),
    "verbose": ("-o", "verbose"),
    "short.no-hostname": ("-o", "short", "--no-hostname"),
    "short.all": ("-o", "short", "-a"),
    "json.all": ("-o", "json", "-a"),
}

RENDER_ENV = {"TZ": "UTC", "LC_ALL": "C.UTF-8"}


@dataclass(frozen=True)
class Entry:
    """One journal entry as journald would store a line of a service's output."""

    realtime_us: int
    boot: str  # 32 hex digits
    host: str
    unit: str  # _SYSTEMD_UNIT (for pid 1: the UNIT systemd talks about)
    ident: str  # SYSLOG_IDENTIFIER
    pid: int
    message: bytes
    priority: int = 6


def journal_remote() -> str | None:
    for d in ("/lib/systemd", "/usr/lib/systemd"):
        p = os.path.join(d, "systemd-journal-remote")
        if os.access(p, os.X_OK):
            return p
    return None


def require_tools() -> str:
    """Path of systemd-journal-remote, or skip the calling test."""
    jr = journal_remote()
    if jr is None:
        pytest.skip("systemd-journal-remote is not installed (apt-get install systemd-journal-remote)")
    if shutil.which("journalctl") is None:
        pytest.skip("journalctl is not installed (apt-get install systemd)")
    return jr


def _field(name: str, value: str | bytes) -> bytes:
    v = value.encode() if isinstance(value, str) else value
    if b"\n" in v or any(c < 32 and c != 9 for c in v):
        return name.encode() + b"\n" + struct.pack("<Q", len(v)) + v + b"\n"
    return name.encode() + b"=" + v + b"\n"


def export_stream(entries: list[Entry]) -> bytes:
    """The entries in Journal Export Format; MESSAGE always in the binary-safe form."""
    boot_start: dict[str, int] = {}
    out = bytearray()
    for e in entries:
        t0 = boot_start.setdefault(e.boot, e.realtime_us)
        mono = 5_000_000 + e.realtime_us - t0  # each boot "started" 5 s before its first entry
        out += _field("__REALTIME_TIMESTAMP", str(e.realtime_us))
        out += _field("__MONOTONIC_TIMESTAMP", str(mono))
        out += _field("_BOOT_ID", e.boot)
        out += _field("_HOSTNAME", e.host)
        if e.pid == 1:  # systemd itself, talking about the unit
            out += _field("_SYSTEMD_UNIT", "init.scope")
            out += _field("UNIT", e.unit)
            out += _field("_TRANSPORT", "journal")
        else:
            out += _field("_SYSTEMD_UNIT", e.unit)
            out += _field("_TRANSPORT", "stdout")
        out += _field("_COMM", e.ident)
        out += _field("_PID", str(e.pid))
        out += _field("SYSLOG_IDENTIFIER", e.ident)
        out += _field("PRIORITY", str(e.priority))
        out += b"MESSAGE\n" + struct.pack("<Q", len(e.message)) + e.message + b"\n"
        out += b"\n"
    return bytes(out)


def build_journal(entries: list[Entry], directory: Path) -> Path:
    """Write ``directory/test.journal`` with the real systemd-journal-remote."""
    jr = require_tools()
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / "test.journal"
    if out.exists():
        out.unlink()
    proc = subprocess.run(
        [jr, f"--output={out}", "-"],
        input=export_stream(entries),
        capture_output=True,
        timeout=60,
    )
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"systemd-journal-remote failed: {proc.stderr.decode(errors='replace')}")
    return out


def render(journal: Path, *args: str) -> bytes:
    """Output of the real ``journalctl --file JOURNAL ARGS`` with TZ=UTC, LC_ALL=C.UTF-8."""
    env = dict(os.environ, **RENDER_ENV)
    proc = subprocess.run(
        ["journalctl", "--no-pager", "--file", str(journal), *args],
        capture_output=True,
        env=env,
        timeout=60,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"journalctl {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def render_all(journal: Path, out_dir: Path | None = None) -> dict[str, bytes]:
    """Every rendering in :data:`RENDERINGS`; also written to ``out_dir/<name>.txt`` if given."""
    result = {}
    for name, args in RENDERINGS.items():
        data = render(journal, *args)
        result[name] = data
        if out_dir is not None:
            (out_dir / f"{name}.txt").write_bytes(data)
    return result


# ------------------------------------------------------------------ a journal of two sample logs

BOOT_A, BOOT_B = "a" * 31 + "1", "b" * 31 + "2"
UNIT1, UNIT2 = "sglang.service", "sglang-small.service"


def _split_launches(text: str) -> list[list[str]]:
    out, cur = [], []
    for line in text.splitlines():
        if "server_args=" in line and any("server_args=" in ln for ln in cur):
            out.append(cur)
            cur = []
        cur.append(line)
    out.append(cur)
    return out


def two_units() -> list[Entry]:
    """Two sample logs as journald stores them, one entry per line: the three launches of
    ``restarts-0.5.12.log`` in ``sglang.service`` (a new pid per start, a reboot before the third)
    and ``llama-0.5.9-dataclass.log`` in a second unit whose lines are interleaved with the first."""
    from helpers import SAMPLES

    restarts = (SAMPLES / "sglang-0.5/restarts-0.5.12.log").read_text()
    small = (SAMPLES / "sglang-0.5/llama-0.5.9-dataclass.log").read_text()
    t = 1_780_000_000_000_000
    entries: list[Entry] = []
    unit1 = []
    for i, block in enumerate(_split_launches(restarts)):
        boot = BOOT_A if i < 2 else BOOT_B
        unit1.append(Entry(0, boot, "gpu-node-2", UNIT1, "systemd", 1, f"Started {UNIT1} - SGLang.".encode()))
        unit1 += [Entry(0, boot, "gpu-node-2", UNIT1, "python3", 7000 + i, line.encode()) for line in block]
    unit2 = [Entry(0, BOOT_A, "gpu-node-2", UNIT2, "python3", 9100, line.encode()) for line in small.splitlines()]
    # Interleave the second unit into the first boot, keep time order.
    n_boot_a = sum(1 for e in unit1 if e.boot == BOOT_A)
    merged = []
    a_entries, b_entries = unit1[:n_boot_a], unit1[n_boot_a:]
    for x, y in itertools.zip_longest(a_entries, unit2):
        merged += [e for e in (x, y) if e is not None]
    merged += b_entries
    for e in merged:
        t += 50_000
        entries.append(Entry(t, e.boot, e.host, e.unit, e.ident, e.pid, e.message))
    return entries
