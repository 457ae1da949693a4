"""vLLM's line prefix has one definition (logparse.engines.vllm.prefix), equal to the grammar's terminals."""

from __future__ import annotations

import re

import pytest

from logparse.engines.vllm import prefix as vllm_prefix
from logparse.engines.vllm.line import parse_line
from logparse.grammar.lalr import grammar_text


def _terminal(name: str) -> str:
    m = re.search(rf"^{name}: /(.*)/$", grammar_text("vllm/line.lark"), re.M)
    assert m, name
    return m.group(1).replace("\\/", "/")


def _plain(pattern: str) -> str:
    """A pattern without its group names (the grammar's terminals have none)."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


@pytest.mark.parametrize(
    "terminal,pattern",
    [("PROC_TAG", vllm_prefix.PROC_TAG), ("RANK_PREFIX", vllm_prefix.RANK_PREFIX), ("VLOG", vllm_prefix.LOG_PREFIX)],
)
def test_python_patterns_are_the_grammar_terminals(terminal, pattern):
    assert _plain(pattern) == _terminal(terminal)


@pytest.mark.parametrize(
    "line,tags,rank,loc",
    [
        ("INFO 06-11 10:04:31 gpu_executor.py:83] # GPU blocks: 1, # CPU blocks: 2", [], None, "gpu_executor.py:83"),
        (
            "(Worker_TP1 pid=77) INFO 03-19 10:04:31 [gpu_worker.py:298] Available KV cache memory: 1.00 GiB",
            [("Worker_TP1", 77, None)],
            None,
            "gpu_worker.py:298",
        ),
        (
            "(RayWorkerProc pid=9, ip=10.0.0.2) (Worker_TP1 pid=9) INFO 03-19 10:04:31 [gpu_worker.py:298] Available KV cache memory: 1.00 GiB",
            [("RayWorkerProc", 9, "10.0.0.2"), ("Worker_TP1", 9, None)],
            None,
            "gpu_worker.py:298",
        ),
        (
            "(VllmWorker rank=1 pid=5) INFO 03-19 10:04:31 [gpu_worker.py:298] Available KV cache memory: 1.00 GiB",
            [("VllmWorker rank=1", 5, None)],
            None,
            "gpu_worker.py:298",
        ),
        ("[rank0]: ValueError: No available memory for the cache blocks.", [], 0, None),
    ],
)
def test_split_head_and_grammar_agree(line, tags, rank, loc):
    got_tags, got_rank, lp, _end = vllm_prefix.split_head(line)
    assert got_tags == tags and got_rank == rank
    assert (lp.group("loc") or lp.group("bare_loc") if lp else None) == loc
    prefix, _, _ = parse_line(line)
    assert prefix["procs"] == tags and prefix.get("rank") == rank and prefix.get("loc") == loc


def test_vllm_process_names_are_not_ray_actors():
    assert vllm_prefix.is_vllm_process_name("Worker_DP0_PP1_TP3_EP3")
    assert vllm_prefix.is_vllm_process_name("EngineCore_DP0")
    assert not vllm_prefix.is_vllm_process_name("RayWorkerWrapper")
    assert not vllm_prefix.is_vllm_process_name("Scheduler")


def test_a_bare_statistics_line_starts_as_its_spec_says():
    """The bare start of the runtime lines comes from ``grammars/vllm/runtime.toml``: every shape's
    sample, bare, is a vLLM message (with and without its engine index), one word off it is not, and
    the classifier and the sources stage (the engine's ``line_start_patterns``) use the one pattern."""
    from logparse import engines
    from logparse.engines.vllm.classify import BARE_MESSAGE_RE, classify_bare_vllm
    from logparse.grammar import runtime_decoder

    assert engines.get("vllm").line_start_patterns()[-1] == BARE_MESSAGE_RE.pattern
    for shape in runtime_decoder.shapes("vllm"):
        res = classify_bare_vllm(shape.sample)
        assert res is not None and res[:2] == ("parsed", "vllm_stats"), shape.name
    assert BARE_MESSAGE_RE.match("Engine 000: Avg prompt throughput: 1.0 tokens/s")
    assert not BARE_MESSAGE_RE.match("Avg prompt throughputs: 1.0 tokens/s")
