"""How accurate is ``logparse plan``: its prediction of every sample and corpus launch whose model config
is known, without ``--from`` (the GPU table, the model's size) and with ``--from`` (calibrated on the
launch itself, and on another launch of the same deployment with the flags that differ).

    python tools/plan_accuracy.py            # print the tables (markdown)
    python tools/plan_accuracy.py --write    # and replace them in docs/plan-accuracy.md, between the markers

``tests/test_plan.py`` checks that docs/plan-accuracy.md holds exactly what this computes.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from logparse.budget.model import launch_budget  # noqa: E402
from logparse.budget.model_config import ModelConfig, load_model_config  # noqa: E402
from logparse.engines.sglang import versions  # noqa: E402
from logparse.engines.vllm import versions as vv  # noqa: E402
from logparse.launches.model import Launch  # noqa: E402
from logparse.pipeline import parse_paths  # noqa: E402
from logparse.reports.plan import PlanError, make_plan  # noqa: E402
from logparse.reports.plan_types import PlanFlags  # noqa: E402

SAMPLES = os.path.join(ROOT, "samples")
MODELS = os.path.join(SAMPLES, "models")
#: The genuine corpus (``LOGPARSE_SHARED``, as for the tests: tests/helpers.py).
CORPUS = os.path.normpath(os.path.join(os.environ.get("LOGPARSE_SHARED", os.path.join(ROOT, "..", "shared")), "corpus"))
BEGIN, END = "<!-- plan-accuracy:begin -->", "<!-- plan-accuracy:end -->"
PUBLIC_BEGIN, PUBLIC_END = "<!-- plan-public:begin -->", "<!-- plan-public:end -->"

#: Sample log -> (model directory under samples/models, the GPU it was written for: samples/README.md).
SAMPLE_MODELS: dict[str, tuple[str, str]] = {
    "kimi-k25/launch-1-baseline.log": ("Kimi-K2.5-INT4", "H20"),
    "kimi-k25/launch-2-hicache.log": ("Kimi-K2.5-INT4", "H20"),
    "sglang-0.1/llama-tp2-0.1.12.log": ("Llama-2-13b-chat-hf", "A100 80GB"),
    "sglang-0.2/llama-tp2-0.2.5.log": ("Llama-2-13b-chat-hf", "A100 80GB"),
    "sglang-0.3/qwen-tp4-0.3.2.log": ("Qwen2-72B-Instruct", "H100"),
    "sglang-0.3/llama-0.3.6-dp-minus-one.log": ("Meta-Llama-3.1-8B-Instruct", "L40S"),
    "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log": ("DeepSeek-V3-0324", "H200"),
    "sglang-0.4/dp-attention-0.4.9.log": ("DeepSeek-V2-Lite-Chat", "H100"),
    "sglang-0.5/llama-0.5.9-dataclass.log": ("Meta-Llama-3.1-8B-Instruct", "H100"),
    "sglang-0.5/qwen-tp2-0.5.22-dict.log": ("Qwen3-32B", "H100"),
    "sglang-0.5/restarts-0.5.12.log": ("Qwen2.5-14B-Instruct", "A100 80GB"),
    "sglang-0.5/crash-oom-0.5.6.log": ("Qwen2.5-32B-Instruct", "H100"),
    "sglang-0.5/crash-cuda-oom-0.5.18.log": ("Llama-3.3-70B-Instruct", "H100"),
    "sglang-0.5/fail-weights-leave-no-memory-0.5.16.log": ("Mixtral-8x7B-Instruct-v0.1", "H100"),
    "vllm/v0-llama-tp2-0.6.6.post1.log": ("Meta-Llama-3.1-8B-Instruct", "H100"),
    "vllm/v1-tp2-per-worker-0.10.1.1.log": ("chat-30b", "H100"),
    "vllm/v1-defaults-0.20.2.log": ("Meta-Llama-3.1-8B-Instruct", "H100"),
    "vllm/v1-tags-in-format-0.31.0.log": ("chat-70b-fp8", "H200"),
    "vllm/fail-max-len-docker-0.6.3.log": ("Meta-Llama-3.1-8B-Instruct", "A10G"),
    "vllm/fail-no-kv-memory-journal-0.9.2.log": ("big-32b", "H100"),
}
#: The genuine corpus ran on a 24 GiB CPU machine (SGLang's CPU backend: "GPU" memory is system memory).
CORPUS_MEMORY_GB = 24.0
#: Corpus logs whose launches print no model path, and the model they ran (corpus/README.md).
CORPUS_MODEL_OF = {"sglang-0.5.23/bench_one_batch.log": "tiny-llama-32k"}
#: Flags a corpus launch ran with that its log does not print (the benchmark prints no server_args).
CORPUS_FLAGS = {"sglang-0.5.23/bench_one_batch.log": {"max_total_tokens": 20000}}

#: Cross-launch predictions: (from, to, the flags that differ), each a "FILE#N" under samples/ or the corpus.
CROSS: tuple[tuple[str, str, dict], ...] = (
    (
        "samples/sglang-0.5/restarts-0.5.12.log#1",
        "samples/sglang-0.5/restarts-0.5.12.log#2",
        {"mem_fraction_static": 0.88},
    ),
    (
        "samples/sglang-0.5/restarts-0.5.12.log#2",
        "samples/sglang-0.5/restarts-0.5.12.log#3",
        {"kv_cache_dtype": "fp8_e4m3"},
    ),
    (
        "samples/sglang-0.5/restarts-0.5.12.log#1",
        "samples/sglang-0.5/restarts-0.5.12.log#3",
        {"mem_fraction_static": 0.88, "kv_cache_dtype": "fp8_e4m3"},
    ),
    ("samples/kimi-k25/launch-1-baseline.log", "samples/kimi-k25/launch-2-hicache.log", {}),
    (
        "corpus/sglang-0.5.23/memfrac-0.2.log",
        "corpus/sglang-0.5.23/server-memfrac0.3.log",
        {"mem_fraction_static": 0.3},
    ),
    ("corpus/sglang-0.5.23/memfrac-0.2.log", "corpus/sglang-0.5.23/server-default.log", {"mem_fraction_static": 0.716}),
    ("corpus/sglang-0.5.10.post1/memfrac-0.2.log", "corpus/sglang-0.5.23/memfrac-0.2.log", {"release": "0.5.23"}),
)


@dataclass
class Case:
    """One launch with its config and GPU: what it logged, what plan predicts."""

    name: str
    launch: Launch
    config: ModelConfig
    gpu: str | None
    gpu_memory_gb: float | None
    extra: dict | None = None


def _config_path(name: str) -> str:
    d = os.path.join(MODELS, name)
    return d if os.path.isdir(d) else os.path.join(CORPUS, "models", name + ".json")


def _corpus_model(rel: str, launch: Launch) -> str | None:
    if rel in CORPUS_MODEL_OF:
        return CORPUS_MODEL_OF[rel]
    base = os.path.basename((launch.model_path or "").rstrip("/"))
    return base if base and os.path.isfile(os.path.join(CORPUS, "models", base + ".json")) else None


def _launches(path: str) -> list[Launch]:
    return parse_paths([path]).launches


#: The journal's renderings all hold the same two launches: one of them stands for the rest.
CORPUS_JOURNAL = ("journal/0.5.23-restart/short-iso.txt",)


def _corpus_logs() -> list[str]:
    logs = [
        f"{sub}/{f}"
        for sub in sorted(os.listdir(CORPUS))
        if sub.startswith("sglang-")
        for f in sorted(os.listdir(os.path.join(CORPUS, sub)))
    ]
    return logs + [f"failures/{f}" for f in sorted(os.listdir(os.path.join(CORPUS, "failures")))] + list(CORPUS_JOURNAL)


def cases() -> list[Case]:
    """Every sample and corpus launch whose model config is known (samples/models, corpus/models)."""
    out = []
    for rel, (model, gpu) in SAMPLE_MODELS.items():
        cfg = load_model_config(_config_path(model))
        for i, la in enumerate(_launches(os.path.join(SAMPLES, rel)), 1):
            out.append(Case(f"samples/{rel}#{i}", la, cfg, gpu, None))
    if not os.path.isdir(CORPUS):
        return out
    for rel in _corpus_logs():
        for i, la in enumerate(_launches(os.path.join(CORPUS, rel)), 1):
            model = _corpus_model(rel, la)
            if model is not None:
                cfg = load_model_config(_config_path(model))
                out.append(Case(f"corpus/{rel}#{i}", la, cfg, None, CORPUS_MEMORY_GB, CORPUS_FLAGS.get(rel)))
    return out


def own_flags(case: Case) -> PlanFlags:
    """The plan of a launch's own settings without --from: its engine, release, sizes, fraction, dtype, cap."""
    la, b = case.launch, launch_budget(case.launch)
    common = {
        "engine": la.engine or "sglang", "gpu": case.gpu, "gpu_memory_gb": case.gpu_memory_gb, "tp": la.tp_size or 1,
        "pp": la.pp_size or 1, "dp": la.dp_size or 1, "kv_cache_dtype": la.kv_cache_dtype or None,
        "speculative_algorithm": la.speculative_algorithm or None,
    }  # fmt: skip
    if la.engine == "vllm":
        rel = la.engine_version if la.engine_version else None
        return PlanFlags(
            **common,
            release=rel,
            gpu_memory_utilization=la.gpu_memory_utilization,
            context_length=la.max_model_len,
            page_size=la.block_size,
        )
    inp = b.inputs.inputs if b.inputs is not None else None
    return PlanFlags(
        **common, release=b.assumed_version, mem_fraction_static=(inp.f if inp else la.mem_fraction_static),
        page_size=(inp.page_size if inp else None), context_length=la.context_len or la.context_length,
        max_total_tokens=la.max_total_tokens,
    ).with_(**(case.extra or {}))  # fmt: skip


