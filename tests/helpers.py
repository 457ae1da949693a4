"""Shared test helpers: paths, the corpus, running the CLI. Plain functions, no side effects.

Fixtures (temporary stores, the store isolation every test gets) are in ``conftest.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
#: The genuine SGLang logs shared with the team; tests that use them skip when absent.
#: ``LOGPARSE_SHARED=/nowhere`` runs the suite as on a machine without them.
SHARED = Path(os.environ.get("LOGPARSE_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
NO_CORPUS = f"genuine corpus not available at {CORPUS}"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)


def without_corpus(purpose: str) -> None:
    """For a test that checked what it could without the corpus: in CI (``LOGPARSE_CI``) a missing
    corpus fails it, elsewhere the test is skipped with the reason (the part that needs the corpus)."""
    if CORPUS.is_dir():
        return
    if IN_CI:
        pytest.fail(f"{NO_CORPUS}: CI must {purpose}")
    pytest.skip(f"{NO_CORPUS}: not checked: {purpose}")


def corpus_files(pattern: str = "*/*.log", base: Path = CORPUS) -> list[Path]:
    """The corpus files matching ``pattern`` (relative to ``base``), sorted; [] without the corpus."""
    return sorted(base.glob(pattern)) if base.is_dir() else []


def corpus_params(pattern: str = "*/*.log", base: Path = CORPUS) -> list[Any]:
    """Parameters for ``@pytest.mark.parametrize`` over corpus files (paths relative to ``base``,
    as strings). Without the corpus, or when nothing matches, one case that is *skipped with a
    reason*, so that the test shows as skipped instead of vanishing from the run."""
    found = [str(p.relative_to(base)) for p in corpus_files(pattern, base)]
    if found:
        return found
    why = NO_CORPUS if not base.is_dir() else f"no corpus file matches {base / pattern}"
    return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=why))]


def assert_accounted(result, n_lines: int) -> None:
    """Every input line is parsed, noise, unrecognized or another unit's, and there are ``n_lines`` of them."""
    lc = result.lines
    assert lc.total == n_lines
    assert lc.parsed + lc.noise + lc.unrecognized + lc.other_units == n_lines


# ------------------------------------------------------------------------------------ the CLI


class CliResult(NamedTuple):
    code: int
    out: str  #: stdout
    err: str  #: stderr


def cli(*args: Any, db: str | Path | None = None) -> CliResult:
    """``logparse ARGS...`` in this process (typer's CliRunner). ``db`` is passed as $LOGPARSE_DB;
    without it the conftest's isolation applies (no $LOGPARSE_DB, an empty XDG_DATA_HOME)."""
    from typer.testing import CliRunner

    from logparse.cli import app

    env = {"LOGPARSE_DB": str(db)} if db is not None else None
    res = CliRunner().invoke(app, [str(a) for a in args], env=env)
    return CliResult(res.exit_code, res.stdout, res.stderr)


#: ``logparse`` as a command line, for subprocesses (crash tests, concurrency, stdin).
LOGPARSE = [sys.executable, "-m", "logparse"]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a ``logparse`` subprocess: this one's (the conftest's isolation included),
    Python warnings off, plus ``extra``."""
    # not the terminal of whoever runs the tests (pytest-xdist's workers may see one): a test that
    # wants a width or a pager sets it in ``extra``
    keep = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "LOGPARSE_PAGER")}
    return {**keep, "PYTHONWARNINGS": "ignore", **extra}


def cli_process(
    *args: Any, input: bytes | str | None = None, timeout: float = 300, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess:
    """``logparse ARGS...`` in a subprocess, output captured (bytes unless ``text=True``)."""
    return subprocess.run(
        [*LOGPARSE, *map(str, args)],
        input=input,
        capture_output=True,
        timeout=timeout,
        env=cli_env() if env is None else env,
        **kw,
    )


# --------------------------------------------------------------------------------- generated logs


def generate_logs(out: Path, lines: int, formats: str) -> Path:
    """Month-long synthetic journals from ``bench/generate.py`` in ``out``."""
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), "--lines", str(lines), "--out", str(out)]
        + ["--formats", formats],
        check=True,
        capture_output=True,
    )
    return out


def copy_store(empty: Path, path: Path) -> Path:
    """``path``: a copy of the conftest's ``empty_store`` (a new store without its migrations)."""
    import shutil

    shutil.copyfile(empty, path)
    return path


def write(directory: Path, name: str, text: str) -> Path:
    """``directory/name`` with ``text`` in it."""
    path = directory / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------------- a second process


class StoreHolder:
    """Another process holding a store with a real DuckDB connection (read-only by default, as
    ``query`` or ``report`` do) until :meth:`release`: a context manager."""

    def __init__(self, db: str | Path, *, read_only: bool = True) -> None:
        code = (
            "import duckdb, sys\n"
            f"con = duckdb.connect({str(db)!r}, read_only={read_only!r})\n"
            "print('holding', flush=True)\n"
            "sys.stdin.readline()\n"
            "con.close()\n"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "holding"

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.communicate("\n", timeout=30)

    def __enter__(self) -> StoreHolder:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


#: In CI (``.ci/run`` sets LOGPARSE_CI; other CI systems set CI) a test whose tool ``.ci/run`` installs
#: fails when the tool is missing, instead of skipping. Not CI itself: with CI set, hypothesis loads its
#: derandomized "ci" profile, which would change what the fuzz tests run.
IN_CI = bool(os.environ.get("LOGPARSE_CI") or os.environ.get("CI"))


def ci_tool(name: str, package: str, purpose: str) -> str:
    """The path of a program ``.ci/run`` installs: a test without it fails in CI and skips elsewhere."""
    import shutil

    import pytest

    exe = shutil.which(name)
    if exe is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed (Debian package {package}): CI must {purpose}")
        pytest.skip(f"{name} is not installed (Debian package {package})")
    return exe
