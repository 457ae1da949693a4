"""Pastes of vLLM and SGLang logs: bare vLLM messages, terminal-UI borders, CI and wrapper gutters (issue 21).

Every sample here is written by us, in the real formats (vLLM's and SGLang's own format strings, the
wrapping tools' own line formats: :mod:`logparse.sources.formats.wrappers`), with our own numbers.
Each input goes through the record path and the bulk path (``bulk="force"``): both must give the same
lines, launches and figures, and every line is accounted for.
"""

from __future__ import annotations

import pytest

from logparse.grammar.classify import LineClassifier
from logparse.pipeline import parse_sources
from logparse.sources import open_inputs, text_source
from logparse.sources.formats.wrappers import WRAPPERS, engine_starts
from logparse.sources.lines import LineParser
from logparse.sources.records import Record

# ------------------------------------------------------------------------------------------ samples

SGLANG = """\
[2026-03-02 10:00:01] server_args=ServerArgs(model_path='/models/Llama-3.1-8B', tp_size=1, mem_fraction_static=0.85)
[2026-03-02 10:00:02 TP0] Load weight begin. avail mem=78.62 GB
[2026-03-02 10:00:11 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.41 GB, mem usage=15.21 GB.
[2026-03-02 10:00:12 TP0] KV Cache is allocated. #tokens: 402112, K size: 24.54 GB, V size: 24.54 GB
[2026-03-02 10:00:12 TP0] Memory pool end. avail mem=13.90 GB
[2026-03-02 10:00:14 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=13.71 GB
[2026-03-02 10:00:29 TP0] Capture cuda graph end. Time elapsed: 15.02 s. mem usage=1.27 GB. avail mem=12.44 GB.
[2026-03-02 10:00:30 TP0] max_total_num_tokens=402112, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=12.44 GB
[2026-03-02 10:00:33] The server is fired up and ready to roll!
"""

VLLM_V1 = """\
INFO 11-20 14:02:35 [core.py:61] Initializing a V1 LLM engine (v0.8.5) with config: model='/models/qwen-14b', speculative_config=None, tokenizer='/models/qwen-14b', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, enforce_eager=False, kv_cache_dtype=auto, seed=0
INFO 11-20 14:02:44 [gpu_model_runner.py:1329] Model loading took 27.6543 GiB and 9.301247 seconds
INFO 11-20 14:02:51 [gpu_worker.py:227] Available KV cache memory: 41.07 GiB
INFO 11-20 14:02:51 [kv_cache_utils.py:634] GPU KV cache size: 269,136 tokens
INFO 11-20 14:02:51 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 8.21x
INFO 11-20 14:03:04 [gpu_model_runner.py:1686] Graph capturing finished in 12 secs, took 0.52 GiB
INFO 11-20 14:03:04 [core.py:163] init engine (profile, create kv cache, warmup model) took 31.44 seconds
"""

#: vLLM 0.6.4 (V0) with the prefix cut: the messages alone, as pasted from a notebook.
VLLM_V0_BARE = """\
Loading model weights took 14.9826 GB
Memory profiling results: total_gpu_memory=79.15GiB initial_memory_usage=15.83GiB peak_torch_memory=16.95GiB memory_usage_post_profile=16.02Gib non_torch_memory=0.51GiB kv_cache_size=53.77GiB gpu_memory_utilization=0.90
# GPU blocks: 27532, # CPU blocks: 2048
Maximum concurrency for 32768 tokens per request: 13.44x
"""

#: The V1 launch above, its prefix cut.
VLLM_V1_BARE = "".join(line.split("] ", 1)[1] + "\n" for line in VLLM_V1.splitlines())

#: The SGLang launch above, its brackets cut (SGLang's grammar reads its messages bare).
SGLANG_BARE = "".join(line.split("] ", 1)[1] + "\n" for line in SGLANG.splitlines())

ENGINE_SAMPLES = {
    "sglang": SGLANG,
    "sglang-bare": SGLANG_BARE,
    "vllm-v1": VLLM_V1,
    "vllm-v0-bare": VLLM_V0_BARE,
    "vllm-v1-bare": VLLM_V1_BARE,
}


def _box(line: str, left: str = "│", right: str = "│", width: int = 260) -> str:
    return f"{left} {line.ljust(width)} {right}"


