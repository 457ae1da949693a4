"""The line grammar: one SGLang line to one event.

``grammars/sglang/line.lark`` reads the line prefix (timestamp, rank tags) and the message;
:class:`LineTransformer` turns the tree into ``(prefix, gpu_tag, (kind, fields, form))``: the
prefix and the pieces every rule shares here, the messages by their family of lines
(:mod:`~logparse.engines.sglang.line_startup`: the start and its outcome,
:mod:`~logparse.engines.sglang.line_memory`: memory, :mod:`~logparse.engines.sglang.line_runtime`: the
running server), the values of their fields by :mod:`~logparse.engines.sglang.line_values`.
The ``server_args=`` payload is kept as text here and read by :mod:`logparse.grammar.pyliteral`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from logparse.engines.sglang.line_memory import MemoryLines
from logparse.engines.sglang.line_runtime import RuntimeLines
from logparse.engines.sglang.line_startup import StartupLines
from logparse.engines.sglang.line_values import GiB, Seconds, as_float, as_int, number
from logparse.grammar.bounds import ForeignDigits, has_foreign_digits, read_number
from logparse.grammar.lalr import build_parser, first_line_of


class LineParseError(ValueError):
    """The line mentions something we track but does not fit any known variant."""


@lru_cache(maxsize=1)
def line_parser() -> Lark:
    return build_parser("sglang/line", propagate_positions=False)


#: A bracket item shaped like a rank tag with any script's digits (``\\d``): with ASCII ones it is a TAG.
_TAG_LIKE = re.compile(r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)-?\d+")


# --------------------------------------------------------------------------- the line transformer


@v_args(inline=False)
class LineTransformer(StartupLines, MemoryLines, RuntimeLines, Transformer):
    """Tree of one line -> ``(prefix_info, kind, fields, form)``."""

    # ---- shared pieces
    def gb(self, c):
        return GiB(as_float(c[0]))

    def secs(self, c):
        return Seconds(as_float(c[0]))

    def int_list(self, c):
        return [number(t) for t in c]

    def kvpair(self, c):
        key = str(c[0]).strip()
        raw = str(c[1]).strip()
        value: Any = raw
        if raw in ("True", "False"):
            value = raw == "True"
        else:
            m = re.fullmatch(r"(-?[\d.]+(?:[eE][+-]?\d+)?)(?: GB)?", raw)
            if m:
                value = number(m.group(1)) if read_number(m.group(1)) is not None or has_foreign_digits(raw) else raw
        return (key, value)

    def kvlist(self, c):
        return dict(c)

    # ---- prefix
    def bracket_prefix(self, c):
        info: dict[str, Any] = {"stamp": None, "tags": []}
        for item in c:
            if isinstance(item, Token) and item.type == "STAMP":
                info["stamp"] = str(item)
            elif isinstance(item, tuple) and item[0] == "tag":
                info["tags"].append(item[1])
            elif isinstance(item, tuple) and item[0] == "word":
                info.setdefault("words", []).append(item[1])
            elif isinstance(item, dict):
                info.update(item)
        return ("prefix", info)

    def tag(self, c):
        return ("tag", str(c[0]))

    def bracket_word(self, c):
        word = str(c[0])
        if _TAG_LIKE.fullmatch(word):  # TP１: a rank tag in another script's digits is no rank
            raise ForeignDigits(word)
        return ("word", word)

    def level_loc(self, c):
        return {"level": str(c[0]).strip(), "pyloc": str(c[1])}

    def rank_prefix(self, c):
        return ("prefix", {"stamp": None, "tags": [f"TP{number(c[0])}"], "old_rank": True})

    def gpu_tag(self, c):
        return ("gpu", as_int(c[0]))

    def start(self, c):
        prefix: dict[str, Any] = {}
        gpu = None
        body = None
        for item in c:
            if isinstance(item, tuple) and item and item[0] == "prefix":
                prefix = item[1]
            elif isinstance(item, tuple) and item and item[0] == "gpu":
                gpu = item[1]
            else:
                body = item
        return prefix, gpu, body


_TRANSFORMER = LineTransformer()


def parse_line(text: str) -> tuple[dict[str, Any], int | None, tuple[str, dict[str, Any], str | None]]:
    """Parse one SGLang line.  Returns ``(prefix, gpu_tag, (kind, fields, form))``.

    Raises :class:`LineParseError` with a short reason when the line does not fit.
    """
    try:
        tree = line_parser().parse(text)
    except LarkError as exc:
        raise LineParseError(first_line_of(exc)) from None
    try:
        return _TRANSFORMER.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ValueError):  # a number the grammar matched that is none (ForeignDigits)
            raise LineParseError(str(exc.orig_exc)) from None
        raise LineParseError(f"transform failed: {first_line_of(exc)}") from None
    except LarkError as exc:  # a transformer bug surfaces as VisitError: report, never crash
        raise LineParseError(f"transform failed: {first_line_of(exc)}") from None
