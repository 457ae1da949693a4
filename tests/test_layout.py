"""The package's layout, read from the source with ``ast`` (nothing is imported).

* no import cycles between modules of ``logparse`` (module-level and function-level imports alike;
  ``if TYPE_CHECKING:`` imports never run, and the root package's lazy API facade may import
  anything);
* no module imports (or reads as ``module._x``) a private name of another module, nor a private
  module from outside its package, and no ``except ImportError`` guards around the package's own
  modules;
* the pipeline stages import only downward:
  sources < grammar < launches < pipeline < budget < store < reports < cli;
* no function (method, nested function) is longer than ``MAX_FUNCTION_LINES``.

The cases that fail on the current code are ``xfail(strict=True)`` with the offending edges in the
reason (``KNOWN_*`` below): when a violation is fixed its case passes, strict xfail turns that into
a failure, and the entry is removed from ``KNOWN_*``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGE = "logparse"
PACKAGE_DIR = ROOT / PACKAGE

#: Rank of each stage: a module may import modules of its own stage or of a lower rank.
#: ``logparse.data`` (packaged data files) is below everything; ``logparse.__main__`` above cli.
STAGES = {
    "text": -1,
    "files": -1,
    "data": -1,
    "figures": -1,
    "spill": -1,
    "sglang_prefix": -1,
    "vllm_prefix": -1,
    "engines": -1,
    "sources": 0,
    "grammar": 1,
    "launches": 2,
    "pipeline": 3,
    "budget": 4,
    "store": 5,
    "reports": 6,
    "cli": 7,
    "__main__": 8,
}


@dataclass(frozen=True)
class Import:
    src: str  #: the importing module
    dst: str  #: the imported module of the package
    line: int
    lazy: bool  #: inside a function
    type_only: bool  #: under ``if TYPE_CHECKING:`` (never executed)
    name: str | None = None  #: for ``from M import name`` where name is not a submodule
    attribute: bool = False  #: not an import: ``alias.name`` on a module imported as ``alias``

    def __str__(self) -> str:
        what = f"{self.dst}.{self.name}" if self.name else self.dst
        if self.attribute:
            return f"{self.src}:{self.line} uses {what}"
        kind = " (type-only)" if self.type_only else " (in a function)" if self.lazy else ""
        return f"{self.src}:{self.line} -> {what}{kind}"


@dataclass(frozen=True)
class Guard:
    src: str
    line: int
    caught: str
    imports: tuple[str, ...]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


@cache
def native_modules() -> frozenset[str]:
    """The package's compiled extensions (``[tool.setuptools] ext-modules``: a ``.c`` file each),
    optional by design: a module may guard their import, and they import nothing of the package."""
    return frozenset(_module_name(p) for p in PACKAGE_DIR.rglob("*.c"))


def _is_package(mod: str) -> bool:
    return modules()[mod].name == "__init__.py"


def _resolve_relative(src: str, module: str | None, level: int) -> str:
    base = src.split(".")
    if not _is_package(src):
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _in_package(name: str) -> bool:
    return name == PACKAGE or name.startswith(PACKAGE + ".")


def _closest_module(name: str) -> str:
    """``logparse.a.b`` itself, else its longest prefix that is a module (``import a.b.c`` of a name)."""
    while name not in modules() and name not in native_modules() and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


class _Visitor(ast.NodeVisitor):
    def __init__(self, src: str) -> None:
        self.src = src
        self.imports: list[Import] = []
        self.attributes: list[Import] = []  #: ``alias._private`` where ``alias`` names a module
        self.guards: list[Guard] = []
        self.aliases: dict[str, str] = {}  #: local name -> module of the package it is bound to
        self._depth = 0  # functions entered
        self._type_only = 0  # TYPE_CHECKING blocks entered

    def _add(self, dst: str, line: int, name: str | None = None) -> None:
        self.imports.append(Import(self.src, dst, line, self._depth > 0, self._type_only > 0, name))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _in_package(alias.name):
                self._add(_closest_module(alias.name), node.lineno)
                if alias.asname:
                    self.aliases[alias.asname] = _closest_module(alias.name)
                else:
                    self.aliases[alias.name.split(".")[0]] = PACKAGE

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = _resolve_relative(self.src, node.module, node.level) if node.level else node.module or ""
        if not _in_package(base):
            return
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in modules():  # ``from logparse.x import y`` where y is a submodule
                self._add(sub, node.lineno)
                self.aliases[alias.asname or alias.name] = sub
            else:
                self._add(_closest_module(base), node.lineno, alias.name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """``dbm._short`` where ``dbm`` is a module of the package: a private name used from outside."""
        chain, value = [node.attr], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in self.aliases and _is_private(node.attr):
            module = self.aliases[value.id]
            for part in reversed(chain[1:]):  # ``logparse.store.db._short``: walk down the submodules
                module = f"{module}.{part}"
            lazy, type_only = self._depth > 0, self._type_only > 0
            if f"{module}.{node.attr}" in modules():  # a private submodule
                self.attributes.append(
                    Import(self.src, f"{module}.{node.attr}", node.lineno, lazy, type_only, None, True)
                )
            elif module in modules() and module != self.src:
                self.attributes.append(Import(self.src, module, node.lineno, lazy, type_only, node.attr, True))
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            self._type_only += 1
            for stmt in node.body:
                self.visit(stmt)
            self._type_only -= 1
            for stmt in node.orelse:
                self.visit(stmt)
        else:
            self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        caught = [
            name for h in node.handlers for name in _caught(h.type) if name in ("ImportError", "ModuleNotFoundError")
        ]
        if caught:
            inner = _Visitor(self.src)
            for stmt in node.body:
                inner.visit(stmt)
            own = tuple(str(i.dst) for i in inner.imports if i.dst not in native_modules())
            if own:
                self.guards.append(Guard(self.src, node.lineno, "/".join(caught), own))
        self.generic_visit(node)

    visit_TryStar = visit_Try


def _caught(expr: ast.expr | None) -> Iterator[str]:
    if expr is None:
        yield "BaseException"
    elif isinstance(expr, ast.Tuple):
        for e in expr.elts:
            yield from _caught(e)
    elif isinstance(expr, ast.Name):
        yield expr.id
    elif isinstance(expr, ast.Attribute):
        yield expr.attr


@cache
def _scan(mod: str) -> _Visitor:
    path = modules()[mod]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    aliases = _Visitor(mod)  # a first pass for the names imports bind, wherever they are
    aliases.visit(tree)
    visitor = _Visitor(mod)
    visitor.aliases = aliases.aliases
    visitor.visit(tree)
    return visitor


def imports_of(mod: str) -> list[Import]:
    return _scan(mod).imports


def _stage(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else None


#: The stage of each part of an engine (``logparse.engines.<engine>.<part>``): the part lives with
#: its engine, and imports as the stage it belongs to does.
ENGINE_PARTS = {
    "prefix": -1,
    "kinds": 1,
    "line": 1,
    "line_values": 1,
    "line_startup": 1,
    "line_memory": 1,
    "line_runtime": 1,
    "classify": 1,
    "variants": 1,
    "versions": 1,
    "bulk": 1,
    "bulk_blocks": 1,
    "bulk_native": 1,
    "_templates": 1,
    "bulk_classify": 1,
    "bulk_runtime": 1,
    "bulk_template": 1,
    "bulk_export": 1,
    "assemble": 2,
    "figures": 2,
    "ranks": 2,
    "kv": 4,
    "flags": 4,
    "budget": 4,
    "eras": 4,
    "formula": 4,
    "formula_inputs": 4,
    "reserve": 4,
    "plan": 6,
    "advice": 6,
    "levers": 6,
    "explain": 6,
    "sentences": 6,
    "diff": 6,
}


#: The engine protocol: the one module below every stage that names their types (type-only).
PROTOCOL = "logparse.engines.base"


def _engine_of(mod: str) -> str | None:
    """The engine a module belongs to (``logparse.engines.vllm.line`` -> ``vllm``), None outside engines."""
    parts = mod.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "engines" and parts[2] != "base" else None


def _is_engine_facade(mod: str) -> bool:
    """An engine's package (``logparse.engines.sglang``): its methods import its parts lazily."""
    return _engine_of(mod) is not None and len(mod.split(".")) == 3


