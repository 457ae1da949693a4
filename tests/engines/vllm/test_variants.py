"""Every vLLM variant of the table parses to its event and fields, dates by its signature, and
classifies as parsed inside each wrapper users have (journal, docker, kubectl, plain, pasted)."""

from __future__ import annotations

import pytest

from logparse.engines.vllm import versions as vv
from logparse.engines.vllm.assemble import apply_vllm_prefix
from logparse.engines.vllm.line import VllmLineParseError, parse_line
from logparse.engines.vllm.variants import VARIANTS, match
from logparse.grammar.classify import LineClassifier
from logparse.grammar.events import Event
from logparse.sources.records import Record


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_sample_parses_to_expected_fields(variant):
    prefix, _, (kind, fields, form) = parse_line(variant.sample)
    assert prefix["engine"] == "vllm"
    assert kind == variant.kind, f"{variant.name}: parsed as {kind}"
    ev = Event(kind=kind, fields=fields, form=form, text=variant.sample)
    apply_vllm_prefix(ev, prefix)
    for key, want in variant.expect.items():
        got = fields[key] if key in fields else getattr(ev, key, None)
        assert got == want, f"{variant.name}: {key}={got!r}, want {want!r}"


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_release_range_is_valid(variant):
    assert vv.is_release(variant.since) and vv.is_release(variant.until)
    assert vv.index(variant.since) <= vv.index(variant.until)


@pytest.mark.parametrize(
    "variant", [v for v in VARIANTS if v.dates and not v.name.startswith("prefix_")], ids=lambda v: v.name
)
def test_dating_variants_are_found_by_their_signature(variant):
    _, _, (kind, fields, form) = parse_line(variant.sample)
    assert variant in match(kind, form, fields)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_classifier_parses_each_sample_as_vllm(variant):
    res = LineClassifier().classify(Record(1, variant.sample))
    assert res.status == "parsed", (variant.name, res.reason)
    assert res.parsed[2][0] == variant.kind


#: A line inside the colour codes vLLM 0.4.2-0.11.2 always emits around its process tag, with and
#: without the ESC byte (a copy from a terminal keeps the rest), and after a ``VLLM_LOGGING_PREFIX``.
WRAPPED = [
    "\x1b[1;36m(VllmWorkerProcess pid=4120)\x1b[0;0m INFO 01-15 12:30:20 model_runner.py:1099] Loading model weights took 7.4807 GB",
    "[1;36m(VllmWorkerProcess pid=4120)[0;0m INFO 01-15 12:30:20 model_runner.py:1099] Loading model weights took 7.4807 GB",
    "\x1b[0;36m(EngineCore_DP0 pid=301)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m12-10 08:00:01 [gpu_worker.py:359]\x1b[0m Available KV cache memory: 30.12 GiB",
    "node-a | INFO 03-19 10:04:31 [kv_cache_utils.py:537] GPU KV cache size: 447,088 tokens",
]


@pytest.mark.parametrize("line", WRAPPED)
def test_colour_codes_and_glued_text(line):
    res = LineClassifier().classify(Record(1, line))
    assert res.status == "parsed", res.reason
    assert res.parsed[2][0].startswith("vllm_")


def test_unknown_wording_near_an_anchor_is_a_near_miss():
    line = "INFO 05-02 09:15:03 [gpu_worker.py:440] Available KV cache memory is 30.12 GiB"
    res = LineClassifier().classify(Record(1, line))
    assert res.status == "unrecognized" and res.reason.startswith("near miss (vLLM")
    with pytest.raises(VllmLineParseError):
        parse_line(line)


@pytest.mark.parametrize(
    "line,reason",
    [
        (
            "(Worker_TP1 pid=812) INFO 05-02 09:15:03 [custom_all_reduce.py:35] Registering 4 cuda graph addresses",
            "vllm_other",
        ),
        (
            '(VllmWorkerProcess pid=4120)   File "/usr/lib/python3.12/site-packages/vllm/worker/worker.py", line 200, in f',
            "traceback",
        ),
        ('[rank0]:   File "/x/vllm/v1/engine/core.py", line 80, in __init__', "traceback"),
        ('(APIServer pid=7) INFO:     127.0.0.1:50432 - "POST /v1/chat/completions HTTP/1.1" 200 OK', "uvicorn_access"),
        (
            "(EngineCore_DP0 pid=301) Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.10s/it]",
            "tqdm",
        ),
    ],
)
def test_vllm_noise(line, reason):
    res = LineClassifier().classify(Record(1, line))
    assert (res.status, res.reason) == ("noise", reason)


def test_bare_uncaught_failure_is_a_vllm_failure():
    clf = LineClassifier()
    assert clf.classify(Record(1, "Traceback (most recent call last):")).status == "parsed"
    clf.classify(Record(2, '  File "/x/vllm/worker/worker.py", line 300, in raise_if_cache_size_invalid'))
    res = clf.classify(Record(3, VARIANTS_BY_NAME["max_len_v0"].sample))
    assert res.status == "parsed" and res.parsed[2][0] == "vllm_failure"
    assert res.parsed[2][2] == "max_len_exceeds_kv:v0"


VARIANTS_BY_NAME = {v.name: v for v in VARIANTS}


def test_a_paste_indented_as_a_code_block():
    line = "    (VllmWorkerProcess pid=4120) INFO 01-15 12:30:20 model_runner.py:1099] Loading model weights took 7.4807 GB"
    res = LineClassifier().classify(Record(1, line))
    assert res.status == "parsed" and res.parsed[0]["procs"] == [("VllmWorkerProcess", 4120, None)]


def test_line_number_table_is_the_catalogues():
    """grammars/vllm/line_numbers.json is tools/build_vllm_line_numbers.py's reading of Appendix A."""
    import importlib.util

    from helpers import ROOT, SHARED

    from logparse.engines.vllm.variants import line_numbers

    catalogue = SHARED / "vllm-log-catalogue.md"
    if not catalogue.is_file():
        pytest.skip(f"the vLLM catalogue is not at {catalogue}")
    spec = importlib.util.spec_from_file_location("build", ROOT / "tools" / "build_vllm_line_numbers.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    assert build.parse(catalogue.read_text(encoding="utf-8")) == line_numbers()
    for family in line_numbers().values():
        for ranges in family.values():
            assert all(vv.is_release(a) and vv.is_release(b) and vv.index(a) <= vv.index(b) for a, b in ranges)
