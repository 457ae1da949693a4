"""Two forms users paste that logparse once missed (issue 27, item 5): the millisecond stamps of
NVIDIA's NIM images (vLLM 0.4.x inside: ``INFO MM-DD HH:MM:SS.mmm file.py:N] ``) and a hand-abridged
``server_args`` (``...`` or ``…`` in place of fields).

Every sample here is written by us, in the real formats, with our own numbers; each goes through the
record path and the bulk path (``tests/test_pasted.py``'s ``both_paths``).
"""

from __future__ import annotations

import pytest
from test_pasted import both_paths

from logparse.engines.vllm import prefix as vllm_prefix
from logparse.grammar.pyliteral import is_abridged, parse_literal

NIM = """\
INFO 03-14 09:41:07.212 ngc_profile.py:222] Running NIM without LoRA. Only looking for compatible profiles that do not support LoRA.
INFO 03-14 09:41:09.518 llm_engine.py:98] Initializing an LLM engine (v0.4.1) with config: model='/opt/nim/.cache/llama3-8b-instruct', speculative_config=None, tokenizer='/opt/nim/.cache/llama3-8b-instruct', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=8192, download_dir=None, load_format=auto, tensor_parallel_size=2, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, quantization_param_path=None, device_config=cuda, decoding_config=DecodingConfig(guided_decoding_backend='outlines'), seed=0)
INFO 03-14 09:41:15.004 model_runner.py:173] Loading model weights took 7.4829 GB
INFO 03-14 09:41:18.377 distributed_gpu_executor.py:45] # GPU blocks: 61203, # CPU blocks: 4096
INFO 03-14 09:41:29.645 model_runner.py:1050] Graph capturing finished in 8 secs.
"""


def test_nim_millisecond_stamps_make_a_launch(tmp_path):
    result = both_paths(tmp_path, NIM)
    assert not result.unrecognized
    (launch,) = result.launches
    assert launch.engine == "vllm" and launch.engine_version == "0.4.1" and launch.tp_size == 2
    assert launch.num_gpu_blocks == 61203 and launch.kv_tokens == 61203 * 16
    assert launch.started_at.endswith("09:41:09.518")


@pytest.mark.parametrize(
    "line",
    [
        "INFO 03-14 09:41:18.377 gpu_executor.py:119] # GPU blocks: 27641, # CPU blocks: 2048",
        "INFO 03-14 09:41:18 gpu_executor.py:119] # GPU blocks: 27641, # CPU blocks: 2048",
    ],
)
def test_the_log_prefix_reads_seconds_with_or_without_milliseconds(line):
    m = vllm_prefix.LOG_PREFIX_RE.match(line)
    assert m is not None and line[m.end() :].startswith("# GPU blocks")
    assert vllm_prefix.LOG_PREFIX_SEARCH_RE.search("pasted: " + line) is not None


def _sglang(args_line: str) -> str:
    return (
        args_line
        + "\n[2025-07-02 10:00:09 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=60.10 GB, mem usage=36.20 GB.\n"
        "[2025-07-02 10:00:10 TP0] KV Cache is allocated. #tokens: 401224, K size: 10.71 GB, V size: 10.71 GB\n"
    )


@pytest.mark.parametrize(
    "payload",
    [
        "ServerArgs(model_path='/models/qwen', ..., tp_size=4, ...)",
        "ServerArgs(model_path='/models/qwen', tokenizer_path='/models/qwen', … tp_size=4, stream_interval=1 …)",
        "ServerArgs(... tp_size=4 ...)",
        "ServerArgs(model_path='/models/qwen', …, tp_size=4)",
    ],
)
def test_an_abridged_server_args_gives_its_tp(tmp_path, payload):
    result = both_paths(tmp_path, _sglang(f"[2025-07-02 10:00:01] server_args={payload}"))
    (launch,) = result.launches
    assert launch.tp_size == 4
    assert any("server_args is abridged" in w and "unknown, not the defaults" in w for w in launch.warnings)


def test_an_abridged_dict_and_a_string_with_dots():
    value = parse_literal("{'model_path': '/models/qwen', ..., 'tp_size': 4, ...}")
    assert value == {"model_path": "/models/qwen", "tp_size": 4} and is_abridged(value)
    whole = parse_literal("ServerArgs(model_path='/models/q...', tp_size=4)")
    assert whole == {"model_path": "/models/q...", "tp_size": 4} and not is_abridged(whole)