def predict(cfg: ModelConfig, flags: PlanFlags, launch: Launch | None = None) -> int | None:
    try:
        return make_plan(cfg, flags, launch, db=os.devnull).plans[0].kv_tokens
    except PlanError:
        return None


def _pct(pred: int | None, logged: int) -> str:
    if pred is None:
        return "—"
    return f"{(pred - logged) / logged * 100:+.1f}%" if logged else "—"


def _release(la: Launch) -> str:
    return la.engine_version or la.sglang_version_range or "?"


def launch_rows() -> list[dict]:
    """Per launch: logged tokens, the plan without --from and with --from the launch itself."""
    rows = []
    for c in cases():
        logged = launch_budget(c.launch).kv_tokens
        if logged is None:
            continue
        fresh = predict(c.config, own_flags(c))
        calibrated = predict(c.config, PlanFlags(engine=c.launch.engine or "sglang"), c.launch)
        rows.append(
            {"launch": c.name, "engine": c.launch.engine or "sglang", "release": _release(c.launch), "model": c.config.name,
             "gpu": c.gpu or f"{c.gpu_memory_gb:g} GiB (CPU)", "logged": logged, "plan": fresh, "plan_error": _pct(fresh, logged),
             "from": calibrated, "from_error": _pct(calibrated, logged)}
        )  # fmt: skip
    return rows


