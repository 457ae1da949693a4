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

from logparse.engines.sglang.prefix import BRACKET_BYTES_RE
from logparse.sources.layers import Layers

FORMATS = ("plain", "raw")
ALIASES: dict[str, str] = {}

NOTE_FREE_TEXT = "text before the SGLang prefix removed: "


def peel_free_text(line: Layers) -> bool:
    """Cut text in front of an SGLang prefix; False when there is none (or it is debris)."""
    raw, pos = line.raw, line.pos
    if raw[pos : pos + 1] == b"[":
        return False
    i = raw.find(b"[", pos)
    if i < 0:
        return False
    m = BRACKET_BYTES_RE.search(raw, i)
    if m is None:
        return False
    before = raw[pos : m.start()]
    if b"\r" in before or b"\x1b" in before:
        return False
    line.notes.append(NOTE_FREE_TEXT + repr(before.decode("utf-8", "replace")))
    line.pos = m.start()
    return True
