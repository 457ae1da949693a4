"""The values of vLLM's line fields: numbers of tokens, the tokens of a rule, the engine config payload.

What the line transformer (:mod:`logparse.engines.vllm.line` and its families of lines,
``line_startup``, ``line_memory``, ``line_runtime``) makes of the tokens the grammar matched: numbers
in ASCII digits only, with or without thousands separators (:func:`logparse.grammar.bounds.ascii_number`),
and the launch-relevant ``key=value`` pairs of the engine's config line.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from logparse.grammar import bounds
from logparse.grammar.bounds import ascii_number


def number(tok: Any) -> int | float:
    """A number token (thousands separators allowed) as int or float: ASCII digits only."""
    return ascii_number(str(tok).replace(",", ""))


def as_float(tok: Any) -> float:
    """A number token as a float (:func:`logparse.grammar.bounds.as_float`)."""
    return bounds.as_float(number(tok))


def as_int(tok: Any) -> int | float:
    """A number token as an int (:func:`logparse.grammar.bounds.as_int`)."""
    return bounds.as_int(number(tok))


def decimals(tok: Any) -> int:
    """How many decimals a number was printed with (``61.30`` -> 2, ``61.3`` -> 1, ``61`` -> 0)."""
    text = str(tok)
    return len(text) - text.index(".") - 1 if "." in text else 0


def tokens_of(c: list, *types: str) -> list[Token]:
    return [t for t in c if isinstance(t, Token) and t.type in types]


# --------------------------------------------------------------------------- the engine config payload
def split_top_level(text: str) -> list[str]:
    """``a=1, b={'x': 1, 'y': 2}, c='p, q'`` -> ``["a=1", "b={'x': 1, 'y': 2}", "c='p, q'"]``."""
    out: list[str] = []
    depth, quote, start = 0, "", 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth <= 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _literal(v: str) -> Any:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    if v in ("True", "False"):
        return v == "True"
    if v == "None":
        return None
    try:
        return number(v)
    except ValueError:
        return v


#: Keys of the engine config line kept as event fields (the rest stays in the line's text).
CONFIG_KEYS = (
    "model",
    "dtype",
    "max_seq_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "quantization",
    "enforce_eager",
    "kv_cache_dtype",
    "enable_prefix_caching",
    "served_model_name",
)


def config_fields(payload: str) -> dict[str, Any]:
    """The launch-relevant ``key=value`` pairs of ``Initializing … engine (vX) with config: …``."""
    text = payload.rstrip().rstrip(",")
    if text.endswith(")") and text.count("(") < text.count(")"):
        text = text[:-1]  # the explicit form of <= 0.6.4.post1 closes with ")"
    out: dict[str, Any] = {}
    for item in split_top_level(text):
        key, sep, value = item.partition("=")
        key = key.strip()
        if sep and key in CONFIG_KEYS and key not in out:
            out[key] = _literal(value)
    return out
