"""SGLang launches in SGLang's real format (0.5.22 wording, dict ``server_args``) for store tests.

The lines follow /work/shared/sglang-log-catalogue.md §1-2 and the genuine logs of the
corpus; figures are made up but consistent (memory falls as SGLang allocates).
"""

from __future__ import annotations

from datetime import datetime, timedelta

BASE_ARGS = {
    "model_path": "/models/Qwen3-32B",
    "tokenizer_path": "/models/Qwen3-32B",
    "tokenizer_mode": "auto",
    "load_format": "auto",
    "trust_remote_code": False,
    "context_length": None,
    "dtype": "auto",
    "kv_cache_dtype": "auto",
    "mem_fraction_static": 0.85,
    "max_running_requests": None,
    "max_total_tokens": None,
    "chunked_prefill_size": 8192,
    "max_prefill_tokens": 16384,
    "schedule_policy": "fcfs",
    "page_size": 1,
    "device": "cuda",
    "tp_size": 1,
    "pp_size": 1,
    "dp_size": 1,
    "ep_size": 1,
    "random_seed": 12345,
    "host": "0.0.0.0",
    "port": 30000,
    "nccl_port": None,
    "speculative_algorithm": None,
    "enable_hierarchical_cache": False,
    "enable_dp_attention": False,
    "log_level": "info",
    "cuda_graph_max_bs": 256,
    "disable_cuda_graph": False,
}


def launch_lines(
    start: datetime,
    *,
    mem_fraction_static: float = 0.85,
    kv_tokens: int = 283501,
    random_seed: int = 12345,
    port: int = 30000,
    runtime: int = 4,
    pid: int = 20817,
    ready: bool = True,
    extra_args: dict | None = None,
) -> list[str]:
    """One launch: server_args, one TP rank's startup, the ready line and ``runtime`` batch lines."""
    args = dict(BASE_ARGS, mem_fraction_static=mem_fraction_static, random_seed=random_seed, port=port)
    args.update(extra_args or {})
    t = start
    out: list[str] = []

    def line(msg: str, tag: str = "", step: float = 1.0) -> None:
        nonlocal t
        stamp = t.strftime("%Y-%m-%d %H:%M:%S")
        out.append(f"[{stamp}{(' ' + tag) if tag else ''}] {msg}")
        t += timedelta(seconds=step)

    kv_gb = round(kv_tokens * 2 * 64 * 1024 / 2**30 / 2, 2)  # K and V halves
    after_load = 47.68
    after_pool = round(after_load - 2 * kv_gb, 2)
    line("Attention backend not specified. Use fa3 backend by default.", step=0)
    line("server_args=" + repr(args), step=2)
    line("Init parallel begin.", step=0)
    line("Init parallel ends. elapsed=0.31 s", step=0)
    line("Memory baseline taken. mem usage=0.79 GB")
    line("Load weight begin. avail mem=78.30 GB", step=9)
    line(f"Load weight end. elapsed=9.42 s, type=Qwen3ForCausalLM, avail mem={after_load:.2f} GB, mem usage=30.62 GB.")
    line(
        f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {kv_tokens}, K size: {kv_gb:.2f} GB, "
        f"V size: {kv_gb:.2f} GB",
        step=0,
    )
    line(f"Memory pool end. avail mem={after_pool:.2f} GB")
    line(
        "Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
        f"avail mem={after_pool - 0.05:.2f} GB",
        step=7,
    )
    line(
        "Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 16, 32, 64, 128, 256], elapsed=7.90 s, "
        f"mem usage=0.61 GB, avail mem={after_pool - 0.66:.2f} GB."
    )
    line(
        f"max_total_num_tokens={kv_tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        f"max_running_requests=3543, context_len=40960, available_gpu_mem={after_pool - 0.66:.2f} GB"
    )
    line(f"INFO:     Started server process [{pid}]", step=0)
    line("INFO:     Waiting for application startup.", step=0)
    line("INFO:     Application startup complete.", step=0)
    line("INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    if ready:
        line("The server is fired up and ready to roll!", step=5)
    for i in range(runtime):
        line(
            f"Decode batch, #running-req: {i + 1}, #token: {6800 + 40 * i}, token usage: {0.01 * (i + 1):.2f}, "
            f"cuda graph: True, gen throughput (token/s): 61.72, #queue-req: 0",
            step=3,
        )
    return out


def journal_short_iso(
    lines: list[str], *, host: str = "gpu-1", pid: int = 20817, unit_started: bool = True, start: datetime | None = None
) -> list[str]:
    """The lines as ``journalctl -o short-iso`` prints a service's output."""
    out = []
    if unit_started:
        stamp = (start or datetime(2026, 5, 18, 9, 0, 0)).strftime("%Y-%m-%dT%H:%M:%S+0000")
        out.append(f"{stamp} {host} systemd[1]: Started sglang.service - SGLang server.")
    for ln in lines:
        stamp = ln[1:20].replace(" ", "T") + "+0000" if ln.startswith("[20") else "2026-05-18T09:00:00+0000"
        out.append(f"{stamp} {host} python3[{pid}]: {ln}")
    return out


def three_launches() -> str:
    """Three launches of one deployment: mem_fraction_static 0.85 -> 0.88 (more KV) -> 0.88 again."""
    day = datetime(2026, 5, 18, 9, 0, 0)
    a = launch_lines(day, mem_fraction_static=0.85, kv_tokens=283501, random_seed=1, pid=100)
    b = launch_lines(
        day + timedelta(hours=1), mem_fraction_static=0.88, kv_tokens=310000, random_seed=2, port=30001, pid=200
    )
    c = launch_lines(day + timedelta(hours=2), mem_fraction_static=0.88, kv_tokens=310000, random_seed=3, pid=300)
    return (
        "\n".join(
            a
            + ["[2026-05-18 09:30:00] SIGTERM received. signum=None frame=None. Draining requests and shutting down..."]
            + b
            + c
        )
        + "\n"
    )


def split_launches(text: str) -> list[str]:
    """The launches of a log such as ``three_launches()`` as separate logs (each starts at its server_args line)."""
    parts: list[list[str]] = [[]]
    seen = False
    for line in text.splitlines():
        if "server_args=" in line:
            if seen:
                parts.append([])
            seen = True
        parts[-1].append(line)
    return ["\n".join(p) + "\n" for p in parts]
