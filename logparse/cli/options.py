"""Options several commands share, checked at the door: a bad value is one line and exit 2 before
any work is done, and the same value means the same thing in every command.

* ``--sglang-version`` (``parse``, ``ingest``, ``watch``) and ``plan --release``: a release of the
  engine's list, read as pip reads versions (:mod:`logparse.launches.release_check`);
* ``--limit N``: N launches, 0 or more (0 lists none, as ``head -n 0`` and SQL's ``LIMIT 0``);
* ``--deployment TEXT``: one matching rule for every command
  (:func:`logparse.store.deployment_match`);
* shell completion of option values (formats, deployments, launch references) for typer's
  ``--install-completion``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Optional

import typer

from logparse import engines
from logparse.cli.app import EXIT_USAGE, fail, say


def engine_names() -> tuple[str, ...]:
    """The engines' names as ``--engine`` offers them: the default engine's first, then the others in
    the registry's order (``--engine both`` checks and plans them in this order)."""
    return tuple(e.name for e in sorted(engines.all(), key=lambda e: not e.names_unnamed))


def checked_release(engine: str, value: str | None, option: str, *, builds: bool = True) -> str | None:
    """``value`` as the release of ``engine`` it names (``v0.5.10-post1`` is ``0.5.10.post1``); an
    unknown release is one line naming the closest releases, exit 2.  ``builds``: a dev build
    between two releases is accepted too."""
    if value is None:
        return None
    from logparse.launches.release_check import UnknownRelease, check_release

    try:
        return check_release(engine, value, builds=builds)
    except UnknownRelease as exc:
        raise fail(f"{option} {exc}", EXIT_USAGE) from None


def plan_release(engine: str, value: str | None) -> str | None:
    """``plan --release``: a release of the planned engine (of both with ``--engine both``); the
    sizing code of a release is replayed, so a dev build is refused."""
    names = engine_names() if engine == "both" else (engine,) if engines.find(engine) is not None else ()
    for name in names:
        if engines.get(name).releases():  # an engine that lists no release takes any
            value = checked_release(name, value, "--release", builds=False)
    return value


def _sglang_version(ctx: typer.Context, value: Optional[str]) -> Optional[str]:
    if value is None or ctx.resilient_parsing:  # completing a command line: nothing is run
        return value
    return checked_release(engines.default().name, value, "--sglang-version")


def sglang_version_option():
    """``--sglang-version V``: the release the logs come from, when the user knows it (a release of the
    default engine, whose launches may name no release: the option is older than a second engine)."""
    default = engines.default()
    return typer.Option(
        None,
        "--sglang-version",
        callback=_sglang_version,
        autocompletion=complete_releases(default.name),
        help=f"The {default.label} release, if you know it (checked against the releases logparse knows).",
    )


def _limit(ctx: typer.Context, value: Optional[int]) -> Optional[int]:
    if value is not None and value < 0 and not ctx.resilient_parsing:
        raise fail(f"--limit {value}: give a number of launches, 0 or more (0 lists none)", EXIT_USAGE)
    return value


def limit_option():
    """``--limit N``: the newest N launches."""
    return typer.Option(None, "--limit", callback=_limit, help="Only the newest N launches (0 or more).")


def deployment_option():
    """``--deployment TEXT``: the same rule in every command (:func:`logparse.store.deployment_match`)."""
    return typer.Option(
        None,
        "--deployment",
        autocompletion=complete_deployments,
        help="Only this deployment: its whole name, or else any whose name contains TEXT (case ignored).",
    )


def undated_note(store, since: str | None, until: str | None, **filters: str | None) -> None:
    """Say how many launches ``--since``/``--until`` left out for having no start time."""
    if not (since or until):
        return
    n = store.undated(**filters)
    if n:
        say(f"note: {n} launch(es) without a start time left out by --since/--until (no time to compare)")


# ---------------------------------------------------------------------------- completion


def _matching(values: Iterable[str], incomplete: str) -> list[str]:
    return [v for v in values if v.startswith(incomplete)]


def complete_choices(values: Iterable[str]):
    """Complete an option from a fixed list (``--format``'s values)."""
    choices = tuple(values)

    def complete(incomplete: str) -> list[str]:
        return _matching(choices, incomplete)

    return complete


def complete_engines(incomplete: str) -> list[str]:
    """``--engine``: an engine's name, or ``both``."""
    return _matching((*engine_names(), "both"), incomplete)