#: Each wrapper around the i-th line of a paste, as the tool writes it (our own stamps).
WRAP = {
    "tui-box": lambda i, line: _box(line),
    "tui-box-focused": lambda i, line: _box(line, "║", "║"),
    "tui-ascii": lambda i, line: _box(line, "|", "|"),
    "buildkite": lambda i, line: f"[2025-11-20T14:{i // 60:02d}:{i % 60:02d}Z] {line}",
    "buildkite-apc": lambda i, line: f"\x1b_bk;t={1763647360123 + i * 1000}\x07{line}",
    "pipe-gutter": lambda i, line: f"  | {line}",
    "markdown-quote": lambda i, line: f"> {line}",
    "github-actions": lambda i, line: f"2025-11-20T14:02:{i:02d}.{1234567 + i}Z {line}",
    "fastchat": lambda i, line: (
        f"2025-11-20 14:02:{i:02d} | {'ERROR' if i % 2 else 'INFO'} | {'stderr' if i % 2 else 'stdout'} | {line}"
    ),
    "loguru": lambda i, line: f"2025-11-20 14:02:{i:02d}.125 | INFO     | serve:main:41 - {line}",
    "gitlab": lambda i, line: f"2025-11-20T14:02:{i:02d}.000000Z 00O {line}",
}


def _wrapped(text: str, wrap) -> str:
    return "".join(wrap(i, line) + "\n" for i, line in enumerate(text.splitlines()))


def _summary(result):
    return (
        result.lines.to_dict(),
        [
            (
                launch.launch_id,
                launch.engine,
                launch.outcome,
                launch.started_at,
                launch.ready_at,
                launch.to_dict().get("kv_tokens"),
                launch.to_dict().get("num_gpu_blocks"),
                launch.warnings,
                [r.to_dict() for r in launch.ranks],
            )
            for launch in result.launches
        ],
        [(u.line_no, u.reason, u.text) for u in result.unrecognized],
    )


def both_paths(tmp_path, text: str, name: str = "pasted.log"):
    """The result of the record path, after checking that the bulk path gives the same and that
    every line is accounted for."""
    path = tmp_path / name
    path.write_text(text)
    records = parse_sources(open_inputs([str(path)]), bulk=False)
    vectorized = parse_sources(open_inputs([str(path)]), bulk="force", block_bytes=1 << 12)
    assert _summary(vectorized) == _summary(records)
    lc = records.lines
    assert lc.total == text.count("\n")
    assert lc.parsed + lc.noise + lc.unrecognized + lc.other_units == lc.total
    return records


def _figures(result):
    """What a launch says, without the times (a wrapper may date a line the engine left undated)."""
    out = []
    for launch in result.launches:
        d = launch.to_dict()
        keys = ("engine", "outcome", "engine_version_range", "kv_tokens", "num_gpu_blocks", "max_concurrency")
        ranks = [{k: v for k, v in r.items() if k != "extra"} for r in d["ranks"]]
        out.append(({k: d.get(k) for k in keys}, ranks))
    return out


# ------------------------------------------------------------------------------- the wrapper table


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=[w.name for w in WRAPPERS])
def test_every_wrapper_sample_peels_to_an_engine_line(wrapper):
    """Each spec's own samples lose the wrapper, and what is left is a line an engine printed."""
    assert wrapper.samples
    for sample in wrapper.samples:
        line = ("2025-11-20T14:02:40.000000Z " if wrapper.name == "gitlab" else "") + sample
        rec = LineParser(text_source("x", ""), "plain").parse(1, line.encode())
        assert isinstance(rec, Record)
        assert rec.text is not None and engine_starts(rec.text.encode(), 0), (wrapper.name, rec.text)
        assert not rec.text.endswith(("│", "║", "|", " ")), rec.text
        res = LineClassifier().classify(rec)
        assert res.status == "parsed", (wrapper.name, res.reason, rec.text)


@pytest.mark.parametrize("engine", sorted(ENGINE_SAMPLES))
@pytest.mark.parametrize("wrapper", sorted(WRAP))
def test_wrapped_paste_reads_as_the_bare_one(tmp_path, engine, wrapper):
    """A paste wrapped line by line gives the launches, figures and line counts of the same paste unwrapped."""
    text = ENGINE_SAMPLES[engine]
    plain = both_paths(tmp_path, text, "plain.log")
    wrapped = both_paths(tmp_path, _wrapped(text, WRAP[wrapper]), "wrapped.log")
    assert plain.launches and plain.lines.unrecognized == 0
    assert _figures(wrapped) == _figures(plain)
    assert wrapped.lines.to_dict() == plain.lines.to_dict()


