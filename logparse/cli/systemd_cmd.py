"""``logparse systemd-units``: ready systemd units for running logparse unattended.

* ``logparse-watch.service``: ``logparse watch --journal`` for the server's unit, restarted when it
  stops, keeping a Prometheus textfile (``--metrics``) current;
* ``logparse-ingest.service`` + ``logparse-ingest.timer``: the cron-style alternative, an
  ``ingest --journal`` every ``--interval`` from the stored cursor, then ``metrics --output``.

System units run as a dynamic user, never root (``DynamicUser=yes``, named ``logparse`` in both
services so they share the store), in the ``systemd-journal`` group that may read the system journal.
The store lives in ``StateDirectory=logparse`` (``/var/lib/logparse``, which systemd keeps private to
the service), the Prometheus file in ``RuntimeDirectory=logparse`` (``/run/logparse``, readable by
node_exporter, kept between runs), the grammar cache in ``CacheDirectory=logparse``.  ``--user``
units run as the user: the store under ``$XDG_DATA_HOME/logparse``.  The timer is monotonic
(``OnUnitActiveSec=`` after ``OnBootSec=``, as systemd.timer(5) documents: ``Persistent=`` only
applies to ``OnCalendar=``).  ``--interval`` is a systemd time span, checked with
``systemd-analyze timespan`` when it is installed, else with the same syntax (systemd.time(7)).
Without ``--install`` the units are printed; with it they are written to ``/etc/systemd/system`` or
``~/.config/systemd/user`` and the commands that enable them are printed.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_USAGE, app, fail, say

#: The system services' user: allocated by systemd while they run; one name for both services.
SYSTEM_USER = (
    "DynamicUser=yes\nUser=logparse\nGroup=logparse\nSupplementaryGroups=systemd-journal\n"
    "StateDirectory=logparse\nRuntimeDirectory=logparse\nRuntimeDirectoryMode=0755\nRuntimeDirectoryPreserve=yes\n"
    "CacheDirectory=logparse\nEnvironment=XDG_CACHE_HOME=/var/cache\n"
)


def _paths(user: bool) -> dict[str, str]:
    if user:
        data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "logparse"
        config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "systemd" / "user"
        return {"db": str(data / "history.duckdb"), "metrics": str(data / "logparse.prom"), "units": str(config)}
    return {
        "db": "/var/lib/logparse/history.duckdb",
        "metrics": "/run/logparse/logparse.prom",
        "units": "/etc/systemd/system",
    }


def _exe() -> list[str]:
    """The command that runs this logparse."""
    found = shutil.which("logparse")
    return [found] if found else [sys.executable, "-m", "logparse"]


def exec_arg(word: str) -> str:
    """One word of an ``Exec*=`` line as systemd reads it back (systemd.syntax(7) "Quoting"): a word
    with a space or a quote in double quotes (systemd quotes whole words only, so never shell-style
    ``'a'"'"'b'``), a backslash and a double quote escaped C-style, ``%`` and ``$`` doubled so that no
    specifier or variable expands.  ValueError for a control character, which no unit line can hold."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in word):
        raise ValueError(f"{word!r}: a control character cannot be written in a unit file")
    text = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{text}"' if not word or any(c.isspace() or c in "'\"" for c in word) else text


#: A unit name or a journalctl -u pattern (systemd.unit(5): letters, digits, ``:-_.\``, ``@`` of a
#: template instance; ``*?[]`` of a pattern).
_UNIT_NAME = re.compile(r"[A-Za-z0-9:_.@\\*?\[\]-]{1,255}")


def check_unit(unit: str) -> str:
    if not _UNIT_NAME.fullmatch(unit):
        raise fail(f"-u {unit!r}: not a systemd unit name (for example sglang.service)", EXIT_USAGE)
    return unit


# ---------------------------------------------------------------------------- time spans

#: systemd.time(7)'s time span units, in seconds (case matters: M is a month, m a minute).
SPAN_UNITS = {
    **dict.fromkeys(("usec", "us", "µs", "μs"), 1e-6),
    **dict.fromkeys(("msec", "ms"), 1e-3),
    **dict.fromkeys(("seconds", "second", "sec", "s", ""), 1.0),
    **dict.fromkeys(("minutes", "minute", "min", "m"), 60.0),
    **dict.fromkeys(("hours", "hour", "hr", "h"), 3600.0),
    **dict.fromkeys(("days", "day", "d"), 86400.0),
    **dict.fromkeys(("weeks", "week", "w"), 604800.0),
    **dict.fromkeys(("months", "month", "M"), 2629800.0),
    **dict.fromkeys(("years", "year", "y"), 31557600.0),
}
_SPAN_PART = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*([^\d\s.]*)")


def parse_timespan(text: str) -> float:
    """Seconds of a systemd time span (``5min``, ``1h 30min``, ``1.5h``, ``90``); ValueError if it is none."""
    pos, total, parts = 0, 0.0, 0
    while pos < len(text):
        m = _SPAN_PART.match(text, pos)
        if m is None or m.group(2) not in SPAN_UNITS or text.startswith(".", m.end(1)):  # 5.min, 1.5.5h
            if text[pos:].strip() == "":
                break
            raise ValueError(text)
        total += float(m.group(1)) * SPAN_UNITS[m.group(2)]
        pos, parts = m.end(), parts + 1
    if not parts:
        raise ValueError(text)
    return total


