"""Model configs among the inputs: a model's ``config.json`` kept beside its logs is used, not
counted as an input without engine lines.

Ingest keeps each JSON input that holds a Hugging Face model config (``model_type`` or
``architectures``; :func:`logparse.budget.model_config.is_model_config`) in ``model_configs``, and a
launch is matched to the config of its model by name: the last part of its model path
(``/models/Kimi-K2.5-INT4``) against the config's model name (its folder's, ``…/Kimi-K2.5-INT4/config.json``,
or the file's stem, ``Kimi-K2.5-INT4.json``), case ignored.  ``explain`` and ``show`` of a matched
launch then check the config's bytes per token against the launch's pool without ``--model-config``.
A launch read from a file (not the store) finds its config the same way beside that file.

Table ``model_configs`` (migration 15):

* ``path`` (key): the file as ingest read it; ``model_name``: the name matched; ``model_type``;
* ``content``: the config's JSON text; ``index_total``: the weights' bytes by the
  ``model.safetensors.index.json`` beside it (NULL without one); ``sha256`` of the content;
* ``ingested_at``: when it was kept.  Ingesting a changed file replaces its row; the same one
  leaves it.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

#: Larger JSON files are not read as configs (a model config is a few kB; a journal export is not one).
MAX_CONFIG_BYTES = 4 << 20


def read_config(path: str) -> tuple[dict[str, Any], int | None] | None:
    """The model config a JSON input holds, with its weights' bytes by the index beside it; None
    when the input is not a model config."""
    from logparse.budget.model_config import ModelConfigError, is_model_config, weights_index_total

    if not path.lower().endswith(".json") or not os.path.isfile(path):
        return None
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            return None
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        index_total = weights_index_total(path) if is_model_config(raw) else None
    except (OSError, ValueError, ModelConfigError):
        return None
    return (raw, index_total) if is_model_config(raw) else None


def is_weights_index(path: str) -> bool:
    """Whether an input is a model's ``*.safetensors.index.json`` (read with the config beside it)."""
    name = os.path.basename(path).lower()
    return name.endswith(".safetensors.index.json") and os.path.isfile(path)


def keep(con, path: str, raw: dict[str, Any], index_total: int | None, now: datetime) -> None:
    """Store (or replace) the config read from ``path``."""
    from logparse.budget.model_config import model_name_of

    text = json.dumps(raw, sort_keys=True)
    sha = hashlib.sha256(text.encode()).hexdigest()
    same = con.execute("SELECT 1 FROM model_configs WHERE path = ? AND sha256 = ?", [path, sha]).fetchall()
    if same:  # the same config again: the store is left as it was (ingest is idempotent)
        return
    con.execute("DELETE FROM model_configs WHERE path = ?", [path])
    con.execute(
        "INSERT INTO model_configs VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            path,
            model_name_of(path),
            str(raw.get("model_type") or ""),
            text,
            index_total,
            sha,
            now,
        ],
    )


def model_key(model_path: str | None) -> str | None:
    """The name a launch's model path is matched by: its last part, lower-case."""
    name = (model_path or "").rstrip("/").rsplit("/", 1)[-1]
    return name.lower() or None


def stored_config(con, model_path: str | None) -> tuple[str, dict[str, Any], int | None] | None:
    """The stored config of the model at ``model_path`` (the newest kept when several match)."""
    key = model_key(model_path)
    if key is None:
        return None
    rows = con.execute(
        "SELECT path, content, index_total FROM model_configs WHERE lower(model_name) = ? "
        "ORDER BY ingested_at DESC, path LIMIT 1",
        [key],
    ).fetchall()
    return (rows[0][0], json.loads(rows[0][1]), rows[0][2]) if rows else None


def matched_launches(con, paths: list[str]) -> int:
    """How many stored launches the configs at ``paths`` match."""
    if not paths:
        return 0
    return con.execute(
        "SELECT count(*) FROM launches WHERE lower(regexp_extract(rtrim(model_path, '/'), '[^/]*$')) IN "
        "(SELECT lower(model_name) FROM model_configs WHERE path IN (SELECT unnest(?::VARCHAR[])))",
        [paths],
    ).fetchall()[0][0]


def config_beside(log_path: str | None, model_path: str | None) -> tuple[str, dict[str, Any], int | None] | None:
    """The config of the model at ``model_path`` near a log file: ``config.json`` in the log's
    folder, or ``NAME/config.json``, ``models/NAME/config.json`` or ``NAME.json`` in it or in one
    of its two parent folders (the last part of the model path is NAME, case ignored)."""
    key = model_key(model_path)
    if not log_path or key is None or not os.path.isfile(log_path):
        return None
    from logparse.budget.model_config import model_name_of

    here = Path(log_path).resolve().parent
    candidates = [here / "config.json"]
    for folder in (here, here.parent, here.parent.parent):
        candidates += _named_in(folder, key) + _named_in(folder / "models", key)
    for path in candidates:
        found = read_config(str(path))
        if found is not None and model_name_of(str(path)).lower() == key:
            return (str(path), *found)
    return None


def _named_in(folder: Path, key: str) -> list[Path]:
    """``NAME/config.json`` and ``NAME.json`` in ``folder``, NAME matched without case."""
    try:
        entries = list(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.name.lower() == key and entry.is_dir():
            out.append(entry / "config.json")
        elif entry.name.lower() == key + ".json":
            out.append(entry)
    return out
