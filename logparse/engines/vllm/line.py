"""The vLLM line grammar: one vLLM line to one event.

``grammars/vllm/line.lark`` reads the layers in front of a message (process tags, torch's ``[rankN]:``,
vLLM's ``LEVEL MM-DD HH:MM:SS [file.py:N]``) and the message; :class:`VllmTransformer` turns the
tree into ``(prefix, None, (kind, fields, form))``, the shape :mod:`logparse.engines.sglang.line`
gives, with ``prefix["engine"] == "vllm"``: the layers in front of the message here, the messages by
their family of lines (:mod:`~logparse.engines.vllm.line_startup`: the start and its outcome,
:mod:`~logparse.engines.vllm.line_memory`: memory, :mod:`~logparse.engines.vllm.line_runtime`: the
running engine), the values of their fields by :mod:`~logparse.engines.vllm.line_values`.  Kinds
are ``vllm_*``, except the few every engine shares (``uvicorn``, ``exception``, ``exception_start``).
The ``form`` names the wording: each wording has its own release range
(:mod:`logparse.engines.vllm.variants`).

Units: every memory figure vLLM prints is GiB, even where its text says "GB" (catalogue §5); the
fields end in ``_gb`` and hold GiB.  Token counts are read with or without thousands separators.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lark import Lark, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from logparse.engines.vllm.line_memory import MemoryLines
from logparse.engines.vllm.line_runtime import RuntimeLines
from logparse.engines.vllm.line_startup import StartupLines
from logparse.engines.vllm.prefix import LOG_PREFIX_RE, PROC_TAG_RE, RANK_PREFIX_RE
from logparse.grammar.bounds import ForeignDigits
from logparse.grammar.lalr import build_parser, first_line_of


class VllmLineParseError(ValueError):
    """The line mentions something we track but does not fit any known vLLM variant."""


@lru_cache(maxsize=1)
def line_parser() -> Lark:
    return build_parser("vllm/line", propagate_positions=False)


def _match(rx: re.Pattern, text: str) -> re.Match:
    """The match of a prefix terminal's own pattern (the grammar matched it already; ValueError if not)."""
    m = rx.match(text)
    if m is None:
        raise ValueError(f"prefix {text!r} does not match {rx.pattern}")
    return m


# --------------------------------------------------------------------------- the line transformer
@v_args(inline=False)
class VllmTransformer(StartupLines, MemoryLines, RuntimeLines, Transformer):
    """Tree of one line -> ``(prefix, None, (kind, fields, form))``."""

    # ---- the layers in front of the message
    def head(self, c):
        info: dict[str, Any] = {"engine": "vllm", "stamp": None, "procs": []}
        for tok in c:
            text = str(tok)
            if tok.type == "PROC_TAG":
                m = _match(PROC_TAG_RE, text)
                info["procs"].append((m.group("name"), int(m.group("pid")), m.group("ip")))
            elif tok.type == "RANK_PREFIX":
                info["rank"] = int(_match(RANK_PREFIX_RE, text).group("rank"))
            elif tok.type == "VLOG":
                m = _match(LOG_PREFIX_RE, text)
                info["stamp"], info["level"] = m.group("stamp"), m.group("level")
                info["loc"] = m.group("loc") or m.group("bare_loc")
                info["bracketed"] = m.group("loc") is not None
        return ("head", info)

    def start(self, c):
        prefix = c[0][1]
        body = c[1] if len(c) > 1 else ("vllm_blank", {}, None)
        return prefix, None, body


_TRANSFORMER = VllmTransformer()


def parse_line(text: str) -> tuple[dict[str, Any], None, tuple[str, dict[str, Any], str | None]]:
    """Parse one vLLM line.  Returns ``(prefix, None, (kind, fields, form))``.

    Raises :class:`VllmLineParseError` with a short reason when the line does not fit."""
    try:
        tree = line_parser().parse(text)
    except LarkError as exc:
        raise VllmLineParseError(first_line_of(exc)) from None
    try:
        return _TRANSFORMER.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ForeignDigits):
            raise VllmLineParseError(str(exc.orig_exc)) from None
        raise VllmLineParseError(f"transform failed: {exc}") from None
    except (LarkError, IndexError, ValueError, StopIteration, AttributeError) as exc:
        raise VllmLineParseError(f"transform failed: {exc}") from None
