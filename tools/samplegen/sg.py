"""Helpers for writing the logparse sample logs (see make_samples.py).

Everything here renders SGLang's real line formats (from the catalogue in
../shared/sglang-log-catalogue.md) with invented numbers.  Nothing is copied
from the genuine corpus: only ServerArgs field names/orders and default values
(facts about the dataclass) are kept in serverargs_ref.json.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # repo root
GiB = 1 << 30

# --------------------------------------------------------------------------
# ServerArgs field sets
# --------------------------------------------------------------------------

with open(os.path.join(ROOT, "grammars", "sglang", "versions.json")) as _fh:
    VERSIONS = json.load(_fh)
with open(os.path.join(HERE, "serverargs_ref.json")) as _fh:
    REF = json.load(_fh)


def fieldset(version: str) -> list[str]:
    """Replay the '+'/'-' changes up to `version` (replay order)."""
    fields: list[str] = []
    for rel in VERSIONS["versions"]:
        ch = VERSIONS["changes"].get(rel, {})
        for f in ch.get("-", []):
            if f in fields:
                fields.remove(f)
        for f in ch.get("+", []):
            if f not in fields:
                fields.append(f)
        if rel == version:
            return fields
    raise KeyError(version)


# Declaration order of the 0.2.x dataclass (as in the catalogue's 0.2.x example, completed).
ORDER_025 = [
    "model_path",
    "tokenizer_path",
    "tokenizer_mode",
    "load_format",
    "dtype",
    "trust_remote_code",
    "context_length",
    "quantization",
    "chat_template",
    "host",
    "port",
    "additional_ports",
    "mem_fraction_static",
    "max_prefill_tokens",
    "max_running_requests",
    "schedule_heuristic",
    "schedule_conservativeness",
    "tp_size",
    "stream_interval",
    "random_seed",
    "log_level",
    "log_level_http",
    "log_requests",
    "show_time_cost",
    "api_key",
    "dp_size",
    "load_balance_method",
    "nccl_init_addr",
    "nnodes",
    "node_rank",
    "disable_flashinfer",
    "disable_radix_cache",
    "disable_regex_jump_forward",
    "disable_cuda_graph",
    "disable_disk_cache",
    "enable_torch_compile",
    "attention_reduce_in_fp32",
    "enable_p2p_check",
    "efficient_weight_load",
]


def _merge_orders(base: list[str], other: list[str]) -> list[str]:
    """`base` order first; fields only in `other` go right after their predecessor in `other`."""
    out = list(base)
    seen = set(out)
    prev = None
    for f in other:
        if f not in seen:
            pos = out.index(prev) + 1 if prev is not None else 0
            out.insert(pos, f)
            seen.add(f)
        prev = f
    return out


def old_order() -> list[str]:
    """Reference order for 0.3.x/0.4.x: the 0.2.x declaration order completed with the modern one."""
    return _merge_orders(ORDER_025, REF["orders"]["0.5.10.post1"])


def ordered_fields(version: str, ref: str | list[str]) -> list[str]:
    """Field set of `version`, in the order of a reference declaration order; fields
    unknown to the reference are inserted after their predecessor in replay order."""
    fs = fieldset(version)
    ref_list = ref if isinstance(ref, list) else REF["orders"][ref]
    present = set(fs)
    result = [f for f in ref_list if f in present]
    seen = set(result)
    for i, f in enumerate(fs):
        if f in seen:
            continue
        j = i - 1
        while j >= 0 and fs[j] not in seen:
            j -= 1
        pos = result.index(fs[j]) + 1 if j >= 0 else 0
        result.insert(pos, f)
        seen.add(f)
    assert sorted(result) == sorted(fs), version
    return result


# Defaults for fields that only old releases have (repr strings).
OLD_DEFAULTS = {
    "additional_ports": "None",
    "attention_reduce_in_fp32": "False",
    "disable_disk_cache": "False",
    "disable_flashinfer": "False",
    "disable_regex_jump_forward": "False",
    "efficient_weight_load": "False",
    "nccl_init_addr": "None",
    "schedule_heuristic": "'lpm'",
    "disable_flashinfer_sampling": "False",
    "file_storage_pth": "'SGLang_storage'",
    "max_torch_compile_bs": "32",
    "disable_mla": "False",
    "disable_jump_forward": "False",
    "enable_ep_moe": "False",
    "enable_deepep_moe": "False",
    "max_micro_batch_size": "None",
    "pdlb_url": "None",
    "impl": "'auto'",
    "debug_tensor_dump_prefill_only": "False",
    "disable_overlap_cg_plan": "False",
    "enable_flashinfer_moe": "False",
    "hybrid_kvcache_ratio": "None",
    "prefill_round_robin_balance": "False",
    "load_watch_interval": "0.1",
    "dllm_block_size": "None",
    "enable_flashinfer_autotune": "False",
    "enable_breakable_cuda_graph": "False",
    "record_nolora_graph": "True",
    "enable_gdn_replayssm_spec": "False",
    "max_num_reqs": "None",
    "enable_mla": "False",
    "disable_penalizer": "False",
    "disable_nan_detection": "False",
    "enable_overlap_schedule": "False",
}

# Values that differ on a CUDA machine from the CPU-backend defaults in the reference data.
GPU_DEFAULTS = {
    "device": "'cuda'",
    "attention_backend": "'flashinfer'",
    "sampling_backend": "'flashinfer'",
    "triton_attention_num_kv_splits": "8",
    "mamba_backend": "'triton'",
}


def _rel_index(v: str) -> int:
    return VERSIONS["versions"].index(v)


def _default(field: str, version: str) -> str:
    """Default value (repr) of `field`, from the reference release nearest to `version`."""
    if field in GPU_DEFAULTS:
        return GPU_DEFAULTS[field]
    vi = _rel_index(version)
    refs = sorted(
        REF["values"],
        key=lambda n: (abs(_rel_index(REF["ref_release"][n]) - vi), _rel_index(REF["ref_release"][n]) > vi),
    )
    for n in refs:
        if field in REF["values"][n]:
            return REF["values"][n][field]
    if field in OLD_DEFAULTS:
        return OLD_DEFAULTS[field]
    raise KeyError(field)


# Applied to every sample (the reference values come from CPU-backend runs with --max-total-tokens).
BASE_OVERRIDES = {
    "max_total_tokens": "None",
    "kv_cache_dtype": "'auto'",
    "tp_size": "1",
    "dp_size": "1",
    "device": "'cuda'",
    "decode_log_interval": "40",
    "mem_fraction_static": "None",
    "chunked_prefill_size": "8192",
    "max_prefill_tokens": "16384",
    "reasoning_parser": "None",
    "tool_call_parser": "None",
}


def _with_base(version: str, fields: list[str], overrides: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, v in BASE_OVERRIDES.items() if k in fields}
    out.update(overrides)
    return out


def server_args_dataclass(version: str, ref, overrides: dict[str, str]) -> str:
    fields = ordered_fields(version, ref)
    unknown = set(overrides) - set(fields)
    assert not unknown, (version, unknown)
    overrides = _with_base(version, fields, overrides)
    parts = [f"{f}={overrides[f] if f in overrides else _default(f, version)}" for f in fields]
    return "server_args=ServerArgs(" + ", ".join(parts) + ")"


def server_args_dict(version: str, ref, overrides: dict[str, str]) -> str:
    """Dict era (0.5.19+): values are given as repr strings too."""
    fields = ordered_fields(version, ref)
    unknown = set(overrides) - set(fields)
    assert not unknown, (version, unknown)
    overrides = _with_base(version, fields, overrides)
    parts = [f"{f!r}: {overrides[f] if f in overrides else _default(f, version)}" for f in fields]
    return "server_args={" + ", ".join(parts) + "}"


def r(v) -> str:
    """Python repr, as SGLang prints field values."""
    return repr(v)


# --------------------------------------------------------------------------
# Event stream -> lines
# --------------------------------------------------------------------------


class Log:
    """Collects events (time offset in seconds, text) and renders them in time order.

    `prefix_style`: 'none' (0.2.0-0.2.13), 'hms' (0.2.14-0.3.3.post1), 'ymd' (0.3.4+).
    """

    def __init__(self, start: _dt.datetime, prefix_style: str, seed: int = 0):
        self.start = start
        self.style = prefix_style
        self.events: list[tuple[float, int, str]] = []
        self.n = 0
        self.rng = random.Random(seed)

    def ts(self, t: float) -> str:
        d = self.start + _dt.timedelta(seconds=t)
        if self.style == "hms":
            return d.strftime("%H:%M:%S")
        return d.strftime("%Y-%m-%d %H:%M:%S")

    def _add(self, t: float, text: str):
        self.n += 1
        self.events.append((t, self.n, text))

    def log(self, t: float, msg: str, tag: str = ""):
        """An SGLang logger record (main process if tag == '')."""
        if self.style == "none":
            self._add(t, msg)
        else:
            pre = self.ts(t) + (" " + tag if tag else "")
            self._add(t, f"[{pre}] {msg}")

    def raw(self, t: float, text: str):
        """Anything printed without SGLang's formatter (warnings, tqdm, uvicorn <=0.3.3, gloo...)."""
        self._add(t, text)

    def vllm(self, t: float, level: str, where: str, msg: str):
        """A vLLM-logger record (0.2.x-0.3.x import vLLM): `INFO 07-22 10:14:06 file.py:NN] msg`."""
        d = self.start + _dt.timedelta(seconds=t)
        self._add(t, f"{level} {d.strftime('%m-%d %H:%M:%S')} {where}] {msg}")

    def uvicorn(self, t: float, msg: str):
        if self.style in ("none", "hms"):
            self._add(t, f"INFO:     {msg}")
        else:
            self._add(t, f"[{self.ts(t)}] INFO:     {msg}")

    def render(self) -> str:
        ev = sorted(self.events, key=lambda e: (e[0], e[1]))
        return "".join(text + "\n" for _, _, text in ev)


