#!/usr/bin/env python3
"""Count the assertions of every test, and check that none is lost when tests move.

    python tools/assert_count.py count [TREE] [--tests] [--json]
    python tools/assert_count.py compare OLD NEW [--map FILE] [--verbose]

A TREE is a directory of tests (default ``tests``) or a git revision (``main``, ``HEAD~3``, a
commit): its ``tests/`` is read from git without a checkout. A test is a function named ``test*``
at the top of a ``test_*.py`` / ``*_test.py`` file, or a method named ``test*`` of a class named
``Test*``; its id is ``FILE::NAME`` or ``FILE::CLASS::NAME``, FILE relative to the tree's parent
(``tests/test_store.py``). Its assertions, counted with ``ast`` over its whole body (functions
defined inside it included; a parametrized test counts once):

* every ``assert`` statement;
* every call of ``pytest.raises`` / ``pytest.warns`` (as a context manager or a call), also when
  imported bare (``raises(...)``);
* every call of a helper whose name starts with ``assert`` (``assert_accounted(...)``,
  ``self.assertEqual(...)``).

``compare`` matches each test of OLD with one of NEW, in this order: a test-level entry of the
move map; the same id; the same name (class and function) in a file the map moves OLD's file to;
the same function name anywhere in NEW when exactly one NEW test has it (else, among those, the one
whose file has OLD's file name). It reports every test that lost assertions, vanished (no match) or
matched ambiguously, and exits 1 when there is any.

The move map is a text file, one ``OLD -> NEW`` a line (``#`` comments): file moves
``tests/test_store.py -> tests/store/test_ingest.py tests/store/test_merge.py`` (the tests of the old
file are looked for by name in the new files) and test moves
``tests/test_store.py::test_a -> tests/store/test_merge.py::test_b``. A JSON object
``{"OLD": "NEW" or ["NEW", ...]}`` is read as well.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

RAISES = frozenset({"raises", "warns"})


@dataclass(frozen=True)
class Test:
    file: str  #: relative to the tree's parent: tests/test_x.py
    qualname: str  #: NAME or CLASS::NAME
    count: int

    @property
    def id(self) -> str:
        return f"{self.file}::{self.qualname}"

    @property
    def name(self) -> str:
        return self.qualname.rsplit("::", 1)[-1]


# ------------------------------------------------------------------------------- counting


def _call_name(call: ast.Call) -> tuple[str | None, str | None]:
    """(the object, the name) of a call: ``pytest.raises`` -> (pytest, raises), ``f`` -> (None, f)."""
    f = call.func
    if isinstance(f, ast.Attribute):
        return (f.value.id if isinstance(f.value, ast.Name) else None), f.attr
    if isinstance(f, ast.Name):
        return None, f.id
    return None, None


def count_assertions(fn: ast.AST, bare_raises: frozenset[str] = frozenset()) -> int:
    """``assert`` statements, pytest.raises/warns calls and ``assert*`` helper calls under ``fn``."""
    n = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            n += 1
        elif isinstance(node, ast.Call):
            owner, name = _call_name(node)
            if name is None:
                continue
            raises = (owner == "pytest" and name in RAISES) or (owner is None and name in bare_raises)
            n += raises or name.startswith("assert")
    return n


def _bare_raises(tree: ast.Module) -> frozenset[str]:
    """Names bound by ``from pytest import raises [as r]``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "pytest":
            out |= {a.asname or a.name for a in node.names if a.name in RAISES}
    return frozenset(out)


def tests_in(source: str, file: str) -> list[Test]:
    """The tests of one file's source text, with their assertion counts."""
    tree = ast.parse(source, filename=file)
    bare = _bare_raises(tree)
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            found.append(Test(file, node.name, count_assertions(node, bare)))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test"):
                    found.append(Test(file, f"{node.name}::{item.name}", count_assertions(item, bare)))
    return found


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def read_tree(tree: str) -> dict[str, str]:
    """{relative path: source} of the test files of a directory or of ``tests/`` at a git revision."""
    path = Path(tree)
    if path.is_dir():
        base = path.resolve().parent
        files = sorted(p for p in path.rglob("*.py") if is_test_file(p.name) and "/." not in str(p))
        return {str(p.resolve().relative_to(base)): p.read_text() for p in files}
    try:
        names = _git("ls-tree", "-r", "--name-only", tree, "--", "tests").split()
    except subprocess.CalledProcessError:
        sys.exit(f"assert_count: {tree}: neither a directory nor a git revision")
    return {n: _git("show", f"{tree}:{n}") for n in sorted(names) if is_test_file(n)}


def collect(tree: str) -> list[Test]:
    return [t for file, src in read_tree(tree).items() for t in tests_in(src, file)]


# ------------------------------------------------------------------------------- the move map


@dataclass
class MoveMap:
    files: dict[str, list[str]]
    tests: dict[str, str]


def read_map(path: str | None) -> MoveMap:
    mm = MoveMap({}, {})
    if path is None:
        return mm
    text = Path(path).read_text()
    pairs: list[tuple[str, list[str]]]
    if text.lstrip().startswith("{"):
        pairs = [(k, [v] if isinstance(v, str) else list(v)) for k, v in json.loads(text).items()]
    else:
        pairs = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if "->" not in line:
                sys.exit(f"assert_count: {path}:{n}: expected 'OLD -> NEW'")
            old, new = line.split("->", 1)
            pairs.append((old.strip(), new.split()))
    for old, new in pairs:
        if "::" in old:
            mm.tests[old] = new[0]
        else:
            mm.files.setdefault(old, []).extend(new)
    return mm