@pytest.mark.parametrize("wrapper", ["buildkite", "github-actions", "fastchat", "buildkite-apc"])
def test_the_gutters_time_dates_the_record(wrapper):
    """vLLM's stamp has no year and a bare message no stamp at all: the gutter's time dates them."""
    for text in (VLLM_V1, VLLM_V1_BARE):
        (launch,) = parse_sources([text_source("x", _wrapped(text, WRAP[wrapper]), mtime=0.0)]).launches
        assert launch.started_at.startswith("2025-11-20T14:"), (wrapper, launch.started_at)


def test_buildkite_stamp_with_an_offset_is_read_in_utc():
    rec = LineParser(text_source("x", ""), "plain").parse(
        1, b"[2025-11-20T16:02:40+02:00] Loading model weights took 13.4921 GB"
    )
    assert rec.ts == 1763647360.0 and rec.text == "Loading model weights took 13.4921 GB"


def test_fastchat_time_is_local_and_says_so():
    result = parse_sources([text_source("x", _wrapped(VLLM_V1, WRAP["fastchat"]))])
    assert any("fastchat; local time read as UTC" in w for w in result.warnings)
    assert not any("Docker Desktop" in w for w in result.warnings)


def test_buildkite_stamps_do_not_take_the_sglang_hot_path(tmp_path):
    """``[2025-11-20T…Z] `` starts like SGLang's ``[2025-11-20 …] ``: the hot path must not take it."""
    text = _wrapped(SGLANG, WRAP["buildkite"])
    result = both_paths(tmp_path, text)
    (launch,) = result.launches
    assert launch.outcome == "ready" and launch.max_total_num_tokens == 402112
    assert launch.started_at == "2026-03-02T10:00:01"  # SGLang's own stamp is the event's time


# ------------------------------------------------------------------------------- bare vLLM messages


def test_bare_v0_paste_is_a_vllm_launch_with_its_figures(tmp_path):
    result = both_paths(tmp_path, VLLM_V0_BARE)
    assert result.lines.parsed == 4
    (launch,) = result.launches
    d = launch.to_dict()
    assert (d["engine"], d["engine_generation"], d["engine_version_range"]) == ("vllm", "V0", "0.6.4")
    assert (d["num_gpu_blocks"], d["kv_tokens"], d["max_model_len"], d["max_concurrency"]) == (
        27532,
        440512,
        32768,
        13.44,
    )
    assert d["gpu_memory_utilization"] == 0.9
    (rank,) = d["ranks"]
    assert (rank["weights_gb"], rank["kv_size_gb"], rank["non_torch_gb"]) == (14.9826, 53.77, 0.51)


def test_bare_v1_paste_is_a_ready_vllm_launch(tmp_path):
    result = both_paths(tmp_path, VLLM_V1_BARE)
    assert result.lines.parsed == 7
    (launch,) = result.launches
    d = launch.to_dict()
    assert (d["engine"], d["engine_generation"], d["outcome"]) == ("vllm", "V1", "ready")
    assert (d["kv_tokens"], d["max_concurrency"]) == (269136, 8.21)
    (rank,) = d["ranks"]
    assert (rank["weights_gb"], rank["kv_size_gb"], rank["graph_gb"]) == (27.6543, 41.07, 0.52)


def test_bare_message_with_an_unknown_wording_is_a_near_miss(tmp_path):
    text = "Loading model weights took fourteen GB\nMaximum concurrency for 32768 tokens per request: about 13x\n"
    result = both_paths(tmp_path, text)
    assert result.lines.unrecognized == 2
    assert all(u.reason.startswith("near miss (vLLM may print") for u in result.unrecognized)


def test_a_vllm_word_inside_a_line_is_no_bare_message(tmp_path):
    """Start-anchored: a line that only mentions vLLM's words is not vLLM's."""
    text = "the notebook printed: Loading model weights took 14.98 GB\nsee # GPU blocks: 27532, # CPU blocks: 2048\n"
    result = both_paths(tmp_path, text)
    assert not result.launches and result.lines.unrecognized == 2
    assert all(u.reason == "unknown line" for u in result.unrecognized)


def test_weak_starts_join_but_never_make_a_near_miss():
    """``Route: `` is any web framework's word: when it does not parse it stays an unknown line; so does a
    bare start that names no anchor (its prefixed form is vLLM's other noise, never a near miss)."""
    for text in (
        "Route: something else entirely",
        "Available routes are: none",
        "Cleared 0.15 GiB of scratch space",
    ):
        res = LineClassifier().classify(Record(1, text))
        assert not res.reason.startswith("near miss"), res
    # the patched build's line names its anchor: a wording of it that does not parse is a near miss
    res = LineClassifier().classify(Record(1, "Cleared 0.15 GiB of cached CUDA allocator memory somewhere else"))
    assert res.reason.startswith("near miss"), res


