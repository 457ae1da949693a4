"""``logparse systemd-units``: ready systemd units for running logparse unattended.

* ``logparse-watch.service``: ``logparse watch --journal`` for SGLang's unit, restarted when it stops,
  keeping a Prometheus textfile (``--metrics``) current;
* ``logparse-ingest.service`` + ``logparse-ingest.timer``: the cron-style alternative, an
  ``ingest --journal`` every few minutes from the stored cursor, then ``metrics --output``.

The store lives under ``/var/lib/logparse`` for the system (``StateDirectory=logparse``), under
``$XDG_DATA_HOME/logparse`` (``~/.local/share/logparse``) for ``--user`` units.  Without ``--install``
the units are printed; with it they are written to ``/etc/systemd/system`` or
``~/.config/systemd/user`` and the commands that enable them are printed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer

from logparse.cli.app import EXIT_OK, EXIT_USAGE, app, fail


def _paths(user: bool) -> dict[str, str]:
    if user:
        data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "logparse"
        config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "systemd" / "user"
        return {"db": str(data / "history.duckdb"), "metrics": str(data / "logparse.prom"), "units": str(config)}
    return {
        "db": "/var/lib/logparse/history.duckdb",
        "metrics": "/var/lib/node_exporter/textfile_collector/logparse.prom",
        "units": "/etc/systemd/system",
    }


def _exe() -> str:
    found = shutil.which("logparse")
    if found:
        return found
    return f"{sys.executable} -m logparse"


def units(*, user: bool, unit: str, interval: str, exe: str | None = None) -> dict[str, str]:
    """File name -> content of the three units."""
    p = _paths(user)
    exe = exe or _exe()
    q = shlex.quote
    common = f"--db {q(p['db'])}"
    system_only = "" if user else "StateDirectory=logparse\nUser=root\n"
    wanted = "default.target" if user else "multi-user.target"
    watch = (
        "[Unit]\nDescription=logparse watch: SGLang launches into the history store as they happen\n"
        "After=network.target\n\n[Service]\nType=simple\n"
        f"{system_only}ExecStart={exe} watch --journal -u {q(unit)} {common} --metrics {q(p['metrics'])}\n"
        "Restart=on-failure\nRestartSec=10\nKillSignal=SIGTERM\nTimeoutStopSec=30\n"
        "MemoryMax=1G\nNice=10\n\n"
        f"[Install]\nWantedBy={wanted}\n"
    )
    ingest = (
        "[Unit]\nDescription=logparse ingest: new journal lines of SGLang into the history store\n\n"
        f"[Service]\nType=oneshot\n{system_only}"
        f"ExecStart={exe} ingest --journal -u {q(unit)} {common} -q\n"
        f"ExecStartPost={exe} metrics {common} --output {q(p['metrics'])}\nNice=10\n"
    )
    timer = (
        "[Unit]\nDescription=Run logparse ingest regularly (an alternative to logparse-watch.service)\n\n"
        f"[Timer]\nOnBootSec=2min\nOnUnitActiveSec={interval}\nPersistent=true\n\n"
        "[Install]\nWantedBy=timers.target\n"
    )
    return {"logparse-watch.service": watch, "logparse-ingest.service": ingest, "logparse-ingest.timer": timer}


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
    unit: str = typer.Option("sglang.service", "-u", "--unit", help="SGLang's systemd unit."),
    interval: str = typer.Option("5min", "--interval", help="How often the timer runs ingest."),
    directory: Optional[str] = typer.Option(None, "--dir", help="With --install: write the units here instead."),
) -> None:
    """Print (or --install) logparse-watch.service, and logparse-ingest.service + .timer as the cron-style alternative."""
    files = units(user=user, unit=unit, interval=interval)
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
