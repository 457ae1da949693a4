"""The registry of engines (:mod:`logparse.engines`): every folder of ``logparse/engines/`` is an engine,
asked by name, by launch or as the default; what is derived from the engines follows them when one
comes or goes; and every engine's folder holds the same core modules.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from logparse import engines
from logparse.engines.base import Engine

PACKAGE = Path(engines.__file__).parent

#: The modules every engine's folder has (what SGLang's and vLLM's folders share today).
#: ``figures`` joins when SGLang's launch figures leave its assemble.py, as vLLM's did.
CORE = frozenset(
    {
        "prefix",
        "kinds",
        "line",
        "classify",
        "variants",
        "versions",
        "assemble",
        "figures",
        "line_startup",
        "line_memory",
        "line_runtime",
        "line_values",
        "kv",
        "budget",
        "formula",
        "reserve",
        "flags",
        "levers",
        "plan",
        "advice",
        "explain",
        "diff",
    }
)


def _folders() -> list[str]:
    """The folders of ``logparse/engines/`` that are packages (an ``__init__.py``)."""
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def _modules(folder: str) -> set[str]:
    return {m.name for m in pkgutil.iter_modules([str(PACKAGE / folder)])}


class _Probe(Engine):
    """An engine of the tests' own, registered and unregistered here."""

    name = "registry-probe"
    label = "Probe"
    runtime_kinds = frozenset({"probe_tick"})


@pytest.fixture
def probe():
    engine = engines.register(_Probe())
    try:
        yield engine
    finally:
        engines.unregister(_Probe.name)


# --------------------------------------------------------------------------- the folders are the engines
def test_every_engine_folder_is_a_registered_engine_of_its_name():
    folders = _folders()
    assert {"sglang", "vllm"} <= set(folders)
    for folder in folders:
        module = importlib.import_module(f"logparse.engines.{folder}")
        assert engines.get(folder) is module.ENGINE, folder
        assert module.ENGINE.name == folder and isinstance(module.ENGINE, Engine)


def test_every_engine_of_the_package_has_its_folder():
    ours = [e for e in engines.all() if type(e).__module__.startswith("logparse.engines.")]
    assert sorted(e.name for e in ours) == _folders()


def test_names_are_the_engines_in_the_order_they_are_asked():
    every = engines.all()
    assert engines.names() == tuple(e.name for e in every)
    assert every == sorted(every, key=lambda e: (e.claim_order, e.name))
    assert len(set(engines.names())) == len(every)


# --------------------------------------------------------------------------- get, find, of, default
def test_get_by_name_and_the_default_for_none():
    for name in engines.names():
        assert engines.get(name).name == name
    assert engines.get(None) is engines.get("") is engines.default()


def test_an_unknown_engine_is_an_error_that_names_the_known_ones():
    with pytest.raises(engines.UnknownEngine) as err:
        engines.get("tgi")
    assert isinstance(err.value, KeyError)
    said = str(err.value)
    assert said.startswith("unknown engine 'tgi': ")
    for name in engines.names():
        assert name in said


def test_find_is_get_without_the_error():
    assert engines.find("vllm") is engines.get("vllm")
    assert engines.find(None) is engines.default()
    assert engines.find("tgi") is None


def test_of_a_launch_reads_its_engine_attribute_or_key():
    vllm = engines.get("vllm")
    assert engines.of(SimpleNamespace(engine="vllm")) is vllm
    assert engines.of({"engine": "vllm"}) is vllm
    assert engines.of(SimpleNamespace(engine=None)) is engines.default()
    assert engines.of({}) is engines.default()
    assert engines.of(object()) is engines.default()
    with pytest.raises(engines.UnknownEngine):
        engines.of({"engine": "tgi"})


def test_exactly_one_engine_names_the_launches_that_name_none():
    unnamed = [e for e in engines.all() if e.names_unnamed]
    assert [e.name for e in unnamed] == ["sglang"]
    assert engines.default() is unnamed[0]


def test_register_refuses_a_second_default_a_taken_name_and_no_name():
    class SecondDefault(_Probe):
        name = "second-default"
        names_unnamed = True

    class Nameless(_Probe):
        name = ""

    before = engines.names()
    with pytest.raises(ValueError, match="only one engine"):
        engines.register(SecondDefault())
    with pytest.raises(ValueError, match="a name of its own"):
        engines.register(Nameless())
    with pytest.raises(ValueError, match="a name of its own"):
        engines.register(engines.get("vllm"))
    assert engines.names() == before


# --------------------------------------------------------------------------- what is derived follows the engines
def test_derived_tables_are_rebuilt_when_an_engine_comes_and_goes():
    assert "probe_tick" not in engines.kinds_of_every("runtime_kinds")
    engines.register(_Probe())
    try:
        assert "probe_tick" in engines.kinds_of_every("runtime_kinds")
        assert engines.get(_Probe.name).label == "Probe"
    finally:
        engines.unregister(_Probe.name)
    assert "probe_tick" not in engines.kinds_of_every("runtime_kinds")
    assert engines.find(_Probe.name) is None


def test_a_derived_function_is_computed_once_per_set_of_engines(probe):
    calls: list[tuple[str, ...]] = []

    @engines.derived
    def every_name() -> tuple[str, ...]:
        calls.append(engines.names())
        return engines.names()

    assert every_name() == every_name() and len(calls) == 1  # cached
    assert _Probe.name in every_name()
    engines.unregister(_Probe.name)
    assert _Probe.name not in every_name() and len(calls) == 2  # rebuilt once the engine went
    engines.register(_Probe())
    assert _Probe.name in every_name() and len(calls) == 3  # and once it came back


# --------------------------------------------------------------------------- one shape for every engine
def test_every_engine_folder_has_the_core_modules():
    modules = {folder: _modules(folder) for folder in _folders()}
    shared = set.intersection(*modules.values())
    assert shared >= CORE, f"not in every engine's folder: {sorted(CORE - shared)}"
    for folder, names in modules.items():
        assert not CORE - names, f"{folder} lacks {sorted(CORE - names)}"


def test_claim_names_the_engine_whose_line_begins_in_a_text():
    line = "[2026-11-29 08:08:20 TP1] Load weight begin. avail mem=21.02 GB"
    engine, at = engines.claim("node3: " + line)
    assert engine.name == "sglang" and at == len("node3: ")
    assert engines.claim(line) == (engines.get("sglang"), 0)
    assert engines.claim("a line of nobody's") is None
    # only a stamp's bracket: the start of a line when the whole prefix is not asked for
    assert engines.claim("x [2026-11-29 08:08:20 odd", exact=False) == (engines.get("sglang"), 2)
    assert engines.claim("x [2026-11-29 08:08:20 odd") is None
