"""vLLM's lines of a start and its outcome, for the line transformer (:mod:`logparse.engines.vllm.line`).

The builders of the version, arguments and engine lines (§2.1), of the end of the engine's init
(§2.6), of the configuration lines, of the ready lines (§2.8), of the failures (§2.7) and of
uvicorn's lines.  Each returns ``(kind, fields, form)``.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token

from logparse.engines.vllm.line_values import as_float, as_int, config_fields, tokens_of
from logparse.grammar.uvicorn import UvicornLines

_RANK_ITEM = re.compile(r"\b([A-Z]+) rank (-?\d+)")
_ESTIMATED_LEN = re.compile(r"estimated maximum model length is (-?\d+)")
#: ``Route: /v1/models, Methods: GET, HEAD`` (0.5.4+; a set's repr in 0.5.2-0.5.3.post1) or ``…, Endpoint: name`` (0.16.0+).
_ROUTE_RE = re.compile(r"(?P<path>/\S*), (?P<what>Methods|Endpoint): (?P<value>.+)")
_PROFILE_NUMBERS = re.compile(r"Initial free memory ([\d.e+-]+)(?: GiB)?, current free memory ([\d.e+-]+)")


def _engine_form(prefix: str, payload: str) -> tuple[str, str | None]:
    """The wording of the engine line and the engine it names (V0/V1; None: not said)."""
    if "V0 LLM engine" in prefix:
        return "v0", "V0"
    if "V1 LLM engine" in prefix:
        return "v1", "V1"
    tail = payload.rstrip()
    if "use_cached_outputs=" in tail[-40:]:
        return "an:cached", "V0"
    if tail.endswith(")"):
        return "an:explicit", "V0"
    return "an:v1", "V1"


class StartupLines(UvicornLines):
    """The builders of the start and outcome lines (a mixin of :class:`~logparse.engines.vllm.line.VllmTransformer`)."""

    # ---- version, arguments, engine (§2.1)
    def api_server_version(self, c):
        return ("vllm_version", {"version": str(c[0])}, "api_server")

    def server_version(self, c):
        return ("vllm_version", {"version": str(c[0]), "model": str(c[1]).strip()}, "server")

    def batch_version(self, c):
        return ("vllm_version", {"version": str(c[0])}, "batch")

    def grpc_version(self, c):
        return ("vllm_version", {"version": str(c[0])}, "grpc")

    def logo_version(self, c):
        return ("vllm_version", {"version": str(c[1])}, "logo")

    def logo_model(self, c):
        return ("vllm_logo_model", {"model": str(c[-1]).strip()}, None)

    def args_namespace(self, c):
        return ("vllm_args", {"payload": str(c[0])}, "namespace")

    def args_non_default(self, c):
        return ("vllm_args", {"payload": str(c[0])}, "non_default")

    def engine_init(self, c):
        payload = str(c[2])
        form, generation = _engine_form(str(c[0]), payload)
        f: dict[str, Any] = {"version": str(c[1]), "generation": generation}
        f.update(config_fields(payload))
        return ("vllm_engine_init", f, form)

    def engine_process(self, c):
        return ("vllm_engine_process", {"pid": as_int(c[0])}, None)

    # ---- end of engine init (§2.6)
    def compile_split(self, c):
        return {"language_model_compile_s": as_float(c[0]), "encoder_compile_s": as_float(c[1])}

    def compile_part(self, c):
        f = {"compile_s": as_float(c[0])}
        for x in c[1:]:
            if isinstance(x, dict):
                f.update(x)
        return f

    def init_engine(self, c):
        f: dict[str, Any] = {"init_s": as_float(c[0])}
        unit = str(c[1]).strip()
        extra = next((x for x in c if isinstance(x, dict)), None)
        if extra:
            f.update(extra)
        form = (
            "seconds"
            if unit == "seconds"
            else ("s_compile_split" if extra and len(extra) > 1 else "s_compile" if extra else "s")
        )
        return ("vllm_init_engine", f, form)

    def dynamo_time(self, c):
        return ("vllm_compile_time", {"dynamo_s": as_float(c[0])}, "dynamo")

    def compile_graph_time(self, c):
        form = "range" if tokens_of(c, "COMPILE_RANGE") else "dynamic_shape"
        return ("vllm_compile_time", {"graph_compile_s": as_float(tokens_of(c, "NUMBER")[0])}, form)

    def warmup_time(self, c):
        return ("vllm_compile_time", {"warmup_s": as_float(c[0])}, "warmup")

    def torch_compile(self, c):
        form = "takes" if "takes" in str(c[0]) else "took"
        return ("vllm_torch_compile", {"compile_s": as_float(c[1])}, form)

    # ---- configuration lines
    def max_model_len(self, c):
        return ("vllm_max_model_len", {"max_model_len": as_int(c[0])}, None)

    def chunked_prefill(self, c):
        return ("vllm_chunked_prefill", {"max_num_batched_tokens": as_int(c[0])}, None)

    def rank_assign(self, c):
        items = _RANK_ITEM.findall(str(c[2]))
        f: dict[str, Any] = {"rank": as_int(c[0]), "world_size": as_int(c[1])}
        for name, value in items:
            f[name.lower() + "_rank"] = as_int(value)
        return ("vllm_rank_assign", f, ",".join(name for name, _ in items))

    def v2_runner(self, c):
        return ("vllm_runner", {"runner": "V2"}, "v2")

    # ---- ready (§2.8)
    def server_start(self, c):
        return ("vllm_server_start", {"url": str(c[0])}, "api_on")

    def server_start_indexed(self, c):
        return ("vllm_server_start", {"server_index": as_int(c[0]), "url": str(c[1])}, "api_indexed")

    def server_start_plain(self, c):
        return ("vllm_server_start", {"url": str(c[0])}, "server")

    def routes_head(self, c):
        return ("vllm_routes", {}, "head")

    def route(self, c):
        m = _ROUTE_RE.fullmatch(str(c[0]).strip())
        if m is None:
            raise ValueError(f"not a route: {str(c[0])[:40]!r}")
        what, value = m.group("what").lower(), m.group("value")
        form = "route_" + what + ("_set" if value.startswith("{") else "")
        return ("vllm_routes", {"path": m.group("path"), what: value}, form)

    # ---- failures (§2.7)
    def exc_head(self, c):
        return ("exc", str(c[0]))

    def failure_msg(self, c):
        exc = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "exc"), None)
        kind, f, form = next(x for x in c if isinstance(x, tuple) and len(x) == 3)
        if exc:
            f = {**f, "exception": exc}
        return (kind, f, form)

    def _failure(self, form: str, c, **f: Any):
        rest = " ".join(str(t) for t in c if isinstance(t, Token) and t.type == "REST")
        return ("vllm_failure", {**f, "detail": rest.strip()} if rest.strip() else f, form)

    def no_kv_memory(self, c):
        rest = str(c[0]) if c else ""
        variant = "cpu_note" if "CPU backend" in rest else ("docs" if "docs.vllm.ai" in rest else "plain")
        return self._failure("no_kv_memory:" + variant, c)

    def max_len_v0(self, c):
        ints = tokens_of(c, "INT")
        return self._failure("max_len_exceeds_kv:v0", c, max_model_len=as_int(ints[0]), kv_tokens=as_int(ints[1]))

    def max_len_v1(self, c):
        nums = tokens_of(c, "NUMBER")
        unit = str(tokens_of(c, "GIB_WORD")[0]).strip()
        typo = str(tokens_of(c, "MODELS")[0]) == "models's"
        variant = "v1_gb" if unit == "GB" else ("v1_gib" if typo else "v1_model")
        f: dict[str, Any] = {
            "max_model_len": as_int(tokens_of(c, "INT")[0]),
            "needed_gb": as_float(nums[0]),
            "available_gb": as_float(nums[1]),
        }
        rest = " ".join(str(t) for t in tokens_of(c, "REST"))
        est = _ESTIMATED_LEN.search(rest)
        if est:
            f["estimated_max_model_len"] = as_int(est.group(1))
        return self._failure("max_len_exceeds_kv:" + variant, c, **f)

    def free_memory_at_start(self, c):
        n = [as_float(t) for t in tokens_of(c, "NUMBER")]
        device = "device" if str(c[0]).strip() != "Free memory on device (" else "no_device"
        if "external" in str(tokens_of(c, "LESS_THAN")[0]):
            device = "external"
        f = {"free_gb": n[0], "total_gb": n[1], "utilization": n[2], "requested_gb": n[3]}
        return self._failure("free_memory_at_start:" + device, c, **f)

    def external_weights_too_large(self, c):
        return self._failure("free_memory_at_start:external_weights", c)

    def weights_oom(self, c):
        return self._failure("weights_oom", c)

    def profile_assertion(self, c):
        rest = str(c[0]) if c else ""
        m = _PROFILE_NUMBERS.search(rest)
        if m is None:
            return self._failure("profile_assertion:plain", c)
        variant = "gib" if " GiB" in rest[: m.end() + 4] else "bytes"
        f = {"initial_free": as_float(m.group(1)), "current_free": as_float(m.group(2))}
        return self._failure("profile_assertion:" + variant, c, **f)

    def engine_failed(self, c):
        rest = str(c[0]) if c else ""
        form = "procs" if "Failed core proc" in rest else "plain"
        return ("vllm_engine_failed", {}, "core_init:" + form)

    def engine_core_failed(self, c):
        return ("vllm_engine_failed", {}, "core_start")

    def mm_reservation_failed(self, c):
        return self._failure("mm_reservation", c, reserved_gb=as_float(c[0]))

    def worker_tail_period(self, c):
        return {}

    def worker_tail_colon(self, c):
        # the colon form prints ``<exception>, <traceback>``: the traceback's first line is not the error
        return {"detail": str(c[0]).split(", Traceback (most recent call last)", 1)[0].strip()}

    def worker_exception(self, c):
        # V0's multiprocessing executor (multiproc_worker_utils.py): a worker's method raised; the
        # driver re-raises the exception, so the start fails.  ``logger.exception`` (the traceback on
        # the next lines) or ``logger.error("…: %s, %s", e, tb)`` (the exception in the line)
        f: dict[str, Any] = {"process": str(c[0]), "method": str(c[1]), **c[2]}
        return ("vllm_worker_exception", f, "colon" if "detail" in f else "period")

    def workerproc_failed(self, c):
        # V1's multiprocessing executor: a worker died before it was ready (its traceback follows)
        return ("vllm_worker_exception", {}, "workerproc_start")

    def traceback_start(self, c):
        return ("exception_start", {"component": None}, "vllm")

    def exception(self, c):
        return ("exception", {"exception": str(c[0]), "detail": str(c[1])}, None)

    # ---- uvicorn (its messages: logparse.grammar.uvicorn)
    def uvicorn(self, c):
        form, f = c[1]
        return ("uvicorn", {**f, "level": str(c[0]).strip().rstrip(":")}, form)
