"""vLLM releases: their order, their dates, and the defaults that moved between them.

Unlike SGLang, vLLM prints its version (``Initializing … LLM engine (vX)``, ``vLLM API server version
X`` up to 0.14.1, the logo from 0.15.0).  When a log does not show it (a pasted excerpt), the wording
of its lines dates it (:mod:`logparse.engines.vllm.variants`).  A range is a pair of release names
``(first, last)`` over :data:`RELEASES`, both inclusive; dev builds (``0.18.2rc1.dev73+g…``) sit
between two releases.  Facts from the vLLM log catalogue (§0 release list, Appendix B wheel dates,
§4.9 defaults).
"""

from __future__ import annotations

from logparse.grammar.releases import Range as Range  # re-exported: one range type for both engines
from logparse.grammar.releases import ReleaseLine, release_key
from logparse.grammar.releases import format_range as format_range
from logparse.grammar.releases import is_empty as is_empty

#: Every final PyPI release analysed, oldest first, with the date of its wheel (Appendix B).
_DATED = """
0.4.0 2024-03-30|0.4.0.post1 2024-04-02|0.4.1 2024-04-24|0.4.2 2024-05-05|0.4.3 2024-06-01|0.5.0 2024-06-11|
0.5.0.post1 2024-06-14|0.5.1 2024-07-05|0.5.2 2024-07-15|0.5.3 2024-07-23|0.5.3.post1 2024-07-23|0.5.4 2024-08-05|
0.5.5 2024-08-23|0.6.0 2024-09-04|0.6.1 2024-09-11|0.6.1.post1 2024-09-13|0.6.1.post2 2024-09-13|0.6.2 2024-09-25|
0.6.3 2024-10-14|0.6.3.post1 2024-10-17|0.6.4 2024-11-15|0.6.4.post1 2024-11-15|0.6.5 2024-12-17|0.6.6 2024-12-27|
0.6.6.post1 2024-12-27|0.7.0 2025-01-27|0.7.1 2025-02-01|0.7.2 2025-02-06|0.7.3 2025-02-20|0.8.0 2025-03-18|
0.8.1 2025-03-19|0.8.2 2025-03-25|0.8.3 2025-04-06|0.8.4 2025-04-14|0.8.5 2025-04-28|0.8.5.post1 2025-05-02|
0.9.0 2025-05-27|0.9.0.1 2025-05-30|0.9.1 2025-06-10|0.9.2 2025-07-07|0.10.0 2025-07-24|0.10.1 2025-08-18|
0.10.1.1 2025-08-20|0.10.2 2025-09-13|0.11.0 2025-10-03|0.11.1 2025-11-18|0.11.2 2025-11-20|0.12.0 2025-12-03|
0.13.0 2025-12-19|0.14.0 2026-01-18|0.14.1 2026-01-23|0.15.0 2026-01-29|0.15.1 2026-02-04|0.16.0 2026-02-25|
0.17.0 2026-03-06|0.17.1 2026-03-11|0.18.0 2026-03-20|0.18.1 2026-03-30|0.19.0 2026-04-03|0.19.1 2026-04-18|
0.20.0 2026-04-27|0.20.1 2026-05-04|0.20.2 2026-05-08|0.21.0 2026-05-15|0.22.0 2026-05-29|0.22.1 2026-06-04|
0.23.0 2026-06-15|0.24.0 2026-06-29|0.25.0 2026-07-11|0.25.1 2026-07-13|0.26.0 2026-07-25|0.27.0 2026-08-10|
0.27.1 2026-08-11|0.28.0 2026-08-25|0.29.0 2026-09-09|0.30.0 2026-09-22|0.31.0 2026-10-03|0.32.0 2026-10-17|
0.33.0 2026-11-01
"""
WHEEL_DATES: dict[str, str] = dict(
    item.split()
    for item in _DATED.replace("\n", "").split("|")
    if item.strip()  # type: ignore[misc]
)
RELEASES: tuple[str, ...] = tuple(WHEEL_DATES)
FIRST, LAST = RELEASES[0], RELEASES[-1]


#: vLLM's releases, and the release ranges over them.
VLLM = ReleaseLine(RELEASES)
is_release = VLLM.is_release
index = VLLM.index
intersect = VLLM.intersect
in_range = VLLM.in_range


def range_of(version: str) -> Range:
    """The release range a printed version pins: itself, or the two releases a dev build sits between."""
    if is_release(version):
        return (version, version)
    lo = index(version)
    if release_key(RELEASES[lo]) > release_key(version):  # before the first release
        return (FIRST, FIRST)
    return (RELEASES[lo], RELEASES[min(lo + 1, len(RELEASES) - 1)])


def at_least(version: str, release: str) -> bool:
    return VLLM.at_least(version, release)


# --------------------------------------------------------------------------- defaults (§4.9)
def default_utilization(version: str) -> float:
    """``gpu_memory_utilization`` when the user set none: 0.90, 0.92 from 0.20.0."""
    return 0.92 if at_least(version, "0.20.0") else 0.90


def default_engine(version: str) -> str:
    """The engine a release runs without ``VLLM_USE_V1``: V0 up to 0.7.3, V1 from 0.8.0."""
    return "V1" if at_least(version, "0.8.0") else "V0"


def graphs_estimated_by_default(version: str) -> bool:
    """Is the CUDA-graph memory estimate subtracted from the KV budget by default?  From 0.20.0."""
    return at_least(version, "0.20.0")


#: Where ``GPU KV cache size: N tokens`` changed meaning (§4.8).
TOKENS_REDEFINED_IN = "0.20.1"
#: The two definitions of a vLLM launch's ``kv_tokens``.
BLOCKS_DEFINITION = "blocks×block_size"
CONCURRENCY_DEFINITION = "concurrency×max_model_len"


def tokens_definition(version: str) -> str:
    """What a release's token count is: ``blocks×block_size`` up to 0.20.0, then ``concurrency×max_model_len``."""
    return CONCURRENCY_DEFINITION if at_least(version, TOKENS_REDEFINED_IN) else BLOCKS_DEFINITION
