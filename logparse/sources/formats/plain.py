"""``plain`` and ``raw``: SGLang's own output, as it printed it.

Format::

    [2026-11-29 08:08:12] server_args=ServerArgs(model_path='/models/Qwen2.5-7B-Instruct', ...)
    [2026-11-29 08:08:20 TP0] Load weight begin. avail mem=21.02 GB
    Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.10s/it]
    node3: [2026-11-29 08:08:20 TP1] Load weight begin. avail mem=21.02 GB

Record fields: ``text`` only (``ts``, ``host``, ``unit``, ``pid``, ``boot`` are None);
``fmt="plain"``.  Every other format ends in this layer: what is left of a line after
its outer layers is SGLang's text.

Free text in front of SGLang's prefix (``node3: `` above, a ``tee`` or ``nohup`` label)
is cut here, with a note, when the rest of the line starts with SGLang's bracket
(:mod:`logparse.engines.sglang.prefix`): year-less journald ``short`` lines take their year from
SGLang's stamp at the start of the record text (:mod:`logparse.sources.years`), before
any grammar runs.  Text holding ``\\r`` or an ANSI escape in front is terminal debris
(a tqdm bar): left for the classifier, which knows which segment to keep.

``raw`` keeps every line verbatim: no layer is peeled, no marker recognised.
"""

from __future__ import annotations

from typing import Any

from logparse import engines
from logparse.sources.layers import Layers

FORMATS = ("plain", "raw")
ALIASES: dict[str, str] = {}

NOTE_FREE_TEXT = "text before the SGLang prefix removed: "


@engines.derived
def _glued_starts() -> tuple[tuple[bytes, Any], ...]:
    """Each engine's prefix the sources cut glued text in front of (its first byte, its pattern)."""
    return tuple(g for e in engines.all() if (g := e.glued_start()) is not None)


def peel_free_text(line: Layers) -> bool:
    """Cut text in front of an engine's prefix; False when there is none (or it is debris)."""
    return any(_peel_before(line, first, pattern) for first, pattern in _glued_starts())


def _peel_before(line: Layers, first: bytes, pattern: Any) -> bool:
    raw, pos = line.raw, line.pos
    if raw[pos : pos + 1] == first:
        return False
    i = raw.find(first, pos)
    if i < 0:
        return False
    m = pattern.search(raw, i)
    if m is None:
        return False
    before = raw[pos : m.start()]
    if b"\r" in before or b"\x1b" in before:
        return False
    line.notes.append(NOTE_FREE_TEXT + repr(before.decode("utf-8", "replace")))
    line.pos = m.start()
    return True