def _ref(ref: str) -> Launch:
    path, n = ref.split("#") if "#" in ref else (ref, "-1")
    base = SAMPLES if path.startswith("samples/") else CORPUS
    launches = _launches(os.path.join(base, path.split("/", 1)[1]))
    return launches[int(n) - 1 if int(n) > 0 else int(n)]


def cross_rows() -> list[dict]:
    """``plan --from A`` with the flags in which B differs, against B's logged tokens."""
    rows = []
    by_name = {c.name: c for c in cases()}
    for a, b, flags in CROSS:
        if a.startswith("corpus/") and not os.path.isdir(CORPUS):
            continue
        la, lb = _ref(a), _ref(b)
        name_a = a if "#" in a else a + "#1"
        cfg = by_name[name_a].config if name_a in by_name else None
        if cfg is None:
            continue
        logged = launch_budget(lb).kv_tokens or 0
        pred = predict(cfg, PlanFlags(**flags), la)
        change = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in flags.items()) or "(none: HiCache only)"
        rows.append({"from": a, "to": b, "flags": change, "logged": logged, "plan": pred, "error": _pct(pred, logged)})
    return rows


def markdown() -> str:
    lines = [
        "| launch | engine | release | model | GPU | logged KV tokens | plan | error | plan --from | error |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in launch_rows():
        lines.append(
            f"| `{r['launch']}` | {r['engine']} | {r['release']} | {r['model']} | {r['gpu']} | {r['logged']:,} | "
            f"{'—' if r['plan'] is None else format(r['plan'], ',')} | {r['plan_error']} | "
            f"{'—' if r['from'] is None else format(r['from'], ',')} | {r['from_error']} |"
        )
    lines += ["", "| plan --from | flags | for | logged | plan | error |", "|---|---|---|---:|---:|---:|"]
    for r in cross_rows():
        lines.append(
            f"| `{r['from']}` | {r['flags']} | `{r['to']}` | {r['logged']:,} | "
            f"{'—' if r['plan'] is None else format(r['plan'], ',')} | {r['error']} |"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- public launches (tools/plan_public.toml)
PUBLIC = os.path.join(ROOT, "tools", "plan_public.toml")


def public_launches() -> list[dict]:
    """The public launches' figures (``tools/plan_public.toml``), calibration and held-out."""
    import tomllib

    with open(PUBLIC, "rb") as fh:
        return tomllib.load(fh)["launch"]


def public_config(entry: dict, by_id: dict[str, dict], tmp: str) -> ModelConfig:
    """The entry's model: a directory of samples/models, another entry's (``@id``), or its inline fields."""
    import json

    cfg = entry["config"]
    if isinstance(cfg, str) and cfg.startswith("@"):
        return public_config(by_id[cfg[1:]], by_id, tmp)
    if isinstance(cfg, str):
        return load_model_config(os.path.join(MODELS, cfg))
    path = os.path.join(tmp, entry["id"], "config.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cfg, fh)
    return load_model_config(path)


def public_flags(entry: dict) -> PlanFlags:
    """What a user planning that launch would give: engine, release, GPU, TP, fraction, context, vLLM's engine."""
    keys = (
        "release",
        "gpu",
        "gpu_memory_gb",
        "tp",
        "dp",
        "gpu_memory_utilization",
        "mem_fraction_static",
        "context_length",
    )
    return PlanFlags(engine=entry["engine"], vllm_generation=entry.get("generation"), **{k: entry.get(k) for k in keys})


def _vllm_lines(e: dict) -> list[str]:
    rel, lg, tp = e["release"], e.get("logged", {}), e.get("tp", 1)
    old = vv.index(rel) < vv.index("0.8.0")
    v0 = old or e.get("generation") == "V0"

    def line(where: str, text: str) -> str:
        return f"INFO 07-20 10:00:00 {where}] {text}" if old else f"INFO 07-20 10:00:00 [{where}] {text}"

    args = {"model": f"/models/{e['id']}", "tensor_parallel_size": tp}
    args |= {k: e[k] for k in ("gpu_memory_utilization",) if k in e}
    if "context_length" in e:
        args["max_model_len"] = e["context_length"]
    out = [line("api_server.py:1", f"vLLM API server version {rel}")]
    if old:
        out.append(line("api_server.py:2", "args: Namespace(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"))
    else:
        out.append(line("cli_args.py:2", f"non-default args: {args!r}"))
    if v0:
        blocks = "GPU" if vv.index(rel) < vv.index("0.7.0") else "CUDA" if vv.index(rel) < vv.index("0.7.3") else "cuda"
        out.append(line("executor_base.py:3", f"# {blocks} blocks: {lg['gpu_blocks']}, # CPU blocks: 2048"))
    else:
        out.append(line("gpu_worker.py:3", f"Available KV cache memory: {lg['kv_gb']:.2f} GiB"))
        out.append(line("kv_cache_utils.py:4", f"GPU KV cache size: {e['logged_kv_tokens']:,} tokens"))
    return out


def _sglang_lines(e: dict) -> list[str]:
    lg, tp = e.get("logged", {}), e.get("tp", 1)
    args = {"model_path": f"/models/{e['id']}", "tp_size": tp}
    args |= {k: e[k] for k in ("mem_fraction_static", "dp_size", "enable_dp_attention") if k in e}
    if "dp" in e:
        args["dp_size"] = e["dp"]
    dict_form = versions.index(e["release"]) >= versions.index("0.5.19")
    payload = repr(args) if dict_form else "ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
    tag = " TP0" if tp > 1 else ""
    size = (
        f"K size: {lg['k_gb']:.2f} GB, V size: {lg['k_gb']:.2f} GB"
        if "k_gb" in lg
        else f"KV size: {lg['kv_gb']:.2f} GB"
    )
    return [
        f"[2025-07-20 10:00:00] server_args={payload}",
        f"[2025-07-20 10:00:09{tag}] KV Cache is allocated. #tokens: {e['logged_kv_tokens']}, {size}",
    ]


def rebuilt_log(entry: dict, tmp: str) -> str:
    """The launch's key lines rebuilt from its recorded figures, in its release's format (our text)."""
    lines = _vllm_lines(entry) if entry["engine"] == "vllm" else _sglang_lines(entry)
    path = os.path.join(tmp, entry["id"] + ".log")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def public_rows() -> list[dict]:
    """Per public launch: plan from config + GPU + TP + release, and ``plan --from`` its rebuilt log."""
    import tempfile

    entries = public_launches()
    by_id = {e["id"]: e for e in entries}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for e in entries:
            cfg = public_config(e, by_id, tmp)
            logged = e["logged_kv_tokens"]
            fresh = predict(cfg, public_flags(e))
            launches = _launches(rebuilt_log(e, tmp))
            calibrated = predict(cfg, PlanFlags(engine=None), launches[0]) if launches else None
            rows.append(
                {"id": e["id"], "role": e["role"], "engine": e["engine"], "release": e["release"], "model": e["model"],
                 "gpu": e.get("gpu") or f"{e['gpu_memory_gb']:g} GiB", "tp": e.get("tp", 1), "logged": logged,
                 "plan": fresh, "plan_error": _pct(fresh, logged), "from": calibrated, "from_error": _pct(calibrated, logged),
                 "source": e["source"]}
            )  # fmt: skip
    return rows


def _abs_pct(pred: int | None, logged: int) -> float | None:
    return None if pred is None or not logged else abs(pred - logged) / logged * 100


def public_summary(rows: list[dict]) -> str:
    """How the held-out launches fare: within 5%, the median error, --from within 1%."""
    held = [r for r in rows if r["role"] == "held-out"]
    errs = sorted(x for r in held if (x := _abs_pct(r["plan"], r["logged"])) is not None)
    froms = [x for r in held if (x := _abs_pct(r["from"], r["logged"])) is not None]
    median = (
        errs[len(errs) // 2] if len(errs) % 2 else sum(errs[len(errs) // 2 - 1 : len(errs) // 2 + 1]) / 2 if errs else 0
    )
    return (
        f"Held out: {len(held)} launches; plan within 5% on {sum(x <= 5 for x in errs)} of {len(errs)} planned, "
        f"median error {median:.1f}%; plan --from within 1% on {sum(x <= 1 for x in froms)} of {len(froms)} read."
    )


def public_markdown() -> str:
    rows = public_rows()
    lines = [
        "| launch | role | engine | release | model | GPU | TP | logged KV tokens | plan | error | plan --from | error |",
        "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| [{r['id']}]({r['source']}) | {r['role']} | {r['engine']} | {r['release']} | {r['model']} | {r['gpu']} | "
            f"{r['tp']} | {r['logged']:,} | {'—' if r['plan'] is None else format(r['plan'], ',')} | {r['plan_error']} | "
            f"{'—' if r['from'] is None else format(r['from'], ',')} | {r['from_error']} |"
        )
    return "\n".join(lines) + "\n\n" + public_summary(rows) + "\n"


def _between(text: str, begin: str, end: str, body: str) -> str:
    i, j = text.index(begin) + len(begin), text.index(end)
    return text[:i] + "\n" + body + text[j:]


def write_readme(path: str = os.path.join(ROOT, "docs", "plan-accuracy.md")) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    text = _between(_between(text, BEGIN, END, markdown()), PUBLIC_BEGIN, PUBLIC_END, public_markdown())
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write_readme()
    sys.stdout.write(markdown() + "\n" + public_markdown())