def _rank(mod: str) -> int:
    parts = mod.split(".")
    if _engine_of(mod) is not None and len(parts) > 3:
        return ENGINE_PARTS[parts[3]]
    return STAGES[_stage(mod)]


# ---------------------------------------------------------------------------------------- cycles


def _runtime_edges() -> dict[str, set[str]]:
    """Edges that can execute: every import except ``if TYPE_CHECKING:`` ones, and except the
    lazy API facade of the root package (``logparse.parse``, ``logparse.Store``), which may
    import anything."""
    graph: dict[str, set[str]] = {m: set() for m in [*modules(), *native_modules()]}
    for mod in modules():
        for imp in imports_of(mod):
            if imp.type_only or (mod == PACKAGE and imp.lazy) or imp.dst == mod:
                continue
            graph[mod].add(imp.dst)
    return graph


@cache
def cycles() -> dict[str, list[str]]:
    """Each module on a cycle -> one shortest cycle through it (``[m, ..., m]``)."""
    graph = _runtime_edges()
    out: dict[str, list[str]] = {}
    for start in sorted(graph):
        # breadth-first search back to ``start``: the shortest cycle through it
        prev: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for node in frontier:
                for dst in sorted(graph[node]):
                    if dst == start:
                        found = node
                        break
                    if dst not in prev:
                        prev[dst] = node
                        nxt.append(dst)
                if found is not None:
                    break
            frontier = nxt
        if found is not None:
            path = [found]
            while path[-1] != start:
                path.append(prev[path[-1]])
            out[start] = [*reversed(path), start]
    return out