def test_bare_sglang_lines_stay_sglangs(tmp_path):
    """SGLang 0.2's bare lines (rank inside the message) and a SGLang launch's lines are not vLLM's."""
    text = (
        "[gpu_id=0] Load weight begin. avail mem=78.62 GB\n"
        "[gpu_id=0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=53.83 GB\n"
        "[gpu_id=0] max_total_num_tokens=148253, max_prefill_tokens=16384, max_running_requests=4096, context_len=4096\n"
    )
    for wrap in (None, WRAP["pipe-gutter"], WRAP["buildkite"]):
        result = both_paths(tmp_path, text if wrap is None else _wrapped(text, wrap))
        assert [launch.engine for launch in result.launches] == ["sglang"]
        assert result.launches[0].max_total_num_tokens == 148253


_OOM_LOAD = (
    "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, "
    "increasing --tensor-parallel-size, or using --quantization. (original error: CUDA out of memory. Tried to "
    "allocate 1.00 GiB)"
)


@pytest.mark.parametrize(
    ("sglang_kind", "vllm_parses", "want"),
    [
        ("load_end", True, "load_end"),  # SGLang's own event: stays SGLang's
        ("exception", True, "vllm_failure"),  # only a generic one: vLLM's reading wins
        ("exception", False, "exception"),  # vLLM's grammar fails: what SGLang read stays (no near miss)
        (None, False, "near miss"),  # neither reads it: a vLLM near miss
    ],
)
def test_bare_start_and_sglang_anchor_precedence(monkeypatch, sglang_kind, vllm_parses, want):
    """A line with a vLLM bare start that SGLang's anchors also name (``out of memory``): what was
    parsed before stays parsed."""
    from logparse.engines.sglang import classify as sglang_classify
    from logparse.engines.sglang.line import LineParseError
    from logparse.engines.vllm import classify as vllm_classify
    from logparse.engines.vllm.line import VllmLineParseError

    def sglang(text):
        if sglang_kind is None:
            raise LineParseError("no rule")
        return ({"stamp": None, "tags": []}, None, (sglang_kind, {}, None))

    def vllm_fails(text):
        raise VllmLineParseError("no rule")

    monkeypatch.setattr(sglang_classify, "parse_line", sglang)
    if not vllm_parses:
        monkeypatch.setattr(vllm_classify, "parse_line", vllm_fails)
    res = LineClassifier().classify(Record(1, _OOM_LOAD))
    assert res.reason.startswith(want), res


def test_bare_vllm_message_after_an_open_server_args_line_is_not_its_payload():
    clf = LineClassifier()
    first = clf.classify(Record(1, "[2026-03-02 10:00:01] server_args=ServerArgs(model_path='/m', tp_size=1,"))
    assert first.status == "parsed" and clf.continuing
    res = clf.classify(Record(2, "Loading model weights took 14.9826 GB"))
    assert res.reason == "vllm_weights"


# ---------------------------------------------------------------------------- terminal UI borders


def test_tui_frame_rows_are_noise_and_boxed_rows_lose_border_and_padding(tmp_path):
    rows = [_box(line) for line in VLLM_V1.splitlines()]
    top = "┌" + "─" * 30 + " Logs(ml/vllm-7f9c:server)[tail] " + "─" * 30 + "┐"
    bottom = "└" + "─" * 262 + "┘"
    result = both_paths(tmp_path, "\n".join([top, *rows, bottom]) + "\n")
    assert result.lines.to_dict()["noise"] == 2 and result.lines.unrecognized == 0
    (launch,) = result.launches
    assert launch.to_dict()["kv_tokens"] == 269136


def test_a_boxed_traceback_keeps_its_indentation(tmp_path):
    lines = [
        "INFO 11-20 14:02:51 [gpu_worker.py:227] Available KV cache memory: 41.07 GiB",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/runpy.py", line 198, in _run_module_as_main',
        "    return _run_code(code, main_globals, None,",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB",
    ]
    result = both_paths(tmp_path, "".join(_box(line) + "\n" for line in lines))
    assert result.lines.unrecognized == 0
    assert result.lines.noise == 2  # the frame and its source line, read as a traceback's