# --------------------------------------------------------------------------
# tqdm
# --------------------------------------------------------------------------

_BLOCKS = " \u258f\u258e\u258d\u258c\u258b\u258a\u2589\u2588"


def _interval(s: float) -> str:
    s = int(s)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def _bar(frac: float, width: int = 10) -> str:
    nsyms = len(_BLOCKS) - 1
    full, part = divmod(int(frac * width * nsyms), nsyms)
    b = _BLOCKS[-1] * full
    if full < width:
        b += _BLOCKS[part] + " " * (width - full - 1)
    return b


def _rate(n: int, elapsed: float) -> tuple[str, str]:
    if n == 0 or elapsed <= 0:
        return "?it/s", "?"
    rate = n / elapsed
    fmt = f"{1 / rate:5.2f}s/it" if 1 / rate > 1 else f"{rate:5.2f}it/s"
    return fmt, rate


def tqdm_state(n: int, total: int, elapsed: float, desc: str = "", style: str = "bar") -> str:
    frac = n / total
    rate_fmt, rate = _rate(n, elapsed)
    remaining = "?" if rate == "?" else _interval((total - n) / rate)
    if style == "shards":  # SGLang/vLLM weight-loader bar format
        return f"{desc}: {frac * 100:3.0f}% Completed | {n}/{total} [{_interval(elapsed)}<{remaining}, {rate_fmt}]"
    l_bar = (desc + ": " if desc else "") + f"{frac * 100:3.0f}%|"
    return f"{l_bar}{_bar(frac)}| {n}/{total} [{_interval(elapsed)}<{remaining}, {rate_fmt}]"


