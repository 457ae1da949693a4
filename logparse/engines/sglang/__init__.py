"""SGLang (sgl-project/sglang): its lines, launches, sizing formula per era, reserve, plan and advice.

The engine's parts are imported inside the methods (see :mod:`logparse.engines.base`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logparse.engines.base import Engine, RuntimeTerms

if TYPE_CHECKING:
    from logparse.budget.model import Budget
    from logparse.launches.model import Launch


class SGLang(Engine):
    name = "sglang"
    label = "SGLang"
    article = "an"
    claim_order = 20
    names_unnamed = True
    fraction_flag = "mem_fraction_static"
    fraction_share_of = (
        "the free GPU memory before the weights (SGLang holds back the rest; the weights come out of it)"
    )
    context_flag = "context_length"
    fp8_kv_dtype = "fp8_e4m3"
    args_name = "ServerArgs"
    runtime_kinds = frozenset({"decode_batch", "prefill_batch", "retract"})
    runtime_terms = RuntimeTerms(
        line="batch line", running="#running-req", queue="#queue-req", usage="token usage", tokens="#token"
    )
    opening_kinds = frozenset({"server_args", "init_begin", "launch_dp"})
    start_args_kinds = frozenset({"server_args"})

    def event_kinds(self) -> Any:
        from logparse.engines.sglang.kinds import Kind

        return Kind

    def releases(self) -> tuple[str, ...]:
        from logparse.engines.sglang import versions

        return versions.releases()

    def release_line(self) -> Any:
        from logparse.engines.sglang import versions

        return versions.sglang()

    def arg_default(self, field: str, release: str) -> Any:
        from logparse.engines.sglang import versions

        return versions.default_of(field, release)

    def version_text(self, launch: Launch) -> str:
        return f"SGLang {launch.sglang_version or launch.sglang_version_range or 'unknown version'}"

    def line_start_patterns(self) -> tuple[str, ...]:
        from logparse.engines.sglang import prefix

        return (prefix.BRACKET, prefix.BARE_STARTS)

    def glued_start(self) -> tuple[bytes, Any] | None:
        from logparse.engines.sglang import prefix

        return b"[", prefix.BRACKET_BYTES_RE

    def budget(self, launch: Launch) -> Budget:
        from logparse.engines.sglang.budget import sglang_budget

        return sglang_budget(launch)

    def reserve(self, launch: Launch, budget: Budget) -> Any:
        from logparse.engines.sglang.reserve import launch_reserve

        return launch_reserve(launch, budget.pre_load_avail_gb or budget.least_free_before_weights_gb)

    # ----------------------------------------------------------------- reports (plan, advice, explain, diff, check, metrics)
    plan_order = 0
    plan_flags = ("mem_fraction_static", "max_total_tokens", "cuda_graph_max_bs")
    plan_sized_from_free_memory = True

    def plan(self, cfg: Any, flags: Any, mem: Any, launch: Launch | None, budget: Budget | None) -> Any:
        from logparse.engines.sglang.plan import sglang_plan

        return sglang_plan(cfg, flags, mem, launch, budget)

    def plan_flag_instead(self, flag: str) -> str:
        return "mem_fraction_static" if flag == "gpu_memory_utilization" else super().plan_flag_instead(flag)

    def levers(self, ctx: Any) -> list[Any]:
        from logparse.engines.sglang.advice import levers

        return levers(ctx)

    def fp8_kv_to_start(self, launch: Launch) -> str | None:
        from logparse.engines.sglang.advice import fp8_kv_to_start

        return fp8_kv_to_start(launch)

    def kv_bound_words(self, launch: Launch, budget: Budget) -> str | None:
        from logparse.engines.sglang.advice import kv_bound_words

        return kv_bound_words(launch, budget)

    def reserve_line(self, ctx: Any) -> str | None:
        from logparse.engines.sglang.advice import reserve_line

        return reserve_line(ctx)

    def draft_line(self, ctx: Any) -> str | None:
        from logparse.engines.sglang.advice import draft_line

        return draft_line(ctx)

    def explain(self, launch: Launch, budget: Budget, margin_gb: float | None, cfg: Any) -> Any:
        from logparse.engines.sglang.explain import explain

        return explain(launch, budget, margin_gb, cfg)

    def attribution(self, a: Launch, b: Launch, budget_a: Budget, budget_b: Budget) -> dict[str, Any] | None:
        from logparse.engines.sglang.diff import attribution

        return attribution(a, b, budget_a, budget_b)

    def fraction_side(self, launch: Launch, budget: Budget) -> dict[str, Any]:
        from logparse.engines.sglang.diff import fraction_side

        return fraction_side(launch, budget, self.fraction_share_of)

    def unquantized_load_line(self, launch: Launch) -> str | None:
        from logparse.engines.sglang.flags import sglang_from

        if not sglang_from(launch, "0.5.10"):
            return None
        return "the load line names no quantization (0.5.10+ prints quant= for a quantized checkpoint)"

    # ----------------------------------------------------------------- end of reports

    # ----------------------------------------------------------------- cli, budget checks, launches, sources, store
    rank_figures = (
        "worker",
        "avail_before_load_gb",
        "weights_gb",
        "avail_after_load_gb",
        "load_s",
        "kv_dtype",
        "kv_tokens",
        "kv_size_gb",
        "avail_after_pool_gb",
        "graph_gb",
        "avail_after_graph_gb",
        "graph_s",
    )
    args_unknown_note = "(server_args unknown)"

    def explain_version_text(self, report: dict[str, Any]) -> str:
        return f"SGLang {report.get('sglang_version_range') or 'unknown'}"

    def config_cell(self, cfg: Any, launch: Launch, budget: Budget, kv_dtype: str) -> Any:
        from logparse.engines.sglang import kv as sgkv

        shape = sgkv.SglangShape(
            tp=launch.tp_size or 1,
            dp=launch.dp_size or 1,
            pp=launch.pp_size or 1,
            dp_attention=bool(launch.enable_dp_attention),
            kv_dtype=kv_dtype,
            release=budget.assumed_version,
        )
        return sgkv.sglang_cell(cfg, shape)

    def implied_bytes_per_token(
        self, launch: Launch, budget: Budget
    ) -> tuple[float | None, float | None, float | None, str]:
        bpt = budget.inputs.bpt if budget.inputs is not None else None  # the formula's own reading
        if bpt is None or bpt.hi is None:
            return None, None, None, "no KV pool figure in the log"
        return bpt.value, bpt.lo, bpt.hi, bpt.source

    # ----------------------------------------------------------------- end of cli, budget checks, launches, sources, store

    # ----------------------------------------------------------------- lines and launches (the parse loop)

    def classifier(self) -> Any:
        from logparse.engines.sglang.classify import SglangClassifier

        return SglangClassifier()

    def fast_reader(self, src: Any, **options: Any) -> Any:
        from logparse.engines.sglang import bulk

        if not bulk.supported(src):
            return None
        return bulk.BulkReader(src, **options)

    def assembly(self) -> Any:
        from logparse.engines.sglang.assemble import SglangAssembly

        return SglangAssembly()

    # ----------------------------------------------------------------- end of lines and launches


ENGINE = SGLang()