# ------------------------------------------------------------------------------- comparing


@dataclass
class Match:
    old: Test
    new: Test | None
    how: str  #: map, same, moved file, same name, ambiguous, gone


def _by_name(old: Test, candidates: list[Test]) -> Test | None:
    if len(candidates) == 1:
        return candidates[0]
    base = old.file.rsplit("/", 1)[-1]
    same_file_name = [t for t in candidates if t.file.rsplit("/", 1)[-1] == base]
    return same_file_name[0] if len(same_file_name) == 1 else None


def match(old: list[Test], new: list[Test], mm: MoveMap) -> list[Match]:
    by_id = {t.id: t for t in new}
    by_name: dict[str, list[Test]] = defaultdict(list)
    for t in new:
        by_name[t.name].append(t)
    out = []
    for t in old:
        if t.id in mm.tests:
            target = by_id.get(mm.tests[t.id])
            out.append(Match(t, target, "map" if target else "gone"))
        elif t.id in by_id:
            out.append(Match(t, by_id[t.id], "same"))
        elif moved := [by_id[f"{f}::{t.qualname}"] for f in mm.files.get(t.file, []) if f"{f}::{t.qualname}" in by_id]:
            out.append(Match(t, moved[0], "moved file" if len(moved) == 1 else "ambiguous"))
        elif found := _by_name(t, by_name.get(t.name, [])):
            out.append(Match(t, found, "same name"))
        else:
            out.append(Match(t, None, "ambiguous" if by_name.get(t.name) else "gone"))
    return out


def compare(old_tree: str, new_tree: str, map_path: str | None, verbose: bool) -> int:
    old, new = collect(old_tree), collect(new_tree)
    matches = match(old, new, read_map(map_path))
    lost = [m for m in matches if m.new is not None and m.how != "ambiguous" and m.new.count < m.old.count]
    gone = [m for m in matches if m.new is None or m.how == "ambiguous"]
    for m in lost:
        where = "" if m.how == "same" else f" (now {m.new.id})" if m.new else ""
        print(f"lost      {m.old.id}: {m.old.count} -> {m.new.count if m.new else 0} assertion(s){where}")
    for m in gone:
        why = (
            "several tests of NEW have its name: say which in the move map"
            if m.how == "ambiguous"
            else "no test of NEW has its name: add it to the move map"
        )
        print(
            f"{'ambiguous' if m.how == 'ambiguous' else 'vanished':<9} {m.old.id} ({m.old.count} assertion(s)): {why}"
        )
    if verbose:
        for m in matches:
            if m.new is not None and m.how not in ("same", "ambiguous"):
                print(f"moved     {m.old.id} -> {m.new.id} ({m.how}; {m.old.count} -> {m.new.count})")
    matched_new = {m.new.id for m in matches if m.new is not None}
    added = [t for t in new if t.id not in matched_new]
    moved = sum(1 for m in matches if m.new is not None and m.how not in ("same", "ambiguous"))
    print(
        f"OLD {len(old)} tests, {sum(t.count for t in old)} assertions; NEW {len(new)} tests, "
        f"{sum(t.count for t in new)} assertions; {len(matches) - len(gone)} matched ({moved} moved), "
        f"{len(added)} new, {len(lost)} lost assertions, {len(gone)} vanished or ambiguous"
    )
    return 1 if lost or gone else 0


def count(tree: str, per_test: bool, as_json: bool) -> int:
    tests = collect(tree)
    if as_json:
        print(json.dumps({t.id: t.count for t in tests}, indent=1))
        return 0
    per_file: dict[str, list[Test]] = defaultdict(list)
    for t in tests:
        per_file[t.file].append(t)
    for file, ts in per_file.items():
        print(f"{sum(t.count for t in ts):6d}  {len(ts):4d} tests  {file}")
        if per_test:
            for t in ts:
                print(f"{t.count:10d}  {t.qualname}")
    none = sum(1 for t in tests if t.count == 0)
    print(
        f"{sum(t.count for t in tests):6d}  {len(tests):4d} tests  in {len(per_file)} files ({none} without an assertion)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("count", help="assertions per file (or per test)")
    c.add_argument("tree", nargs="?", default="tests")
    c.add_argument("--tests", action="store_true", help="one line per test")
    c.add_argument("--json", action="store_true", help="{test id: count}")
    k = sub.add_parser("compare", help="tests of OLD that lost assertions or vanished in NEW")
    k.add_argument("old")
    k.add_argument("new")
    k.add_argument("--map", help="the move map (OLD -> NEW lines, or JSON)")
    k.add_argument("--verbose", action="store_true", help="also list the tests that moved")
    ns = ap.parse_args(argv)
    if ns.cmd == "count":
        return count(ns.tree, ns.tests, ns.json)
    return compare(ns.old, ns.new, ns.map, ns.verbose)


if __name__ == "__main__":
    sys.exit(main())