def complete_releases(engine: str):
    """Complete a release of ``engine``, newest first."""

    def complete(incomplete: str) -> list[str]:
        from logparse.launches.release_check import release_list

        return _matching(reversed(release_list(engine)), incomplete)

    return complete


def _store_values(ctx: typer.Context, sql: str) -> list[str]:
    """Values read from the store the command line names (``--db``, $LOGPARSE_DB, the default),
    read-only; nothing when there is no store or it cannot be read (completion never fails)."""
    from logparse.store import db as dbm

    try:
        path = dbm.resolve_db_path(ctx.params.get("db") or None)
        if not path.exists():
            return []
        with dbm.connection(path, write=False, lock_timeout=1.0) as con:
            return [str(r[0]) for r in con.execute(sql).fetchall() if r[0] is not None]
    except Exception:  # completion is a convenience: a locked or damaged store completes nothing
        return []


def complete_deployments(ctx: typer.Context, incomplete: str) -> list[str]:
    """The store's deployments."""
    return _matching(_store_values(ctx, "SELECT DISTINCT deployment FROM launches ORDER BY 1"), incomplete)


#: The store references completion offers (:mod:`logparse.store.refs`).
STORE_REFS = ("@latest", "@-1", "@-2", "@-3")


def complete_plan_release(ctx: typer.Context, incomplete: str) -> list[str]:
    """``plan --release``: a release of the engine the command line names so far."""
    engine = engines.find(str(ctx.params.get("engine") or "").lower()) or engines.default()  # both: the default's
    return complete_releases(engine.name)(incomplete)


def complete_metrics(incomplete: str) -> list[str]:
    from logparse.store.changes import HISTORY_METRICS

    return _matching(HISTORY_METRICS, incomplete)


def complete_input_formats(incomplete: str) -> list[str]:
    from logparse.sources.sniff import FORMATS

    return _matching(("auto", *FORMATS), incomplete)


def complete_launch_refs(ctx: typer.Context, incomplete: str) -> list[str]:
    """A launch reference: ``@latest``, ``@-N`` and ``HOST@latest`` from the store.  Anything else
    completes nothing here, and the shell then completes file names (``complete -o default``)."""
    if incomplete.startswith("@"):
        return _matching(STORE_REFS, incomplete)
    if not incomplete or os.sep in incomplete or "." in incomplete:
        return []  # a file name: the shell's own completion
    hosts = _store_values(ctx, "SELECT DISTINCT host FROM launches ORDER BY 1")
    return _matching([f"{h}@latest" for h in hosts], incomplete)


#: Completion of each option's values, by its flag, in every command that has it.
OPTION_COMPLETION: dict[str, Callable[..., list[str]]] = {
    "--outcome": complete_choices(("ready", "failed", "incomplete")),
    "--engine": complete_engines,
    "--events": complete_choices(("startup", "all", "none")),
    "--axis": complete_choices(("auto", "time", "launch")),
    "--metric": complete_metrics,
    "--input-format": complete_input_formats,
    "--deployment": complete_deployments,
    "--release": complete_plan_release,
    "--baseline": complete_launch_refs,
    "--from": complete_launch_refs,
}
#: Arguments that take a launch reference, by parameter name (show, explain, diff, check).
LAUNCH_ARGUMENTS = frozenset({"launch", "launch_ref", "a", "b"})


def add_value_completion(typer_app: typer.Typer) -> None:
    """Give every option of :data:`OPTION_COMPLETION` and every launch argument its completion
    (``logparse --install-completion`` then completes ``--format j`` to ``json``, ``--deployment``
    to the store's deployments and ``show @`` to ``@latest``)."""
    import inspect

    from typer.models import ArgumentInfo, OptionInfo

    for command in typer_app.registered_commands:
        if command.callback is None:
            continue
        for param in inspect.signature(command.callback).parameters.values():
            info = param.default
            if not isinstance(info, (ArgumentInfo, OptionInfo)) or info.autocompletion is not None:
                continue
            if isinstance(info, ArgumentInfo):
                info.autocompletion = complete_launch_refs if param.name in LAUNCH_ARGUMENTS else None
                continue
            flag = next((d for d in info.param_decls or () if d in OPTION_COMPLETION), None)
            if flag is not None:
                info.autocompletion = OPTION_COMPLETION[flag]
