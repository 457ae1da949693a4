"""SGLang's lines of a start and its outcome, for the line transformer (:mod:`logparse.engines.sglang.line`).

The builders of the server's start (``server_args``, distributed init, communication warm-up), of the
0.1.x start-up lines, of the main process (ready, uvicorn, start-up timings, DP launch) and of every
failure (not enough memory, CUDA OOM, exceptions and tracebacks, dead children, killed).  Each
returns ``(kind, fields, form)``.
"""

from __future__ import annotations

from typing import Any

from logparse.engines.sglang.line_values import GiB, Seconds, as_float, as_int, parse_timings
from logparse.grammar.uvicorn import UvicornLines


class StartupLines(UvicornLines):
    """The builders of the start and outcome lines (a mixin of :class:`~logparse.engines.sglang.line.LineTransformer`)."""

    # ---- the server's start
    def server_args(self, c):
        return ("server_args", {"payload": str(c[0])}, None)

    def init_nccl_begin(self, c):
        return ("init_begin", {}, "nccl")

    def init_dist_begin(self, c):
        return ("init_begin", {}, "torch_distributed")

    def init_dist_end(self, c):
        f = {}
        for v in c:
            if isinstance(v, Seconds):
                f["elapsed_s"] = float(v)
            elif isinstance(v, GiB):
                f["mem_usage_gb"] = float(v)
        return ("init_end", f, "torch_distributed")

    def init_parallel_begin(self, c):
        return ("init_begin", {}, "parallel")

    def init_parallel_end(self, c):
        return ("init_end", {"elapsed_s": float(c[0])}, "parallel")

    def comm_warmup(self, c):
        f = {"seconds": as_float(c[1])}
        f.update(c[2])
        return ("comm_warmup", f, str(c[0]))

    def lm_head_warmup(self, c):
        f = {"seconds": as_float(c[0])}
        f.update(c[1])
        return ("comm_warmup", f, "lm_head")

    # ---- failures
    def mem_frac_value(self, c):
        return as_float(c[1])

    def not_enough_memory(self, c):
        f: dict[str, Any] = {"error": "Not enough memory. Please try to increase --mem-fraction-static."}
        form = "plain"
        for v in c:
            if isinstance(v, float):
                f["mem_fraction_static"] = v
                form = "with_value"
        return ("failure", f, f"not_enough_memory:{form}")

    def weights_no_memory(self, c):
        return (
            "failure",
            {
                "mem_fraction_static": as_float(c[0]),
                "suggested_mem_fraction_static": as_float(c[1]),
                "minimum_mem_fraction_static": as_float(c[2]),
            },
            "weights_no_memory",
        )

    def cuda_oom(self, c):
        return ("failure", {"detail": str(c[0]) if c else ""}, "cuda_oom")

    def capture_failed(self, c):
        return ("failure", {"detail": str(c[1]) if len(c) > 1 else ""}, "capture_failed")

    def not_enought_memory(self, c):
        # 0.1.6-0.1.17 spelled it "enought"
        return (
            "failure",
            {"error": "Not enought memory. Please try to increase --mem-fraction-static."},
            "not_enough_memory:typo",
        )

    def exception_in(self, c):
        # 0.1.x-0.3.2: "Exception in ModelTpServer:" etc., the traceback on the following lines
        # (the component is in the form: each wording has its own release range)
        return ("exception_start", {"component": str(c[0])}, f"exception_in:{c[0]}")

    def component_exception(self, c):
        return ("exception_start", {"component": str(c[0])}, None)

    def traceback_start(self, c):
        return ("exception_start", {"component": None}, "bare")

    def exception_known(self, c):
        exc = str(c[0])
        inner = c[1]
        if isinstance(inner, tuple) and len(inner) == 3:
            kind, f, form = inner
            f = dict(f)
            f["exception"] = exc
            return (kind, f, form)
        return ("exception", {"exception": exc}, None)

    def exception(self, c):
        return ("exception", {"exception": str(c[0]), "detail": str(c[1])}, None)

    def sigquit(self, c):
        return ("child_failed", {}, "sigquit")

    def scheduler_dead(self, c):
        return ("child_failed", {"rank": as_int(c[0])}, "scheduler_dead")

    def scheduler_died(self, c):
        return ("child_failed", {"rank": as_int(c[0]), "exit_code": as_int(c[1])}, "scheduler_died")

    def subprocess_crashed(self, c):
        return (
            "child_failed",
            {"name": str(c[0]), "pid": as_int(c[1]), "exit_code": as_int(c[2])},
            "subprocess_crashed",
        )

    def child_failed(self, c):
        return ("child_failed", {"detail": str(c[0])}, "child_exit")

    def init_failed(self, c):
        return ("failure", {"detail": str(c[0])}, "init_failed")

    def mamba_no_memory(self, c):
        return ("failure", {"detail": str(c[0])}, "mamba_no_memory")

    def killed(self, c):
        return ("killed", {}, None)

    # ---- 0.1.x
    def quant_config(self, c):
        return ("startup_info", {"quant_config": str(c[1]).strip()}, "quant_config")

    def set_device(self, c):
        return ("startup_info", {}, "set_device")

    def mode_args(self, c):
        return ("startup_info", next((x for x in c if isinstance(x, dict)), {}), "mode_args")

    def mode_args_v013(self, c):
        f = {"disable_radix_cache": str(c[0]) == "True", "enable_flashinfer": str(c[1]) == "True"}
        f.update(next((x for x in c if isinstance(x, dict)), {}))
        return ("startup_info", f, "optional_modes")

    def init_state(self, c):
        process = str(c[0]).split()[0]
        state = str(c[1]).strip()
        if state == "init ok":
            return ("startup_info", {"process": process}, "init_state")
        # 0.1.3-0.1.14 print a failed process's traceback after it
        return ("exception_start", {"component": process}, "init_state")

    # ---- main process
    def ready(self, c):
        return ("ready", {}, None)

    def uvicorn_traceback(self, c):
        return ("traceback", {})

    def uvicorn(self, c):
        level = str(c[0]).strip().rstrip(":")
        form, f = c[1]
        if form == "traceback":  # uvicorn's own "ERROR:    Traceback ...": a multi-line record follows
            return ("exception_start", {"component": "uvicorn"}, "uvicorn")
        f = dict(f)
        f["level"] = level
        return ("uvicorn", f, form)

    def startup_timings(self, c):
        return ("startup_timings", parse_timings(str(c[0])), None)

    def launch_dp(self, c):
        return ("launch_dp", {"dp_rank": as_int(c[0]), "gpu": as_int(c[1])}, None)

    def draft_load_format(self, c):
        return ("draft_load_format", {"load_format": str(c[0]).strip("'")}, None)