def _cycle_text(cycle: list[str]) -> str:
    edges = []
    for a, b in pairwise(cycle):
        lines = sorted({i.line for i in imports_of(a) if i.dst == b and not i.type_only})
        edges.append(f"{a}:{','.join(map(str, lines))} -> {b}")
    return "; ".join(edges)


#: Modules on an import cycle today (each with one of its cycles).
KNOWN_CYCLES: dict[str, str] = {}


def _cases(known: dict[str, str]) -> list:
    return [
        pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=known[m])) if m in known else m
        for m in sorted(modules())
    ]


@pytest.mark.parametrize("module", _cases(KNOWN_CYCLES))
def test_no_import_cycle(module):
    cycle = cycles().get(module)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}  ({_cycle_text(cycle)})"


# ------------------------------------------------------------------- private names, import guards


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(mod: str) -> list[Import]:
    """``from logparse.a import _b`` or ``a._b`` (a private name of another module), or a private
    module (``logparse.p._m``) imported from outside its package ``logparse.p``."""
    out = []
    for imp in imports_of(mod) + _scan(mod).attributes:
        if imp.dst == mod:
            continue
        if imp.name is not None and _is_private(imp.name):
            out.append(imp)
            continue
        parts = imp.dst.split(".")
        for i, part in enumerate(parts):
            owner = ".".join(parts[:i])
            if _is_private(part) and not (mod == owner or mod.startswith(owner + ".")):
                out.append(imp)
                break
    return out


#: Modules importing private names of other modules today.
KNOWN_PRIVATE: dict[str, str] = {}


@pytest.mark.parametrize("module", _cases(KNOWN_PRIVATE))
def test_no_private_names_across_modules(module):
    bad = private_imports(module)
    assert not bad, "private names imported from another module: " + "; ".join(map(str, bad))


#: Modules guarding imports of the package's own modules with ``except ImportError`` today.
KNOWN_GUARDS: dict[str, str] = {}


@pytest.mark.parametrize("module", _cases(KNOWN_GUARDS))
def test_no_import_error_guards_around_own_modules(module):
    bad = [f"{g.src}:{g.line} except {g.caught} around {', '.join(g.imports)}" for g in _scan(module).guards]
    assert not bad, "the package's own modules are always there: " + "; ".join(bad)


# ------------------------------------------------------------------------------------ stage order


def upward_imports(mod: str) -> list[Import]:
    if mod == PACKAGE:  # the root package may import anything lazily (its API facade)
        return [i for i in imports_of(mod) if not (i.lazy or i.type_only)]
    if _is_engine_facade(mod):  # an engine's facade: only light modules at its module level
        return [
            i
            for i in imports_of(mod)
            if not (i.lazy or i.type_only) and _stage(i.dst) is not None and _rank(i.dst) > -1
        ]
    rank = _rank(mod)
    out = []
    for imp in imports_of(mod):
        if mod == PROTOCOL and imp.type_only:  # the protocol names the types of every stage it speaks of
            continue
        target = _stage(imp.dst)
        if target is None:  # ``from logparse import __version__``: the root's module level is light
            continue
        if _rank(imp.dst) > rank:
            out.append(imp)
    return out


