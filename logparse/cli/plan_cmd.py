"""``logparse plan``: KV tokens before a launch, from a model config, a GPU and the engine's own sizing."""

from __future__ import annotations

from typing import Optional

import typer

from logparse import engines
from logparse.cli.app import EXIT_OK, EXIT_USAGE, allow_quick_exit, app, fail
from logparse.cli.options import engine_names, plan_release
from logparse.cli.output import DOCUMENT_FORMATS, Output, output_options
from logparse.cli.report_cmds import load_config_option, resolve
from logparse.cli.store_options import DB_HELP


def _opt(flag: str, metavar: str | None, help_: str, default=None):
    return typer.Option(default, flag, metavar=metavar, help=help_)


_CONFIG = typer.Argument(..., metavar="MODEL_CONFIG", help="The model's config.json, or its directory.")
_GPU = _opt("--gpu", "NAME", "A GPU of the table (H100, H200, H20, B200, A100 80GB, L40S, MI300X…).")
_GPU_MEMORY = _opt("--gpu-memory", "GIB", "The GPU's total memory in GiB, as the driver reports it.")
_TP = _opt("--tp", "N", "Tensor-parallel size.")
_PP = _opt("--pp", "N", "Pipeline-parallel size.")
_DP = _opt("--dp", "N", "Data-parallel size (each replica its own pool).")
_ENGINE = _opt(
    "--engine",
    "|".join((*engine_names(), "both")),
    f"The engine, or both side by side (default: --from's, else {engines.default().name}).",
)
_RELEASE = _opt("--release", "V", "The engine release (default: the newest, or --from's).")
_FROM = _opt("--from", "LAUNCH", "Calibrate on a launch (a log file, FILE#N, or a store reference).")
_MFS = _opt("--mem-fraction-static", "F", "SGLang's fraction (default: its own for the GPU and flags).")
_GMU = _opt("--gpu-memory-utilization", "U", "vLLM's utilization (default: the release's).")
_KV = _opt("--kv-cache-dtype", "D", "auto, bf16, fp8_e4m3, fp8_e5m2, fp4_e2m1 (vLLM: fp8).")
_CTX = _opt("--context-length", "L", "Context length (vLLM: max_model_len).")
_PAGE = _opt("--page-size", "P", "SGLang's page size (vLLM: the block size).")
_CHUNK = _opt("--chunked-prefill-size", "C", "Chunked prefill (vLLM: max_num_batched_tokens).")
_BS = _opt("--cuda-graph-max-bs", "B", "Largest CUDA-graph batch size.")
_SPEC = _opt("--speculative-algorithm", "A", "EAGLE, EAGLE3, NEXTN, MTP, STANDALONE, NGRAM or none.")
_CAP = _opt("--max-total-tokens", "N", "SGLang: cap the KV pool at N tokens.")
_TOKENS = _opt("--target-tokens", "N", "Solve for the settings that give N KV tokens.")
_TCTX = _opt("--target-context", "L", "Solve for requests of L tokens (× --concurrency).")
_CONC = _opt("--concurrency", "C", "With --target-context: that many requests at once (default 1).")


@app.command()
@output_options(formats=DOCUMENT_FORMATS, extra_help="csv: one row per engine.")
def plan(
    model_config: str = _CONFIG,
    gpu: Optional[str] = _GPU,
    gpu_memory: Optional[float] = _GPU_MEMORY,
    tp: Optional[int] = _TP,
    pp: Optional[int] = _PP,
    dp: Optional[int] = _DP,
    engine: Optional[str] = _ENGINE,
    release: Optional[str] = _RELEASE,
    from_launch: Optional[str] = _FROM,
    mem_fraction_static: Optional[float] = _MFS,
    gpu_memory_utilization: Optional[float] = _GMU,
    kv_cache_dtype: Optional[str] = _KV,
    context_length: Optional[int] = _CTX,
    page_size: Optional[int] = _PAGE,
    chunked_prefill_size: Optional[int] = _CHUNK,
    cuda_graph_max_bs: Optional[int] = _BS,
    speculative_algorithm: Optional[str] = _SPEC,
    max_total_tokens: Optional[int] = _CAP,
    target_tokens: Optional[int] = _TOKENS,
    target_context: Optional[int] = _TCTX,
    concurrency: Optional[int] = _CONC,
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    *,
    out: Output,
) -> None:
    """Plan a launch: KV tokens (with their range), pool, headroom, the context and concurrency that fit, and the
    engine's default fraction; --engine both says why SGLang and vLLM differ; --target-* solves for the flags."""
    from logparse.cli.render_plan import render_plan
    from logparse.reports.plan import PlanError, make_plan
    from logparse.reports.plan_types import PlanFlags

    if gpu and gpu_memory is not None:
        raise fail("give --gpu NAME or --gpu-memory GIB, not both", EXIT_USAGE)
    if target_tokens and target_context:
        raise fail("give --target-tokens or --target-context, not both", EXIT_USAGE)
    if concurrency and not target_context:
        raise fail("--concurrency goes with --target-context", EXIT_USAGE)
    launch = resolve(from_launch, db) if from_launch else None
    chosen = engine.lower() if engine else None
    release = plan_release(chosen or (launch.engine if launch is not None else None) or engines.default().name, release)
    cfg = load_config_option(model_config, named="")  # the argument MODEL_CONFIG, not an option
    args = dict(locals())
    names = set(PlanFlags.__dataclass_fields__) - {"engine", "gpu_memory_gb", "vllm_generation"}
    flags = PlanFlags(engine=chosen, gpu_memory_gb=gpu_memory, **{k: args[k] for k in names})
    try:
        report = make_plan(cfg, flags, launch, db)
    except PlanError as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    out.document(report.to_dict(), report.rows, render_plan)  # type: ignore[arg-type]
    allow_quick_exit()
    raise typer.Exit(EXIT_OK)
