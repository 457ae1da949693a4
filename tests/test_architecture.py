"""ARCHITECTURE.md states facts about the package: they are checked here, so the page stays true.

* every path it names in backquotes exists (a module of ``logparse/``, a folder, a file of the repository);
* its table of the engines' folders lists exactly the modules each engine's folder holds, with the
  engines that have each one;
* its sizes (modules and lines per folder) are the package's: modules exactly, lines within 5 %;
* the stages of its flow are those ``tests/test_layout.py`` ranks.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ROOT
from test_layout import STAGES

PAGE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
ENGINES = sorted(p.name for p in (ROOT / "logparse" / "engines").iterdir() if (p / "__init__.py").exists())

#: A backquoted path: a file with a suffix, or a folder ending in ``/``.
_PATH = re.compile(r"`([\w./<>*-]+(?:\.py|\.md|\.toml|\.lark|\.json|\.sql|/))(?:::\w+)?`")


def _section(title: str) -> str:
    start = PAGE.index(f"## {title}\n")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end > 0 else len(PAGE)]


def _table(section: str) -> list[list[str]]:
    rows = [ln for ln in section.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


def _exists(name: str) -> bool:
    """A name as the page writes it: a path from the repository's top, from ``logparse/`` or ``tests/``;
    ``<engine>`` stands for every engine; a bare file name is a module or data file of its stage's
    folder (found anywhere in ``logparse/`` or ``grammars/``)."""
    if "<name>" in name:  # a new engine's folder, which does not exist yet
        return True
    if "<engine>" in name:
        return all(_exists(name.replace("<engine>", e)) for e in ENGINES)
    if name.endswith("/") and any((base / name).is_dir() for base in (ROOT, ROOT / "logparse")):
        return True
    if "/" not in name.rstrip("/"):
        return any(any((ROOT / top).rglob(name)) for top in ("logparse", "grammars", "tests"))
    if "*" in name:
        return any(ROOT.glob(name)) or any((ROOT / "logparse").glob(name))
    bases = [ROOT, ROOT / "logparse", ROOT / "tests"]
    return any((base / name).exists() for base in bases)


def test_every_path_the_page_names_exists():
    named = {m.group(1) for m in _PATH.finditer(PAGE)}
    missing = sorted(n for n in named if not _exists(n))
    assert len(named) > 60, "the scanner sees the page's paths"
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def _engine_modules(engine: str) -> set[str]:
    return {p.name for p in (ROOT / "logparse" / "engines" / engine).glob("*.py") if p.name != "__init__.py"}


def test_the_engine_folders_table_is_every_engine_module():
    listed: dict[str, set[str]] = {}
    for cells in _table(_section("Each engine's folder")):
        names = re.findall(r"`([\w.]+\.py)`", cells[0])
        owners = {e.strip() for e in cells[2].split(",")}
        for name in names:
            listed[name] = owners
    actual: dict[str, set[str]] = {}
    for engine in ENGINES:
        for name in _engine_modules(engine):
            actual.setdefault(name, set()).add(engine)
    assert listed == actual


def test_both_engines_have_the_same_core_modules():
    """What one engine has and the other lacks is a listed extra; the core is shared by every engine."""
    core = set.intersection(*(_engine_modules(e) for e in ENGINES))
    assert {"prefix.py", "kinds.py", "line.py", "classify.py", "variants.py", "versions.py", "assemble.py"} <= core
    assert {"figures.py", "budget.py", "formula.py", "reserve.py", "plan.py", "advice.py", "explain.py"} <= core


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*.py") if "__pycache__" not in p.parts]
    return len(files), sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)


def test_the_sizes_it_states():
    rows = _table(_section("Sizes"))
    assert len(rows) >= 8
    for folder, modules, lines in rows:
        path = ROOT / re.sub(r"`([^`]+)`.*", r"\1", folder)
        n, total = _size(path)
        assert int(modules.replace(",", "")) == n, f"{folder}: {n} modules"
        stated = int(lines.replace(",", ""))
        assert abs(stated - total) <= 0.05 * total, f"{folder}: {total:,} lines, the page says {stated:,}"


def test_the_stages_of_the_flow_are_the_layout_s():
    flow = PAGE[PAGE.index("```\nbytes") : PAGE.index("```", PAGE.index("```\nbytes") + 3)]
    stages = re.findall(r"─► (\w+)", flow.splitlines()[1])
    ranked = [s for s in sorted(STAGES, key=STAGES.get) if STAGES[s] >= 0 and s != "__main__"]
    assert stages == ranked
    assert (
        f"through {_number_word(len(stages))}\nstages" in PAGE or f"through {_number_word(len(stages))} stages" in PAGE
    )


def _number_word(n: int) -> str:
    return ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"][n]


#: A backquoted path into the package or the tests: ``logparse/x/y.py``, ``tests/engines/…/test_x.py``.
_PACKAGE_PATH = re.compile(r"`((?:logparse|tests|grammars)/[\w./<>-]+?)(?:::\w+)?`")


def test_the_documentation_names_only_paths_that_exist():
    """README, CONTRIBUTING and docs/ name modules, tests and data files by path: each one exists."""
    missing = []
    for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in _PACKAGE_PATH.finditer(doc.read_text(encoding="utf-8")):
            if not _exists(m.group(1)):
                missing.append(f"{doc.name}: {m.group(1)}")
    assert not missing, missing
