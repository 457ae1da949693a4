"""The package as pip builds it: every package listed, the grammars of ``grammars/`` inside the wheel.

pyproject lists the packages by hand because ``grammars/`` (top level) is mapped to the package
``logparse.grammars``; these tests keep that list true and prove that an installed (not editable)
copy reads its grammars from inside itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import IN_CI

from logparse.store.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
GRAMMARS = {"pyliteral.lark"}
#: The declarative tables every engine shares (``logparse.data.tables`` reads them).
TABLES = {"noise.toml", "wrappers.toml", "figures.toml", "gpus.toml", "refusals.toml"}
#: Each engine's own data, in its folder of ``grammars/``.
ENGINE_DATA = {
    "sglang": {
        "line.lark",
        "variants.toml",
        "anchors.toml",
        "eras.toml",
        "runtime.toml",
        "versions.json",
        "server_args_defaults.json",
    },
    "vllm": {"line.lark", "variants.toml", "anchors.toml", "eras.toml", "runtime.toml", "line_numbers.json"},
}
#: The store's statements (``logparse.store.schema`` executes them).
SQL = {
    "tables_v1.sql",
    "tables_v2.sql",
    "launch_summary_v3.sql",
    "history_v3.sql",
    "launch_change_v9.sql",
    "pending_pieces_v10.sql",
    "launch_summary.sql",
    "history.sql",
    # the current version's tables, built from the migrations (the previous version's file goes)
    f"store_v{SCHEMA_VERSION}.sql",
}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_folders() -> set[str]:
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "logparse").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    return found | {"logparse.grammars"}


def test_the_package_list_is_every_package_folder():
    setuptools = _pyproject()["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _package_folders()
    assert setuptools["package-dir"] == {"logparse.grammars": "grammars"}


def test_the_grammars_are_at_the_top_and_nowhere_else():
    assert {p.name for p in (ROOT / "grammars").glob("*.lark")} == GRAMMARS
    assert not list((ROOT / "logparse").rglob("*.lark"))
    assert {p.name for p in (ROOT / "grammars").glob("*.toml")} == TABLES
    assert not list((ROOT / "logparse").rglob("*.toml"))
    assert {p.name for p in (ROOT / "grammars" / "sql").glob("*")} == SQL
    for engine, names in ENGINE_DATA.items():
        assert {p.name for p in (ROOT / "grammars" / engine).glob("*")} == names
    assert not list((ROOT / "logparse").rglob("*.json"))


def test_the_running_package_reads_the_top_level_grammars():
    from logparse.grammar.lalr import grammar_text

    assert grammar_text("sglang/line.lark") == (ROOT / "grammars" / "sglang" / "line.lark").read_text()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and not IN_CI and "network" in done.stderr.lower():
        pytest.skip("building a wheel needs setuptools from PyPI")  # pragma: no cover
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("logparse-*.whl")
    return built


def test_the_wheel_carries_the_grammars(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"logparse/grammars/{g}" for g in GRAMMARS | TABLES} <= names
    assert {f"logparse/grammars/{e}/{n}" for e, ns in ENGINE_DATA.items() for n in ns} <= names
    assert {f"logparse/grammars/sql/{q}" for q in SQL} <= names
    assert not any(n.startswith("grammars/") for n in names)


def test_an_installed_copy_parses_with_its_own_grammars(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
    )
    probe = (
        "import logparse, logparse.grammars as g; from logparse.engines.sglang import line as s;"
        "print(logparse.__file__); print(g.__file__);"
        "print(s.parse_line('[2026-03-01 14:03:22 TP0] Load weight begin. avail mem=77.31 GB'));"
        "from logparse.engines.sglang import variants; from logparse.engines.vllm import variants as vllm_variants; print(len(variants.VARIANTS), len(vllm_variants.VARIANTS));"
        "import duckdb; from logparse.store import schema; con = duckdb.connect(); schema.create_current(con);"
        "print(con.execute('SELECT count(*) FROM duckdb_views() WHERE NOT internal').fetchone()[0])"
    )
    env = {**os.environ, "PYTHONPATH": str(target), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    module, grammars, event, counts, views = done.stdout.splitlines()[:5]
    assert module.startswith(str(target)) and grammars.startswith(str(target))
    assert "load_begin" in event and "77.31" in event
    assert counts == "185 143"  # the variant tables, read from the installed copy
    assert views == "2"  # the store's schema, from the installed copy's SQL files