#: Modules importing a higher stage today.
KNOWN_UPWARD: dict[str, str] = {}


def test_every_module_has_a_stage():
    assert {_stage(m) for m in modules()} - {None} <= set(STAGES), "add the new stage to STAGES"


@pytest.mark.parametrize("module", _cases(KNOWN_UPWARD))
def test_stages_import_only_downward(module):
    bad = upward_imports(module)
    assert not bad, "imports of a higher stage: " + "; ".join(map(str, bad))


def test_the_scanner_sees_imports():
    """A guard against a scanner that silently finds nothing."""
    edges = {(i.src, i.dst) for m in modules() for i in imports_of(m)}
    assert len(modules()) > 20 and len(edges) > 50
    assert any(i.lazy for m in modules() for i in imports_of(m))
    assert ("logparse.pipeline", "logparse.grammar.classify") in edges


def test_the_scanner_on_a_snippet():
    code = (
        "from typing import TYPE_CHECKING\n"
        "from . import db\n"
        "from ..sources import lines\n"
        "import logparse.grammar.events\n"
        "if TYPE_CHECKING:\n"
        "    from logparse.cli import app\n"
        "def f():\n"
        "    from logparse.reports.diff import _durations\n"
        "    try:\n"
        "        import logparse.engines.sglang.formula as fm\n"
        "    except (ValueError, ModuleNotFoundError):\n"
        "        pass\n"
    )
    v = _Visitor("logparse.store")
    v.visit(ast.parse(code))
    got = {(i.dst, i.name, i.lazy, i.type_only) for i in v.imports}
    assert got == {
        ("logparse.store.db", None, False, False),
        ("logparse.sources.lines", None, False, False),
        ("logparse.grammar.events", None, False, False),
        ("logparse.cli.app", None, False, True),
        ("logparse.reports.diff", "_durations", True, False),
        ("logparse.engines.sglang.formula", None, True, False),
    }
    assert [(g.line, g.caught, g.imports) for g in v.guards] == [
        (9, "ModuleNotFoundError", ("logparse.engines.sglang.formula",))
    ]


def test_the_scanner_sees_private_attributes():
    code = (
        "import logparse.store.db\n"
        "from logparse.store import db as dbm, schema\n"
        "def f():\n"
        "    return dbm._short(1), logparse.store.db._connect, schema.SCHEMA_VERSION, dbm.__name__\n"
    )
    tree = ast.parse(code)
    first = _Visitor("logparse.store.ingest")
    first.visit(tree)
    v = _Visitor("logparse.store.ingest")
    v.aliases = first.aliases
    v.visit(tree)
    assert [(i.dst, i.name) for i in v.attributes] == [
        ("logparse.store.db", "_short"),
        ("logparse.store.db", "_connect"),
    ]


# ---------------------------------------------------------------------------------- function length

#: The longest a function may be, from its first decorator to its last line (docstring, comments and
#: blank lines included; a nested function counts in its own length and in its enclosing one's).
MAX_FUNCTION_LINES = 60


def function_lengths(tree: ast.AST) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function and method in ``tree``."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                assert child.end_lineno is not None
                yield f"{prefix}{child.name}", first, child.end_lineno - first + 1
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def long_functions(limit: int = MAX_FUNCTION_LINES) -> list[str]:
    out = []
    for mod, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name, line, length in function_lengths(tree):
            if length > limit:
                out.append(f"{mod}.{name} ({path.relative_to(ROOT)}:{line}): {length} lines")
    return out


def test_functions_fit_in_a_reader_s_head():
    bad = long_functions()
    assert not bad, f"functions longer than {MAX_FUNCTION_LINES} lines (split them into named steps): " + "; ".join(bad)


def test_function_lengths_on_a_snippet():
    code = (
        "@decorator\n"
        "def f():\n"
        "    def inner():\n"
        "        pass\n"
        "    return inner\n"
        "class C:\n"
        "    async def m(self):\n"
        "        if True:\n"
        "            def deep():\n"
        "                pass\n"
    )
    assert list(function_lengths(ast.parse(code))) == [
        ("f", 1, 5),
        ("f.inner", 3, 2),
        ("C.m", 7, 4),
        ("C.m.deep", 9, 2),
    ]
    assert long_functions(limit=10**6) == []
    assert len(long_functions(limit=1)) > 100  # the scanner sees the package's functions


