"""The declarative tables of ``grammars/`` (package ``logparse.grammars``), read once per process.

A table is a TOML file of entries (lnav's format files are the model): each entry is data, a name,
a sample line, its typed fields, a release range, never code.  This module only reads the files
(``tomllib``, ``importlib.resources``, as :mod:`logparse.grammar.lalr` reads the ``.lark`` files);
the module that owns a table turns its entries into its own types (e.g.
:func:`logparse.grammar.variant_table.load_variants`).  The store's statements are ``.sql`` files
(``grammars/sql/``), read as text by :func:`sql`; an engine's JSON data (releases, argument defaults),
built by ``tools/``, by :func:`document`.

Parsing a table with ``tomllib`` costs about 10 ms, on every command that dates a log: the parsed
table is kept on disk next to lark's tables (:func:`cache_folder`), keyed by the file's bytes, so an
edited table is parsed again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from functools import cache
from importlib import resources
from typing import Any


def cache_folder() -> str:
    """``$XDG_CACHE_HOME/logparse`` (``~/.cache/logparse``), or the temp folder when that is not writable."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "logparse")
    try:
        os.makedirs(folder, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise OSError
    except OSError:
        import tempfile

        folder = tempfile.gettempdir()
    return folder


@cache
def table(filename: str) -> dict[str, Any]:
    """The parsed TOML file ``grammars/<filename>`` (an engine's in its folder: ``sglang/variants.toml``; cached: parsed once per process; do not mutate it)."""
    raw = resources.files("logparse.grammars").joinpath(*filename.split("/")).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    stored = os.path.join(cache_folder(), f"table-{filename.replace('/', '-')}-{digest}.pickle")
    try:
        with open(stored, "rb") as fh:
            return pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
        pass
    import tomllib

    parsed = tomllib.loads(raw.decode("utf-8"))
    try:
        tmp = f"{stored}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(parsed, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, stored)
    except OSError:
        pass
    return parsed


def has(filename: str) -> bool:
    """Is there a file ``grammars/<filename>`` (an engine's optional table: a toy engine has none)?"""
    return resources.files("logparse.grammars").joinpath(*filename.split("/")).is_file()


@cache
def sql(name: str) -> str:
    """The text of ``grammars/sql/<name>.sql``, byte for byte (a released migration's statement is frozen)."""
    return resources.files("logparse.grammars").joinpath("sql").joinpath(f"{name}.sql").read_bytes().decode("utf-8")


@cache
def document(filename: str) -> Any:
    """The JSON document ``grammars/<filename>`` (an engine's data built by ``tools/``: its releases,
    its argument defaults), read once per process (do not mutate it)."""
    import json

    return json.loads(resources.files("logparse.grammars").joinpath(*filename.split("/")).read_bytes())


def entries(filename: str, key: str) -> list[dict[str, Any]]:
    """The array of tables ``[[key]]`` of ``grammars/<filename>``, in file order."""
    return table(filename).get(key, [])
