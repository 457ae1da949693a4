"""vLLM (vllm-project/vllm): its lines, launches, sizing formula per release, reserve, plan and advice.

The engine's parts are imported inside the methods (see :mod:`logparse.engines.base`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from logparse.engines.base import Engine, RuntimeTerms

if TYPE_CHECKING:
    from logparse.budget.model import Budget
    from logparse.grammar.events import Event
    from logparse.launches.model import Launch


class VLLM(Engine):
    name = "vllm"
    label = "vLLM"
    article = "a"
    claim_order = 10
    fraction_flag = "gpu_memory_utilization"
    fraction_share_of = "the total GPU memory (the weights, activations and CUDA graphs come out of it)"
    context_flag = "max_model_len"
    fp8_kv_dtype = "fp8"
    args_name = "engine-argument"
    logger_names = ("vllm",)
    #: its statistics lines every few seconds; its scheduler preempts a request for want of KV cache
    runtime_terms = RuntimeTerms(line="statistics line", retraction="preemption", retracted="preempted")

    def event_kinds(self) -> Any:
        from logparse.engines.vllm.kinds import Kind

        return Kind

    def releases(self) -> tuple[str, ...]:
        from logparse.engines.vllm import versions as vllm_versions

        return vllm_versions.RELEASES

    def release_line(self) -> Any:
        from logparse.engines.vllm import versions as vllm_versions

        return vllm_versions.VLLM

    def version_text(self, launch: Launch) -> str:
        version = launch.engine_version or launch.engine_version_range or "unknown version"
        return f"vLLM {version}" + (f" ({launch.engine_generation})" if launch.engine_generation else "")

    def context_of(self, launch: Launch) -> int | None:
        return launch.max_model_len

    def refuses_kv_below_one_request(self) -> bool:
        return True  # V1's check_enough_kv_cache_memory

    def json_line_tag(self, proc: Any, pid: Any) -> str | None:
        return f"({proc} pid={pid}) " if isinstance(proc, str) and isinstance(pid, int) else None

    def line_start_patterns(self) -> tuple[str, ...]:
        from logparse.engines.vllm import prefix
        from logparse.grammar import runtime_decoder

        bare = prefix.bare_message(runtime_decoder.family_starts(self.name))  # its runtime lines' start: their spec's
        return (prefix.PROC_TAG, prefix.RANK_PREFIX, prefix.LOG_PREFIX, bare)

    def owns_process_tag(self, name: str) -> bool:
        from logparse.engines.vllm import prefix

        # vLLM's own process tag, or the Ray actor of a vLLM worker: the vLLM grammar reads the rank from it
        return prefix.is_vllm_process_name(name) or name in prefix.RAY_ACTORS

    def budget(self, launch: Launch) -> Budget:
        from logparse.engines.vllm.budget import vllm_launch_budget

        return vllm_launch_budget(launch)

    def reserve(self, launch: Launch, budget: Budget) -> Any:
        from logparse.engines.vllm.advice import vllm_kv
        from logparse.engines.vllm.explain import total_gb, total_gb_range
        from logparse.engines.vllm.reserve import launch_vllm_reserve

        rank, _ = vllm_kv(launch)
        span = total_gb_range(launch, rank)  # an inferred total: its low end, the safe side of every ceiling
        total = span[1] if span is not None else total_gb(launch, rank)
        return launch_vllm_reserve(launch, rank, total)

    # ----------------------------------------------------------------- reports (plan, advice, explain, diff, check, metrics)
    plan_order = 1
    plan_flags = ("gpu_memory_utilization",)
    #: What a vLLM plan uses in place of another engine's own plan flag.
    _plan_instead: ClassVar[dict[str, str]] = {
        "mem_fraction_static": "gpu_memory_utilization",
        "max_total_tokens": "no token cap",
        "cuda_graph_max_bs": "its own capture sizes",
    }

    def plan(self, cfg: Any, flags: Any, mem: Any, launch: Launch | None, budget: Budget | None) -> Any:
        from logparse.engines.vllm.plan import vllm_plan

        return vllm_plan(cfg, flags, mem, launch, budget)

    def plan_flag_instead(self, flag: str) -> str:
        return self._plan_instead.get(flag) or super().plan_flag_instead(flag)

    def compare_plans(self, own: Any, other: Any) -> list[str]:
        from logparse import engines
        from logparse.engines.vllm.plan import compared

        that = engines.find(other.engine)
        if that is None or not that.plan_sized_from_free_memory:
            return []
        return compared(own, other, that.label)

    def gpu_total_gb(self, launch: Launch) -> float | None:
        from logparse.engines.vllm.explain import total_gb
        from logparse.engines.vllm.formula import pool_rank

        return total_gb(launch, pool_rank(launch) or (launch.ranks[0] if launch.ranks else None))

    def levers(self, ctx: Any) -> list[Any]:
        from logparse.engines.vllm.advice import levers

        return levers(ctx)

    def kv_bound_words(self, launch: Launch, budget: Budget) -> str | None:
        from logparse.engines.vllm.advice import kv_bound_words

        return kv_bound_words(launch, budget)

    def reserve_line(self, ctx: Any) -> str | None:
        from logparse.engines.vllm.advice import reserve_line

        return reserve_line(ctx)

    def explain(self, launch: Launch, budget: Budget, margin_gb: float | None, cfg: Any) -> Any:
        from logparse.engines.vllm.explain import explain

        return explain(launch, budget, margin_gb, cfg)

    def attribution(self, a: Launch, b: Launch, budget_a: Budget, budget_b: Budget) -> dict[str, Any] | None:
        from logparse.engines.vllm.diff import attribution

        return attribution(a, b, budget_a, budget_b)

    def likely_cause(self, attribution: dict[str, Any]) -> str | None:
        from logparse.engines.vllm.diff import likely_cause

        return likely_cause(attribution)

    def fraction_side(self, launch: Launch, budget: Budget) -> dict[str, Any]:
        from logparse.engines.vllm.diff import fraction_side

        return fraction_side(launch, budget, self.fraction_share_of)

    def kv_tokens_are_slots(self, launch: Launch) -> bool:
        from logparse.engines.vllm import versions as vllm_versions

        return launch.kv_tokens_definition in (None, vllm_versions.BLOCKS_DEFINITION)

    def kv_tokens_count(self, launch: Launch) -> str:
        from logparse.engines.vllm import versions as vllm_versions

        if launch.kv_tokens_definition is None:
            return "the token slots of the pool"
        if launch.kv_tokens_definition == vllm_versions.BLOCKS_DEFINITION:
            return "the token slots of the pool (blocks × block size)"
        return f"{launch.kv_tokens_definition} (requests of the longest length that fit, not slots)"

    # ----------------------------------------------------------------- end of reports

    # ----------------------------------------------------------------- cli, budget checks, launches, sources, store
    rank_figures = (
        "weights_gb",
        "load_s",
        "activation_gb",
        "non_torch_gb",
        "kv_tokens",
        "kv_size_gb",
        "graph_gb",
        "graph_s",
    )
    waterfall_note = "vLLM: u × T minus what the profile measured"

    def explain_version_text(self, report: dict[str, Any]) -> str:
        gen = f" ({report['engine_generation']})" if report.get("engine_generation") else ""
        return f"vLLM {report.get('engine_version') or 'unknown'}{gen}"

    def owns_events(self, events: list[Event]) -> bool:
        return any(e.kind.startswith("vllm_") for e in events)

    def config_cell(self, cfg: Any, launch: Launch, budget: Budget, kv_dtype: str) -> Any:
        from logparse.engines.vllm import kv as vkv

        shape = vkv.VllmShape(
            tp=launch.tp_size or 1, pp=launch.pp_size or 1, kv_dtype=kv_dtype, block_size=launch.block_size or 16
        )
        return vkv.vllm_cell(cfg, shape)

    def implied_bytes_per_token(
        self, launch: Launch, budget: Budget
    ) -> tuple[float | None, float | None, float | None, str]:
        from logparse.engines.vllm.formula import implied_bytes_per_token

        return implied_bytes_per_token(launch, budget.kv_pool_gb, budget.kv_tokens)

    # ----------------------------------------------------------------- end of cli, budget checks, launches, sources, store

    # ----------------------------------------------------------------- lines and launches (the parse loop)

    def classifier(self) -> Any:
        from logparse.engines.vllm.classify import VllmClassifier

        return VllmClassifier()

    def assembly(self) -> Any:
        from logparse.engines.vllm.assemble import VllmAssembly

        return VllmAssembly()

    # ----------------------------------------------------------------- end of lines and launches


ENGINE = VLLM()