def timespan_seconds(text: str) -> float:
    """Seconds of a systemd time span, as systemd reads it (``systemd-analyze timespan``; without it,
    :func:`parse_timespan`).  ValueError if systemd would refuse it."""
    exe = shutil.which("systemd-analyze")
    if exe is None:
        return parse_timespan(text)
    try:
        res = subprocess.run([exe, "timespan", text], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return parse_timespan(text)
    found = re.search(r"μs:\s*(\d+)", res.stdout)
    if res.returncode != 0 or found is None:
        raise ValueError(text)
    return int(found.group(1)) / 1e6


def check_interval(text: str) -> str:
    """``--interval``, checked at the door: a finite systemd time span of at least a second."""
    try:
        seconds = timespan_seconds(text)
    except ValueError:
        raise fail(
            f"--interval {text!r}: not a systemd time span (for example 5min, 90s, 1h 30min; see systemd.time(7))",
            EXIT_USAGE,
        ) from None
    if not 1 <= seconds < 10 * 365 * 86400:
        raise fail(f"--interval {text!r}: give at least 1s and less than ten years", EXIT_USAGE)
    return " ".join(text.split())  # one line of the unit file, whatever the spaces given


# ---------------------------------------------------------------------------- units


def unreachable(path: str, *, run: bool = True) -> str | None:
    """Why a user other than the owner cannot run (``run``; else read) ``path``: a folder on the way not
    open to others, or the file not readable (and executable) by them; None when they can."""
    p = Path(path).resolve()
    for folder in reversed(p.parents):
        try:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return f"{folder} is not open to other users"
        except OSError as exc:
            return f"{folder}: {exc.strerror or exc}"
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        return f"{p}: {exc.strerror or exc}"
    need = stat.S_IROTH | (stat.S_IXOTH if run else 0)
    if mode & need != need:
        return f"{p} is not {'readable and executable' if run else 'readable'} by other users"
    return None


def units(*, user: bool, unit: str, interval: str, exe: list[str] | None = None) -> dict[str, str]:
    """File name -> content of the three units (ValueError for a path no unit file can hold)."""
    p = _paths(user)
    run = " ".join(exec_arg(w) for w in (exe or _exe()))
    common = f"--db {exec_arg(p['db'])}"
    journal = f"--journal -u {exec_arg(unit)} {common}"
    metrics_file = exec_arg(p["metrics"])
    runs_as = "" if user else SYSTEM_USER
    wanted = "default.target" if user else "multi-user.target"
    watch = (
        "[Unit]\nDescription=logparse watch: inference-server launches into the history store as they happen\n"
        "After=network.target\n\n[Service]\nType=simple\n"
        f"{runs_as}ExecStart={run} watch {journal} --metrics {metrics_file}\n"
        "Restart=on-failure\nRestartSec=10\nKillSignal=SIGTERM\nTimeoutStopSec=30\n"
        "MemoryMax=1G\nNice=10\n\n"
        f"[Install]\nWantedBy={wanted}\n"
    )
    ingest = (
        "[Unit]\nDescription=logparse ingest: new journal lines of the inference server into the history store\n\n"
        f"[Service]\nType=oneshot\n{runs_as}"
        f"ExecStart={run} ingest {journal} -q\n"
        f"ExecStartPost={run} metrics {common} --output {metrics_file}\nNice=10\n"
    )
    timer = (
        "[Unit]\nDescription=Run logparse ingest regularly (an alternative to logparse-watch.service)\n\n"
        f"[Timer]\nOnBootSec=2min\nOnUnitActiveSec={interval}\n\n"
        "[Install]\nWantedBy=timers.target\n"
    )
    return {"logparse-watch.service": watch, "logparse-ingest.service": ingest, "logparse-ingest.timer": timer}


def _note_unreachable(exe: str) -> None:
    """System units run as a dynamic user: say so if it cannot run this logparse (its command, its
    Python, its package: one under /root, say)."""
    import logparse

    why = unreachable(exe) or unreachable(sys.executable) or unreachable(logparse.__file__, run=False)
    if why:
        say(
            f"logparse systemd-units: note: the system units run as a dynamic user, not root, and {why}: "
            "install logparse where every user can run it (a venv under /opt, say)"
        )


def enable_commands(user: bool) -> list[str]:
    ctl = "systemctl --user" if user else "sudo systemctl"
    return [
        f"{ctl} daemon-reload",
        f"{ctl} enable --now logparse-watch.service",
        f"# or, instead of watch, every few minutes: {ctl} enable --now logparse-ingest.timer",
    ]


@app.command("systemd-units")
def systemd_units(
    user: bool = typer.Option(False, "--user", help="User units (store under XDG data home) instead of system units."),
    install: bool = typer.Option(False, "--install", help="Write the units where systemd reads them."),
    unit: str = typer.Option("sglang.service", "-u", "--unit", help="The server's systemd unit (SGLang or vLLM)."),
    interval: str = typer.Option("5min", "--interval", help="How often the timer runs ingest."),
    directory: Optional[str] = typer.Option(None, "--dir", help="With --install: write the units here instead."),
) -> None:
    """Print (or --install) logparse-watch.service, and logparse-ingest.service + .timer as the cron-style alternative."""
    try:
        files = units(user=user, unit=check_unit(unit), interval=check_interval(interval))
    except ValueError as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    if not user:
        _note_unreachable(_exe()[0])
    if not install:
        for name, text in files.items():
            typer.echo(f"# ---- {name}\n{text}")
        typer.echo("# enable with:\n" + "\n".join(enable_commands(user)))
        raise typer.Exit(EXIT_OK)
    target = Path(directory or _paths(user)["units"])
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (target / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"{target}: {exc.strerror or exc} (system units need root; or --user)", EXIT_USAGE) from None
    typer.echo(f"wrote {', '.join(files)} to {target}", err=True)
    typer.echo("\n".join(enable_commands(user)))
    raise typer.Exit(EXIT_OK)
