"""The refactor's safety net itself: tools/contract.py (the public outputs recorded and compared)
and tools/assert_count.py (assertions per test, across moves)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import ROOT, SAMPLES

TOOLS = ROOT / "tools"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


contract = _load("contract")
assert_count = _load("assert_count")


# ------------------------------------------------------------------------------- contract.py


def _ts(s: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=UTC).timestamp()


def test_the_clock_paths_and_version_are_normalized_and_the_log_times_are_not():
    n = contract.Normalizer(
        {"/tmp/lp-contract-x1y2": "<tmp>"}, (_ts("2026-12-01T11:14:05"), _ts("2026-12-01T11:15:30")), "0.1.0"
    )
    doc = {
        "launch_id": "ab12",
        "started_at": "2026-11-29T07:42:22",
        "ingested_at": "2026-12-01T11:14:09.123456",
        "source": "/tmp/lp-contract-x1y2/samples/a.log",
        "sources": [{"updated_at": None, "logparse_version": "0.1.0"}],
        "kv_tokens": 20000,
    }
    got = json.loads(n.stdout(json.dumps(doc), "json"))
    assert got["started_at"] == "2026-11-29T07:42:22"  # from the log: kept
    assert got["ingested_at"] == "<now>" and got["sources"] == [{"updated_at": None, "logparse_version": "<version>"}]
    assert got["source"] == "<tmp>/samples/a.log" and got["kv_tokens"] == 20000
    text = n.text("generated 2026-12-01 11:16 UTC · started 2026-12-01 09:00:00 · logparse 0.1.0")
    assert text == "generated <now> · started 2026-12-01 09:00:00 · logparse <version>"


def _snapshot(out: Path, samples: Path) -> None:
    logparse = Path(sys.executable).parent / "logparse"
    cmd = [sys.executable, str(TOOLS / "contract.py"), "snapshot", str(out), "--samples", str(samples)]
    subprocess.run([*cmd, "--no-corpus", "--logparse", str(logparse)], check=True, capture_output=True)


def _compare(a: Path, b: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(TOOLS / "contract.py"), "compare", str(a), str(b)]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def two_snapshots(tmp_path_factory):
    """Two snapshots of this install over one sample of three launches, taken one after the other
    (other temporary directories, other ingest times)."""
    base = tmp_path_factory.mktemp("contract")
    samples = base / "samples"
    samples.mkdir()
    shutil.copy(SAMPLES / "sglang-0.5" / "restarts-0.5.12.log", samples)
    _snapshot(base / "a", samples)
    _snapshot(base / "b", samples)
    return base / "a", base / "b"


def test_two_snapshots_of_one_install_agree(two_snapshots):
    a, b = two_snapshots
    outputs = contract.outputs(a)
    assert {"store/ingest.txt", "store/metrics.txt", "store/report.html", "describe/launches.txt"} <= set(outputs)
    assert len([k for k in outputs if k.startswith("store/show/") and k.endswith(".json.txt")]) == 3
    assert len([k for k in outputs if k.startswith("store/diff/") and k.endswith(".json.txt")]) == 2
    sources = (a / "outputs" / "export" / "sources.rows.txt").read_text()
    assert '"ingested_at": "<now>"' in sources  # the ingest time differs between a and b: normalized
    res = _compare(a, b)
    assert res.returncode == 0, res.stdout
    assert "no difference in" in res.stdout


def test_compare_finds_a_changed_figure(two_snapshots, tmp_path):
    a, b = two_snapshots
    changed = tmp_path / "changed"
    shutil.copytree(b, changed)
    show = sorted((changed / "outputs" / "store" / "show").glob("*.json.txt"))[0]
    text = show.read_text()
    doc = json.loads(text.split("--- stdout\n", 1)[1])
    kv = doc["budget"]["kv_tokens"]
    assert kv is not None and f'"kv_tokens": {kv},' in text
    show.write_text(text.replace(f'"kv_tokens": {kv},', f'"kv_tokens": {kv + 1},'))
    res = _compare(a, changed)
    assert res.returncode == 1
    assert f"--- a/store/show/{show.name}" in res.stdout
    lines = res.stdout.splitlines()
    assert any(x.startswith("-") and f'"kv_tokens": {kv},' in x for x in lines)
    assert any(x.startswith("+") and f'"kv_tokens": {kv + 1},' in x for x in lines)
    assert res.stdout.rstrip().endswith(f"1 of {len(contract.outputs(a))} outputs differ")


# ------------------------------------------------------------------------------- assert_count.py

KNOWN = textwrap.dedent(
    """
    import pytest
    from pytest import raises as r
    from helpers import assert_accounted


    def helper():
        assert True  # not a test: not counted


    def test_plain():
        assert 1
        assert 2, "two"


    def test_raises_and_helpers(tmp_path):
        with pytest.raises(ValueError):
            int("x")
        with r(KeyError):
            {}["k"]
        pytest.warns(UserWarning, lambda: None)
        assert_accounted(None, 0)
        helper()  # a helper without "assert" in its name: not counted


    def test_nested():
        def check(x):
            assert x

        for i in range(3):
            check(i)


    class TestGroup:
        def test_method(self):
            self.assertEqual(1, 1)
            assert 3

        def not_a_test(self):
            assert 4


    def test_nothing():
        pass
    """
)


def test_assert_count_counts_a_known_file():
    got = {t.qualname: t.count for t in assert_count.tests_in(KNOWN, "tests/test_known.py")}
    assert got == {"test_plain": 2, "test_raises_and_helpers": 4, "test_nested": 1, "TestGroup::test_method": 2,
                   "test_nothing": 0}  # fmt: skip


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root / "tests"


def test_assert_count_follows_moves_and_reports_lost_and_vanished_tests(tmp_path, capsys):
    old = _tree(
        tmp_path / "old",
        {
            "tests/test_store.py": """
            def test_kept():
                assert 1
            def test_moved_by_name():
                assert 1; assert 2
            def test_renamed():
                assert 1
            def test_loses_one():
                assert 1; assert 2
            def test_dropped():
                assert 1
            """,
        },
    )
    new = _tree(
        tmp_path / "new",
        {
            "tests/test_store.py": "def test_kept():\n    assert 1\n",
            "tests/store/test_ingest.py": "def test_moved_by_name():\n    assert 1; assert 2\n"
            "def test_loses_one():\n    assert 1\n",
            "tests/store/test_merge.py": "def test_with_a_better_name():\n    assert 1; assert 2\n",
        },
    )
    move_map = tmp_path / "moves.txt"
    move_map.write_text(
        "# test_store was split\ntests/test_store.py -> tests/store/test_ingest.py tests/store/test_merge.py\n"
        "tests/test_store.py::test_renamed -> tests/store/test_merge.py::test_with_a_better_name\n"
    )
    assert assert_count.main(["compare", str(old), str(new), "--map", str(move_map)]) == 1
    out = capsys.readouterr().out
    assert "lost      tests/test_store.py::test_loses_one: 2 -> 1 assertion(s) (now tests/store/test_ingest.py" in out
    assert "vanished  tests/test_store.py::test_dropped (1 assertion(s))" in out
    assert "test_moved_by_name" not in out and "test_renamed" not in out and "test_kept" not in out
    assert "OLD 5 tests, 7 assertions; NEW 4 tests, 6 assertions; 4 matched (3 moved)" in out
    # without the map, the renamed test vanishes too
    assert assert_count.main(["compare", str(old), str(new)]) == 1
    assert "vanished  tests/test_store.py::test_renamed" in capsys.readouterr().out