# ------------------------------------------------------------------------------------------ engines


def engine_reach(mod: str) -> list[Import]:
    """Imports of an engine's own modules from outside that engine: only the registry and the
    protocol (``logparse.engines``, ``logparse.engines.base``) are for everyone."""
    own = _engine_of(mod)
    return [i for i in imports_of(mod) if _engine_of(i.dst) is not None and _engine_of(i.dst) != own]


@pytest.mark.parametrize("module", sorted(modules()))
def test_engines_are_reached_only_through_the_registry(module):
    bad = engine_reach(module)
    assert not bad, "an engine's module imported from outside it (ask logparse.engines): " + "; ".join(map(str, bad))


def test_every_engine_part_has_a_stage():
    parts = {m.split(".")[3] for m in modules() if _engine_of(m) is not None and len(m.split(".")) > 3}
    assert parts <= set(ENGINE_PARTS), (
        f"give these engine parts a stage in ENGINE_PARTS: {sorted(parts - set(ENGINE_PARTS))}"
    )


# ------------------------------------------------------------------------------- one loop

#: Who reads records: the sources make them, an engine's fast stage makes them in bulk (it yields
#: them to the loop), and the loop (``pipeline.parse``) is the one consumer.
_RECORD_MAKERS = ("logparse.sources", "logparse.engines.sglang.bulk")


def _loops_over_records(mod: str) -> list[str]:
    """The functions of ``mod`` that call ``.records()`` or feed a parser (``.feed(...)``), and the
    classes that subclass the parse loop's ``StreamParser``."""
    tree = ast.parse(modules()[mod].read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            (isinstance(b, ast.Name) and b.id == "StreamParser")
            or (isinstance(b, ast.Attribute) and b.attr == "StreamParser")
            for b in node.bases
        ):
            found.append(f"class {node.name}(StreamParser)")
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(node):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("records", "feed")
                and node.name != "parse"
            ):
                found.append(f"{node.name}() calls .{call.func.attr}()")
    return found


def test_one_loop_over_records():
    """``pipeline.parse`` is the only function that iterates records into the grammar: ``parse``,
    ``ingest`` and ``watch`` hear what they need through its hooks (issue 34)."""
    offenders = {
        mod: found for mod in modules() if not mod.startswith(_RECORD_MAKERS) and (found := _loops_over_records(mod))
    }
    assert offenders == {}


# ------------------------------------------------------------------------------- runtime labels

#: The one module that turns the runtime lines' spec (``grammars/<engine>/runtime.toml``) into code.
_RUNTIME_DECODER = "logparse.grammar.runtime_decoder"


@cache
def _runtime_labels() -> tuple[str, ...]:
    """What the spec spells: each family's first words (``Decode batch``) and each field's label."""
    from logparse.grammar import runtime_decoder

    out: set[str] = set()
    for engine in ("sglang", "vllm"):
        for family in runtime_decoder.families(engine):
            out.add(runtime_decoder.family_word(engine, family))
        out |= {f.label for s in runtime_decoder.shapes(engine) for f in s.fields}
    return tuple(sorted(out))


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def runtime_labels_spelled(mod: str) -> list[str]:
    """The string and bytes literals of ``mod`` (docstrings aside) that spell a runtime label of the
    spec as a pattern would (with its ``: ``; a table's heading, ``peak #running-req``, is output)."""
    if mod == _RUNTIME_DECODER:
        return []
    tree = ast.parse(modules()[mod].read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in skip:
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            found += [f"line {node.lineno}: {lab!r}" for lab in _runtime_labels() if lab in text]
    return found


#: Modules that still spell a runtime label (none since issue 34 item 2: each asks the decoder).
KNOWN_RUNTIME_LABELS: dict[str, str] = {}


@pytest.mark.parametrize("module", _cases(KNOWN_RUNTIME_LABELS))
def test_runtime_labels_come_from_the_spec(module):
    """A runtime line's words are written once, in ``grammars/<engine>/runtime.toml``: every module but
    the decoder asks :mod:`logparse.grammar.runtime_decoder` for them."""
    bad = runtime_labels_spelled(module)
    assert not bad, "runtime labels spelled outside the spec: " + "; ".join(bad)
