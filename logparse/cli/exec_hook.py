"""``watch --exec CMD``: the hook run per finished launch, whatever the launch's fields hold.

The block goes to the hook as JSON on stdin, exact (``\\u0000`` for a NUL, as JSON writes it), and
four of its values in the environment.  An environment variable (like an argument) cannot hold a
NUL: there a NUL is written as the four characters ``\\x00``; every other character is passed as it
is.  No value is ever part of the command line, so none can inject a command.

The hook runs in a session and process group of its own (``sh`` leads it): at ``--exec-timeout``
the whole group gets SIGTERM, and SIGKILL :data:`GRACE_S` seconds later if any of it is still
there, so a hook's children (``curl`` under ``sh``, a ``sleep`` it started) end with it.  A hook
that cannot be started, fails or times out costs one line on stderr; ``watch`` goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

#: Seconds the hook's process group has between SIGTERM and SIGKILL.
GRACE_S = 5.0


@dataclass
class HookResult:
    #: the hook's exit status (negative: the signal that ended it), None when it timed out or did not start
    returncode: int | None
    #: the last line the hook wrote to stderr, or why it did not start
    message: str = ""
    timed_out: bool = False


def hook_environment(block: dict[str, Any], base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (the environment of ``watch``) plus the block's ``LOGPARSE_*`` values (a NUL as ``\\x00``)."""
    la = block["launch"]
    values = {
        "LOGPARSE_LAUNCH_ID": la["launch_id"],
        "LOGPARSE_OUTCOME": la["outcome"],
        "LOGPARSE_DEPLOYMENT": la["deployment"],
        "LOGPARSE_CHECK": (block.get("check") or {}).get("status", ""),
    }
    env = dict(os.environ if base is None else base)
    env.update({k: str(v or "").replace("\0", "\\x00") for k, v in values.items()})
    return env


def hook_input(block: dict[str, Any]) -> bytes:
    """The block as JSON, ASCII (every other character escaped): the exact values."""
    return json.dumps(block, default=str).encode()


def run_hook(command: str, block: dict[str, Any], timeout: float) -> HookResult:
    """Run ``sh -c command`` with the block; its whole process group ends at ``timeout``."""
    try:
        proc = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=hook_environment(block),
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        return HookResult(None, f"could not start: {exc}")
    try:
        _, err = proc.communicate(hook_input(block), timeout=timeout)
    except subprocess.TimeoutExpired:
        end_group(proc)
        return HookResult(None, timed_out=True)
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return HookResult(proc.returncode, lines[-1] if lines else "")


def end_group(proc: subprocess.Popen, grace: float = GRACE_S) -> None:
    """SIGTERM to the process group ``proc`` leads, SIGKILL after ``grace`` seconds if any of it is
    left; ``proc`` reaped and its pipes closed."""
    group = proc.pid  # start_new_session: the hook's sh leads a group of its own id
    _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc.poll()  # reap sh once it has ended: a zombie still counts as a member
        if not _group_alive(group):
            break
        time.sleep(0.02)
    else:
        _signal_group(group, signal.SIGKILL)
    try:
        proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:  # a process that left the group holds the pipe
        for pipe in (proc.stdin, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


def _signal_group(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