def tqdm_line(states: list[str], repeat_last: bool = False) -> str:
    """One physical line as tqdm leaves it on a non-TTY stderr: '\\r'-separated refreshes."""
    if repeat_last:
        states = states + [states[-1]]
    return "".join("\r" + s for s in states)


def shards_bar(
    total: int,
    seconds: float,
    desc: str = "Loading safetensors checkpoint shards",
    rng: random.Random | None = None,
    every: int = 1,
    repeat_last: bool = False,
) -> str:
    rng = rng or random.Random(total)
    per = seconds / total
    states = [tqdm_state(0, total, 0.0, desc, "shards")]
    t = 0.0
    for i in range(1, total + 1):
        t += per * rng.uniform(0.8, 1.2)
        if i % every == 0 or i == total:
            states.append(tqdm_state(i, total, t, desc, "shards"))
    return tqdm_line(states, repeat_last)


def capture_bar(bs_list: list[int], mems: list[float], seconds: float, version_style: str) -> str:
    """`Capturing batches (...)` bar. bs_list in capture order (largest first); mems: avail before each.

    version_style: 'plain' (0.4.0.post2-0.4.4), 'avail' (0.4.4.post1-0.4.8), 'bs' (0.4.8.post1+)."""
    total = len(bs_list)
    states = [tqdm_state(0, total, 0.0)]
    per = seconds / total
    for i, (bs, m) in enumerate(zip(bs_list, mems)):
        if version_style == "plain":
            desc = ""
        elif version_style == "avail":
            desc = f"Capturing batches (avail_mem={m:.2f} GB)"
        else:
            desc = f"Capturing batches (bs={bs} avail_mem={m:.2f} GB)"
        states.append(tqdm_state(i, total, per * i, desc))
    states.append(tqdm_state(total, total, seconds, desc))
    return tqdm_line(states)


