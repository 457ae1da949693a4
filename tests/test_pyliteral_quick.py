"""The quick reader of ``server_args=`` payloads reads what lark's grammar reads, or leaves the payload to it.

:func:`logparse.grammar.pyliteral.quick_literal` is a shortcut of :func:`~logparse.grammar.pyliteral.parse_literal`
(about three times faster on SGLang's payloads of 300 fields); lark stays the definition.  Every payload
of the samples and the corpus, hand-written edge cases, and cuts and one-character edits of a real
payload: wherever the quick reader gives a value, lark gives the same one (types included: records
and their names, abridged dicts, text that is not a number, NaN).
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, SAMPLES
from lark.exceptions import LarkError

from logparse.grammar import pyliteral
from logparse.grammar.pyliteral import LiteralParseError, quick_literal, shallow


def _shape(v: Any) -> Any:
    """A value with its types spelled out (``==`` sees neither a record's name nor NaN)."""
    if isinstance(v, pyliteral.ReprRecord):
        return ("record", v.record_name, v.abridged, [(k, _shape(x)) for k, x in v.items()])
    if isinstance(v, dict):
        return (type(v).__name__, [(_shape(k), _shape(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_shape(x) for x in v])
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    return (type(v).__name__, v)


def _lark(text: str) -> Any:
    try:
        return _shape(pyliteral.literal_parser().parse(shallow(text)))
    except (LarkError, RecursionError) as exc:
        return ("error", type(exc).__name__)


def _agrees(text: str) -> bool:
    """The quick reader gave a value (True) the same as lark's, or left it (False)."""
    try:
        quick = _shape(quick_literal(shallow(text)))
    except LiteralParseError:
        return False
    assert quick == _lark(text), text[:300]
    return True


def _payloads() -> list[str]:
    out = []
    for base in (SAMPLES, CORPUS):
        for path in sorted(Path(base).rglob("*.log")) if Path(base).is_dir() else []:
            for line in path.read_text(errors="replace").splitlines():
                i = line.find("server_args=")
                if i >= 0:
                    out.append(line[i + len("server_args=") :])
    return list(dict.fromkeys(out))


PAYLOADS = _payloads()

EDGES = [
    "ServerArgs(model_path='/m', tp_size=2)",
    "{'model_path': '/m', 'tp_size': 2}",
    "R(a=1 b=2,, c=(), d=(1,), e=(1, 2,), f=[], g=[1,], h={}, i={1}, j={1, 2,}, k={1: 2 3: 4}, l={,})",
    "R(a=inf, b=nan, c=-inf, d=-nan, e=1e-05, f=3j, g=.5, h=5., i=-0.0, j=123456789012345678901234567890)",
    "R(a=10**3)",
    "R(a=２)",
    "[R(a=[1]), (R(b=2),), {'c': R(d={3})}]",
    "R(a=None, b=True, c=False, d=Nonesuch, e=None.x, f=a.b.c)",
    "R(None=1)",
    "None(a=1)",
    "inf(a=1)",
    "R(a=-infinity=3)",
    "R(a=(1))",
    "R(a=<function f at 0x7f>, b=<class 'int'>, c=<E.X: 1>)",
    "R(a='it\\'s', b=\"q\\\"\", c='\\x41\\u00e9\\U0001F600\\N{BULLET}\\101\\q', d='\\udce9')",
    "R(a=２, b=1_000)",
    "R(a={[1]: 2, R(x=1): 3})",
    "R(a=1, ...)",
    "R(a=1, …, b=2)",
    "{'a': 1, ...}",
    "R(a=1",
    "R(a=1))",
    "[1, 2",
    "",
    "   ",
    "R(a=\v1)",
    "R(a=1)\n",
    "{1, 2: 3}",
    "{1: 2, 3}",
    "[,]",
    "(,)",
    "R(a=[" * 40 + "1" + "])" * 40,
    "[" * 40 + "1" + "]" * 40,
    "R(a=1 =2)",
    "R(a==2)",
    "R(1=2)",
]


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_edges_agree_with_the_grammar(text):
    _agrees(text)


def test_the_payloads_of_the_samples_and_the_corpus_are_read_quickly_and_the_same():
    assert PAYLOADS
    quick = [_agrees(p) for p in PAYLOADS]
    assert sum(quick) >= len(quick) // 2  # most are read by the quick reader (the rest are cut or abridged)


def test_cuts_and_edits_of_a_payload_agree_with_the_grammar():
    rng = random.Random(28)
    base = max((p for p in PAYLOADS if p.startswith(("ServerArgs(", "{"))), key=len, default=EDGES[2])
    alphabet = "()[]{},:='\"<>.-_ \t\n\\xj0123456789eNTFa…"
    for _ in range(400):
        cut = base[: rng.randrange(len(base) + 1)]
        _agrees(cut)
        i = rng.randrange(len(base))
        _agrees(base[:i] + rng.choice(alphabet) + base[i + 1 :])
        _agrees(base[:i] + rng.choice(alphabet) + base[i:])
