"""SGLang's own line prefix: the one definition every stage builds its regexps from.

SGLang's logging puts a bracket in front of each line, optionally followed by the
``LEVEL file.py:N: `` of a root handler that a dependency installed::

    (none)                                                 0.1.17 - 0.2.13 (rank in the message: [gpu_id=N], [gpu=N])
    [09:12:44 TP2] Init nccl begin.                        0.2.14 - 0.3.3.post1
    [2026-11-29 08:09:19 TP0] Load weight begin. ...       0.3.4+
    [2026-11-29 08:09:19] Load weight begin. ...           0.4.6.post2+ on a single GPU (no tag)
    [2026-11-29 08:09:19.123 DP1 PP0 TP3 EP3] ...          SGLANG_LOG_MS (0.5.6+); tags in any order
    [2025-01-01 00:00:00 DP-1 TP0] ...                     0.3.6 on single-DP launches
    [2026-11-29 08:09:19 TP0] INFO model_runner.py:412: ...   a root handler's level and location
    [2025-12-02 07:04:51 DisaggregationMode.DECODE TP1] ...   a build or fork's own word (a WORD)

Tags are ``DP``, ``PP``, ``ATTN_CP``, ``MOE_DP``, ``TP``, ``EP`` with a rank (``-1`` too),
``encode_server`` and ``encode_dp_worker[N]``.  Builds and forks put more in the bracket (the
disaggregation role of a prefill/decode server, a node name): any other word of the shape
:data:`WORD` is accepted there, in any position, and kept apart from the rank tags
(``words`` in the prefix dict; :func:`split_items`).  An item of the bracket is a rank tag
when it is one entirely (:data:`TAG_RE`), else a word.  The 0.1.x ``Rank N: `` prefix is
read by the grammar alone: it has no stamp and only old logs carry it.

**Authority.**  The grammar (``grammars/sglang/line.lark``, rule ``prefix``) is
the documented definition.  :data:`STAMP`, :data:`TAG`, :data:`LOG_LEVEL` and
:data:`PYLOC` below are its terminals written as Python regexps (non-capturing groups,
``/`` unescaped); ``tests/engines/sglang/test_prefix.py`` fails when they differ from the grammar's by
one character, and checks on every variant's sample line that the grammar, the
classifier's fast path (:data:`PREFIX_RE`) and the bulk path (:data:`PREFIX`, run by
polars) find the same stamp, the same tags and the same start of the message.

**Why here, at the bottom, with no imports.**  Two stages need the prefix: the grammar
stage (classifier fast path, vectorized bulk classification) and the sources stage,
which cuts free text glued in front of an SGLang line (``node3: [2026-11-29 ...] ...``)
because it dates year-less journald ``short`` lines from SGLang's stamp before any
grammar runs (:mod:`logparse.sources.years`).  A lower stage never imports a higher one,
so the definition sits below both.

The patterns are plain strings so that polars (Rust's regex crate: no look-around, no
backreferences) can run them too; the named groups are ``stamp``, ``tags``, ``level``
and ``pyloc``.
"""

from __future__ import annotations

import re

#: ``YYYY-mm-dd HH:MM:SS`` (0.3.4+) or ``HH:MM:SS`` (0.2.14-0.3.3.post1), ``.mmm`` with SGLANG_LOG_MS.
#: Digits are ASCII in every piece (``[0-9]``, not ``\d``, which Python and Rust's regex crate take
#: for any script's digits): a stamp or a rank written in ``１２`` is no prefix (and no number).
STAMP = r"[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{1,6})?|[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{1,6})?"
#: One rank tag.
TAG = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)-?[0-9]+|encode_server|encode_dp_worker\[[0-9]+\]"
#: One item of the bracket after the stamp: a rank tag, or another word a build or fork put
#: there (``DisaggregationMode.DECODE``, ``prefill``, ``node-3``).  Every tag has this shape,
#: so the items of a bracket split one way only (no backtracking between tag and word).
WORD = r"[A-Za-z_][\w.-]*(?:\[[0-9]+\])?"
#: The level of a root logging handler's ``LEVEL file.py:N: `` after the bracket.
LOG_LEVEL = r"DEBUG|INFO|WARNING|ERROR|CRITICAL"
#: The ``file.py:N`` of that handler.
PYLOC = r"[\w./-]+\.py:[0-9]+"

#: ``[STAMP ITEM*] ``: the bracket and the space after it (``tags``: the items, tags and words).
BRACKET = rf"\[(?P<stamp>{STAMP})(?P<tags>(?: {WORD})*)\] "
#: The optional ``LEVEL file.py:N: `` after the bracket.
LEVEL_LOC = rf"(?:(?P<level>{LOG_LEVEL}) (?P<pyloc>{PYLOC}): )?"
#: The whole prefix; the message starts where it ends.
PREFIX = BRACKET + LEVEL_LOC
#: Where a prefix may begin inside a line: ``[`` and a stamp.  Cheap to search for;
#: :data:`PREFIX_RE` confirms.
STAMP_START = rf"\[(?:{STAMP})[\] ]"

#: The prefix at the start of a line (``str``).
PREFIX_RE = re.compile(PREFIX)
#: A possible prefix start anywhere in a line (``str``).
STAMP_START_RE = re.compile(STAMP_START)
#: The bracket anywhere in a line (``bytes``, for the sources layer; ASCII digits only).
BRACKET_BYTES_RE = re.compile(BRACKET.encode())
#: A whole item that is a rank tag.
TAG_RE = re.compile(rf"(?:{TAG})\Z")


def split_items(items: str) -> tuple[list[str], list[str]]:
    """The items of a bracket (the ``tags`` group) as (rank tags, other words), in order."""
    tags: list[str] = []
    words: list[str] = []
    for item in items.split():
        (tags if TAG_RE.match(item) else words).append(item)
    return tags, words


def prefix_fields(m: re.Match) -> dict:
    """The grammar's prefix dict (``stamp``, ``tags``, ``words`` when the bracket holds other
    words, and ``level``/``pyloc`` when present) from a match of :data:`PREFIX_RE`."""
    tags, words = split_items(m.group("tags"))
    info: dict = {"stamp": m.group("stamp"), "tags": tags}
    if words:
        info["words"] = words
    level = m.group("level")
    if level is not None:
        info["level"] = level
        info["pyloc"] = m.group("pyloc")
    return info


#: The starts of SGLang's lines that carry no bracket (0.1.x ``Rank N: ``, 0.1.17-0.2.13's ``[gpu_id=N] `` rank
#: inside the message, the bare ``server_args=`` and summary lines, and the key startup lines of a paste whose
#: brackets were cut): with :data:`BRACKET`, what tells the
#: sources stage that an ambiguous wrapper (a ``  | `` gutter) stands in front of SGLang's text.
BARE_STARTS = (
    r"\[gpu(?:_id)?=[0-9]+\] |[Rr]ank [0-9]+: |server_args=|max_total_num_tokens?=|Load weight (?:begin|end)|"
    r"KV Cache is allocated|Memory pool end|Capture cuda graph|Init torch distributed|The server is fired up"
)
