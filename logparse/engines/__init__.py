"""The registry of inference engines: every module outside ``logparse/engines/`` asks it, never a name.

Each folder of this package is one engine (``sglang/``, ``vllm/``): its package defines ``ENGINE``, an
:class:`~logparse.engines.base.Engine`.  The folders are found when the registry is first asked, so a
new engine is a new folder and nothing else; a test (or a plugin) may :func:`register` one more.

    engines.get("vllm")          # by name (a launch's ``engine`` column, ``--engine``)
    engines.of(launch)           # the engine of a launch (a launch that names none: the default's)
    engines.all()                # every engine, in the order they are asked about a line
    engines.names()              # their names, the same order
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any, TypeVar

from logparse.engines.base import Assembler, Claim, Classifier, Engine

__all__ = [
    "Assembler",
    "Claim",
    "Classifier",
    "Engine",
    "UnknownEngine",
    "all",
    "claim",
    "default",
    "derived",
    "get",
    "label",
    "labels",
    "names",
    "of",
    "register",
    "unregister",
]

_registry: dict[str, Engine] = {}
_found = False
#: what other modules derived from the registered engines (cleared when an engine comes or goes)
_derived: list[Any] = []

F = TypeVar("F", bound=Callable[..., Any])


def derived(fn: F) -> F:
    """Cache ``fn``'s result (something built from every engine: a pattern, a table) until an engine
    is registered or unregistered."""
    cached = functools.cache(fn)
    _derived.append(cached)
    return cached  # type: ignore[return-value]


def _changed() -> None:
    for cached in _derived:
        cached.cache_clear()


class UnknownEngine(KeyError):
    """A name no registered engine has."""

    def __str__(self) -> str:
        return f"unknown engine {self.args[0]!r}: {', '.join(names()) or 'none registered'}"


def _discover() -> None:
    """Register the engine of every folder of this package (once)."""
    global _found
    if _found:
        return
    _found = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.ispkg:
            module = importlib.import_module(f"{__name__}.{info.name}")
            register(module.ENGINE)


def register(engine: Engine) -> Engine:
    """Add an engine (a new name; one engine at most :attr:`~Engine.names_unnamed`)."""
    _discover()
    if not engine.name or engine.name in _registry:
        raise ValueError(f"engine {engine.name!r}: a name of its own is needed")
    if engine.names_unnamed and any(e.names_unnamed for e in _registry.values()):
        raise ValueError(f"engine {engine.name!r}: only one engine names the launches that name none")
    _registry[engine.name] = engine
    _changed()
    return engine


def unregister(name: str) -> None:
    """Remove an engine :func:`register` added (a test's engine)."""
    if _registry.pop(name, None) is not None:
        _changed()


def all() -> list[Engine]:
    """Every engine, in the order they are asked about a line (:attr:`~Engine.claim_order`, then name)."""
    _discover()
    return sorted(_registry.values(), key=lambda e: (e.claim_order, e.name))


def names() -> tuple[str, ...]:
    return tuple(e.name for e in all())


def default() -> Engine:
    """The engine of launches that name none (:attr:`~Engine.names_unnamed`)."""
    return next(e for e in all() if e.names_unnamed)


def get(name: str | None) -> Engine:
    """The engine called ``name``; None or empty: :func:`default`.  :class:`UnknownEngine` if none."""
    _discover()
    if not name:
        return default()
    try:
        return _registry[name]
    except KeyError:
        raise UnknownEngine(name) from None


def find(name: str | None) -> Engine | None:
    """The engine called ``name``, or None (no error) when there is none."""
    try:
        return get(name)
    except UnknownEngine:
        return None


@derived
def kinds_of_every(attribute: str) -> frozenset[str]:
    """The kinds an attribute of every engine names (``runtime_kinds``, ``opening_kinds``), together."""
    return frozenset().union(*(getattr(e, attribute) for e in all()))


@derived
def _line_starts() -> tuple[tuple[Engine, Any], ...]:
    return tuple((e, e.classifier().line_start) for e in all())


def claim(text: str, *, exact: bool = True) -> tuple[Engine, int] | None:
    """The engine one of whose lines begins in ``text`` (its prefix, perhaps after text glued in front:
    :meth:`~logparse.engines.base.Classifier.line_start`), and where; the first in claim order, or None.
    ``exact``: the engine's whole prefix must read there (else the start of its stamp is enough)."""
    for engine, start in _line_starts():
        at = start(text, exact)
        if at is not None:
            return engine, at
    return None


def of(launch: Any) -> Engine:
    """The engine of a launch (anything with an ``engine`` attribute or key)."""
    name = launch.get("engine") if isinstance(launch, dict) else getattr(launch, "engine", None)
    return get(name)


def labels(joiner: str = "or") -> str:
    """Every engine as a person names them, the default first: ``SGLang or vLLM``."""
    shown = sorted(all(), key=lambda e: (not e.names_unnamed, e.name))
    words = [e.label for e in shown]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {joiner} " + words[-1]


def label(name: str | None) -> str:
    """The engine as a person names it; a name no engine has is shown as it is."""
    engine = find(name)
    return engine.label if engine is not None else str(name)
