"""logparse: startup-log parser, KV-cache regression tracker and capacity planner for SGLang and vLLM.

Python API (imported lazily, so ``import logparse`` stays light)::

    import logparse
    result = logparse.parse("server.log")      # ParseResult (a path, or a list of paths)
    store = logparse.Store()                   # the history store (see logparse.store)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Store", "__version__", "parse", "resolve_launch"]

if TYPE_CHECKING:  # pragma: no cover
    from logparse.launches.model import ParseResult
    from logparse.store import Store
    from logparse.store.refs import resolve_launch


def parse(path_or_paths: Any, *, sglang_version: str | None = None, input_format: str | None = None) -> ParseResult:
    """Parse one log path (or a list of paths, directories, '-') into a ParseResult."""
    import os

    from logparse.pipeline import parse_paths

    paths = [path_or_paths] if isinstance(path_or_paths, (str, os.PathLike)) else list(path_or_paths)
    return parse_paths([os.fspath(p) for p in paths], input_format=input_format, sglang_version=sglang_version)


def __getattr__(name: str) -> Any:
    if name == "Store":
        from logparse.store import Store

        return Store
    if name == "resolve_launch":
        from logparse.store.refs import resolve_launch

        return resolve_launch
    raise AttributeError(f"module 'logparse' has no attribute {name!r}")
