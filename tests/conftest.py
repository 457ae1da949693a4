"""Fixtures shared by the test files. Plain helpers (paths, the corpus, running the CLI) are in
``helpers.py``, which test files import."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import SEED, TALLY, seed_line
from report_text import pytest_report_to_serializable, pytest_warning_recorded  # noqa: F401 (hooks)
from store_fixture import three_launches


def pytest_report_header(config):
    """The fuzz seed of this run (replay: LOGPARSE_FUZZ_SEED=N), or that the gate drew none."""
    return [seed_line()]


def pytest_collection_finish(session):
    """Under -q pytest prints no header: a seed (``make fuzz``) goes first anyway. The gate draws none:
    there is nothing to replay, and the README's command prints nothing more."""
    if SEED is None:
        return
    fuzzing = any(item.get_closest_marker("fuzz") is not None for item in session.items)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if fuzzing and reporter is not None and session.config.get_verbosity() < 0:
        reporter.write_line(seed_line())


def pytest_terminal_summary(terminalreporter):
    """The figures of this run's fuzzing: inputs parsed, inputs and launches read back; the seed."""
    if TALLY.tests:
        terminalreporter.write_line(TALLY.line())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Every failure of a fuzz test says which seed to replay, also in the short summary."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.get_closest_marker("fuzz") is not None:
        report.sections.append(("fuzz seed", seed_line()))


@pytest.fixture(scope="session", autouse=True)
def _no_user_store(tmp_path_factory):
    """No test reads or writes the user's history store: $LOGPARSE_DB is unset and the default
    store (``$XDG_DATA_HOME/logparse/history.duckdb``) is in an empty temporary directory; nor
    depends on the user's terminal ($COLUMNS, $LINES, $LOGPARSE_PAGER unset).
    Session-scoped: hypothesis refuses function-scoped fixtures around ``@given`` tests."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("LOGPARSE_DB", raising=False)
        mp.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        # tables are fitted to $COLUMNS when it is set: a test sets it itself (tests/test_tables.py)
        for name in ("COLUMNS", "LINES", "LOGPARSE_PAGER"):
            mp.delenv(name, raising=False)
        yield


@pytest.fixture
def db_path(tmp_path) -> Path:
    """A history store path that does not exist yet."""
    return tmp_path / "history.duckdb"


@pytest.fixture
def db(db_path) -> str:
    """The same, as a string (for ``--db`` and ``duckdb.connect``)."""
    return str(db_path)


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory) -> Path:
    """An empty store of the current schema version, created once per session (a new store replays
    every migration, about 0.2 s): a test that needs new stores and is not about creating or
    migrating one copies it (``helpers.copy_store``)."""
    from logparse.store.db import open_store

    path = tmp_path_factory.mktemp("empty-store") / "empty.duckdb"
    open_store(path, write=True, create=True).close()
    assert not path.with_name(path.name + ".wal").exists()  # the whole store is in the one file
    return path


@pytest.fixture
def store(db_path):
    """A ``Store`` on a new file (created on first write)."""
    from logparse.store import Store

    return Store(db_path, lock_timeout=5)


@pytest.fixture
def three(tmp_path) -> Path:
    """A log of three launches of one deployment (``store_fixture.three_launches``)."""
    path = tmp_path / "three.log"
    path.write_text(three_launches())
    return path


#: Test files whose tests ``--dist loadfile`` hands out one by one instead of as one unit: each of their
#: tests stands alone (no module-scoped fixture), and together they would be minutes on one worker.
SPREAD_FILES = frozenset({"tests/test_bad_stamps.py"})


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, except that the tests of :data:`SPREAD_FILES` are work units of their own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SpreadFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return nodeid if scope in SPREAD_FILES else scope

    return SpreadFileScheduling(config, log)


#: The longest files (a minute or more of one worker each, measured with ``--durations``), handed out
#: first: scheduled last, one of them alone would be the run's tail while the other worker idles.
#: Paths from the rootdir, as in node ids (two engines' test files may share a name).
LONGEST_FIRST = (
    "tests/test_store_order.py",
    "tests/test_watch.py",
    "tests/test_reliability.py",
    "tests/engines/sglang/test_bulk.py",
    "tests/test_one_truth.py",
    "tests/test_fuzz_readback.py",
    "tests/test_tools.py",
    "tests/test_fuzz.py",
    "tests/test_text_safety.py",
    "tests/test_bounds.py",
)


def pytest_collection_modifyitems(config, items):
    """The longest files first (:data:`LONGEST_FIRST`; the same order on every worker); ``slow``
    tests show as skipped unless the run selects them (``-m slow``)."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: each file keeps its order
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