# --------------------------------------------------------------------------
# Memory bookkeeping
# --------------------------------------------------------------------------


def f2(x: float) -> str:
    return f"{x:.2f}"


def kv_tokens_era_a(m_post: float, m_pre: float, f: float, cell: int) -> int:
    """Era A (<=0.5.6.post2): int(rest * 2**30 // cell) on a float."""
    rest = m_post - m_pre * (1 - f)
    return int(rest * GiB // cell)


def kv_tokens_era_bc(m_post: float, m_pre: float, f: float, cell: int) -> int:
    """Era B/C (0.5.7+): int(rest * 2**30) // cell."""
    rest = m_post - m_pre * (1 - f)
    return int(rest * GiB) // cell


def page_round(t: int, page: int) -> int:
    return t // page * page


def mha_sizes(
    tokens: int, page: int, kv_heads: int, head_dim: int, layers: int, nbytes: int, v_head_dim: int | None = None
) -> tuple[float, float]:
    v_head_dim = head_dim if v_head_dim is None else v_head_dim
    k = (tokens + page) * kv_heads * head_dim * layers * nbytes / GiB
    v = (tokens + page) * kv_heads * v_head_dim * layers * nbytes / GiB
    return k, v


def mla_size(tokens: int, page: int, latent: int, layers: int, nbytes: int) -> float:
    return (tokens + page) * latent * layers * nbytes / GiB


def ceil_to(x: float, nd: int) -> float:
    p = 10**nd
    return math.ceil(x * p) / p


class Clocks:
    """Per-rank clocks: ranks run the same steps with their own jitter; collectives re-align them."""

    def __init__(self, n: int, t0: float, spread: float, rng: random.Random):
        self.rng = rng
        self.t = [t0 + (rng.uniform(0, spread) if g else 0.0) for g in range(n)]

    def step(self, g: int, lo: float, hi: float) -> float:
        self.t[g] += self.rng.uniform(lo, hi)
        return self.t[g]

    def sync(self, lo: float = 0.0, hi: float = 0.3, at: float | None = None):
        base = max(self.t) if at is None else max(max(self.t), at)
        self.t = [base + self.rng.uniform(lo, hi) for _ in self.t]