def test_a_boxed_row_with_a_stray_carriage_return_loses_it_with_the_border():
    rec = LineParser(text_source("x", ""), "plain").parse(
        1, (_box("Available KV cache memory: 41.07 GiB") + "\r").encode()
    )
    assert rec.text == "Available KV cache memory: 41.07 GiB"


def test_a_row_that_lost_its_right_border_is_read_after_the_box_is_known():
    parser = LineParser(text_source("x", ""), "plain")
    first = parser.parse(1, _box("Loading model weights took 14.9826 GB").encode())
    cut = parser.parse(2, "│ some text the viewer cut".encode())
    assert first.text == "Loading model weights took 14.9826 GB" and cut.text == "some text the viewer cut"


# ---------------------------------------------------------------------------- what is not a wrapper


@pytest.mark.parametrize(
    "line",
    [
        "| kv_cache_size | 53.77 |",  # a markdown table
        "| # GPU blocks | 27532 |",
        "  | not an engine line",
        "[2025-07-18 06:32:49,159] LMCache INFO: Creating LMCacheEngine with config",  # space and comma: no Buildkite stamp
        "│ a box row about nothing",  # a lone left border, no engine text behind it
        "> a quoted remark about Loading model weights took 14.98 GB",
    ],
)
def test_near_misses_of_a_wrapper_keep_their_text(line):
    rec = LineParser(text_source("x", ""), "plain").parse(1, line.encode())
    assert rec.text == line and rec.ts is None


def test_no_level_no_fastchat_layer():
    rec = LineParser(text_source("x", ""), "plain").parse(
        1, b"2025-11-20 14:02:40 | stdout | Loading model weights took 14.9826 GB"
    )
    assert rec.text is not None and not rec.text.startswith("Loading") and not any("fastchat" in n for n in rec.notes)


def test_an_ambiguous_gutter_once_confirmed_is_peeled_from_the_lines_after(tmp_path):
    """A traceback behind a ``  | `` gutter stays a traceback (its frames start with no engine text)."""
    text = _wrapped(
        "# GPU blocks: 0, # CPU blocks: 2048\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
        "    return _run_code(code, main_globals, None,\n",
        WRAP["pipe-gutter"],
    )
    result = both_paths(tmp_path, text)
    assert result.lines.unrecognized == 0 and result.lines.noise == 2


def test_ci_runner_lines_are_noise(tmp_path):
    text = "~~~ Running vllm serve\n--- :python: tests\n+++ :rocket: Serving\n" + _wrapped(VLLM_V1, WRAP["buildkite"])
    gha = "2025-11-20T14:02:40.1234567Z ##[group]Run vllm serve\n2025-11-20T14:02:49.1234567Z ##[endgroup]\n"
    for t in (text, gha + _wrapped(VLLM_V1_BARE, WRAP["github-actions"])):
        result = both_paths(tmp_path, t)
        assert result.lines.unrecognized == 0 and result.lines.noise in (2, 3)
        assert [launch.engine for launch in result.launches] == ["vllm"]


# ------------------------------------------------------------------- every vLLM variant, pasted bare

#: The kinds a paste of bare messages must keep (figures and outcomes of a launch).
_BARE_KINDS = {
    "vllm_version",
    "vllm_args",
    "vllm_engine_init",
    "vllm_weights",
    "vllm_profile",
    "vllm_kv_memory",
    "vllm_blocks",
    "vllm_kv_tokens",
    "vllm_concurrency",
    "vllm_graph",
    "vllm_init_engine",
    "vllm_failure",
    "vllm_engine_failed",
}


def test_every_vllm_variant_pasted_without_its_prefix_reads_as_the_same_event():
    """A variant's message with vLLM's layers cut: when its first words say it is vLLM's, it reads as the
    same event (the start never misleads); the kinds a launch is made of are all readable bare."""
    from logparse.engines.vllm.classify import BARE_MESSAGE_RE
    from logparse.engines.vllm.prefix import split_head
    from logparse.engines.vllm.variants import VARIANTS

    read = set()
    for v in VARIANTS:
        _tags, _rank, _lp, end = split_head(v.sample)
        message = v.sample[end:]
        res = LineClassifier().classify(Record(1, message))
        if BARE_MESSAGE_RE.match(message) and not v.kind.startswith(("uvicorn", "exception")):
            assert (res.status, res.reason) == ("parsed", v.kind), (v.name, message, res.reason)
            read.add(v.kind)
    missing = {k for k in _BARE_KINDS if any(v.kind == k for v in VARIANTS)} - read
    assert not missing, f"no bare start reads these kinds: {sorted(missing)}"
