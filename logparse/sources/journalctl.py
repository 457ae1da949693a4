"""Running ``journalctl -o export --all`` and reading its output as a stream.

Export is the one rendering that loses nothing (binary-safe fields, no 4 KiB limit, no
``[blob data]``); ``--all`` keeps long fields.  A missing journalctl is one clear error;
a failing one (bad ``--since``, missing file) raises its first stderr line when its
output ends; its other stderr lines become the source's warnings.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from typing import IO

from logparse.sources.errors import InputError

_MISSING = "journalctl not found: install systemd or pass a saved rendering file"


def command(
    unit: str | None = None,
    since: str | None = None,
    until: str | None = None,
    directory: str | os.PathLike | None = None,
    file: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
    after_cursor: str | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """journalctl's argv for these filters (InputError when journalctl is missing)."""
    exe = shutil.which("journalctl")
    if exe is None:
        raise InputError(_MISSING)
    argv = [exe, "--no-pager", "-o", "export", "--all"]
    if unit:
        argv += ["-u", unit]
    if since:
        argv += ["--since", since]
    if until:
        argv += ["--until", until]
    if directory:
        argv += ["-D", os.fspath(directory)]
    if file:
        files = [file] if isinstance(file, (str, os.PathLike)) else list(file)
        for f in files:
            argv += ["--file", os.fspath(f)]
    if after_cursor:
        argv += ["--after-cursor", after_cursor]
    return argv + [str(a) for a in extra_args]


def display_name(argv: list[str]) -> str:
    """How the source is named to the user (its command line)."""
    return "journalctl " + " ".join(shlex.quote(a) for a in argv[1:])


class JournalctlProcess:
    """One run of journalctl: :meth:`start` gives its stdout, :meth:`finish` checks how it
    ended (after the last byte), :meth:`stop` ends it early (idempotent)."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.argv = argv
        self.proc: subprocess.Popen | None = None
        self._stderr: IO[bytes] | None = None

    def start(self) -> IO[bytes]:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (outlives this call: closed by close_stderr)
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr
            )
        except FileNotFoundError:
            raise InputError(_MISSING) from None
        except OSError as e:
            raise InputError(f"cannot run journalctl: {e}") from None
        assert self.proc.stdout is not None  # stdout=PIPE
        return self.proc.stdout

    def finish(self) -> list[str]:
        """Warnings (journalctl's stderr lines); InputError when it failed."""
        if self.proc is None:
            return []
        rc = self.proc.wait()
        err = self._stderr_text().strip()
        if rc != 0:
            first = err.splitlines()[0] if err else f"exit status {rc}"
            raise InputError(f"{self.name}: {first}")
        return [f"{self.name}: {line.strip()}" for line in err.splitlines() if line.strip()]

    def stop(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read(65536).decode("utf-8", "replace")
