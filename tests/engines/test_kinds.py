"""Each engine's ``kinds.py`` (``Kind``, a StrEnum) declares every kind its grammar emits.

Every ``[[variant]]`` sample of ``grammars/<engine>/variants.toml``, parsed with the engine's own
``parse_line`` (``logparse/engines/<engine>/line.py``), is an event of a declared kind, as is the kind
the table says it is; every kind the engine's transformer returns by name, and every kind the engine
tells the others about (``runtime_kinds``, ``opening_kinds``, ``start_args_kinds``), is declared too.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from enum import StrEnum
from importlib import resources
from pathlib import Path

import pytest

from logparse import engines

#: The engines of the package: the folders of ``logparse/engines/`` (a test's engine has no grammar).
FOLDERS = sorted(p.name for p in Path(engines.__file__).parent.iterdir() if (p / "__init__.py").is_file())
TOLD = ("runtime_kinds", "opening_kinds", "start_args_kinds")


def _kinds(folder: str) -> set[str]:
    kind = importlib.import_module(f"logparse.engines.{folder}.kinds").Kind
    assert issubclass(kind, StrEnum)
    assert engines.get(folder).event_kinds() is kind  # what the engine tells others is its module's
    return {member.value for member in kind}


def _variants(folder: str) -> list[dict]:
    text = resources.files("logparse.grammars").joinpath(folder, "variants.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["variant"]


def test_both_engines_are_checked():
    assert {"sglang", "vllm"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_variant_sample_parses_to_a_declared_kind(folder):
    parse_line = importlib.import_module(f"logparse.engines.{folder}.line").parse_line
    declared = _kinds(folder)
    table = _variants(folder)
    assert len(table) >= 100  # the whole table, not an empty read
    undeclared = []
    for variant in table:
        _, _, (kind, _, _) = parse_line(variant["sample"])
        undeclared += [(variant["name"], k) for k in (kind, variant["kind"]) if k not in declared]
    assert undeclared == []


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_kind_the_transformer_returns_by_name_is_declared(folder):
    """The message builders of the Transformer (``line.py`` and its ``line_*.py`` families) return
    ``(kind, fields, form)``: a kind written there as text is one the grammar emits, sample or not."""
    folder_path = Path(importlib.import_module(f"logparse.engines.{folder}.line").__file__).parent
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in sorted(folder_path.glob("line*.py"))]
    returned = {
        node.value.elts[0].value
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Tuple)
        and len(node.value.elts) == 3
        and isinstance(node.value.elts[0], ast.Constant)
        and isinstance(node.value.elts[0].value, str)
    }
    assert len(returned) >= 30
    assert sorted(returned - _kinds(folder)) == []


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_kinds_an_engine_tells_about_are_declared(folder):
    engine = engines.get(folder)
    declared = _kinds(folder)
    for attribute in TOLD:
        told = getattr(engine, attribute)
        assert isinstance(told, frozenset), attribute
        assert sorted(told - declared) == [], attribute


def test_some_engine_tells_of_each_kind_of_line():
    """The sets above are not all empty: the store and identity read them (SGLang's today)."""
    for attribute in TOLD:
        assert engines.kinds_of_every(attribute), attribute
