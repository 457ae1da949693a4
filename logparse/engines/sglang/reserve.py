"""The engine's own reserve: what SGLang's default-fraction logic would hold back for a launch.

When ``--mem-fraction-static`` is not given, SGLang picks it so that ``(1 − f)`` of the GPU stays out
of weights + KV for activations, CUDA graphs, the draft model and the like.  What it holds back, and
how, changed by release (catalogue §4.5, and each release's ``server_args.py``):

* **fixed** (0.1.3 – 0.4.7): a fraction by tp size (0.79 – 0.90); the reserve is ``(1 − f) × GPU``.
* **capacity-table** (0.4.7.post1 – 0.5.2): a reserve by the GPU's capacity tier, e.g.
  ``9.5 + tp·pp/2`` GiB on a 35 – 90 GiB GPU, +2 GiB for speculative decoding (+6 GiB STANDALONE),
  +4 GiB with DP attention.
* **formula** (0.5.3 – 0.5.18, ``_handle_gpu_memory_settings``):
  ``512 MiB + 1.5 MiB × max(chunked_prefill_size, 2048) + 2 MiB × cuda_graph_max_bs + tp·pp/8 GiB``,
  plus DP-attention padding (``3 MiB × bs × dp``, and ``1.5 MiB × bs × dp`` more above bs 300), plus
  ``8 MiB`` per piecewise CUDA-graph size when those graphs are on, at least 10 GiB on a GPU over 60
  GiB, then +2 GiB for EAGLE-type speculative decoding (+6 GiB STANDALONE, nothing for NGRAM).  Its
  defaults of ``chunked_prefill_size`` and ``cuda_graph_max_bs`` depend on the GPU's tier and tp.
* **arg-groups** (0.5.19 – 0.5.23): the same computation moved into ``arg_groups`` hooks; it is not
  re-derived here, so the formula's terms are assumed and the result is marked inexact.

The default fraction is ``round((G − R) / G, 3)`` with ``G`` the GPU's total memory; multimodal models
then scale it by ``0.95 × clamp(1 − 0.1 (r − 1), 0.8, 1.05)`` with ``r`` the vision tower's size
relative to a ViT-L/14 (``layers × hidden²`` / ``24 × 1024²``).  SGLang holds back ``(1 − f) × M_pre``
(the memory free before the weights, slightly less than ``G``), so a launch that holds back at least
``R`` of its ``M_pre`` holds back at least what the engine's own logic would.

Everything is in GiB (SGLang's "GB"); SGLang computes in MiB, and the terms keep its arithmetic.
Where a release's logic is not known exactly, the result says so (``exact``, ``notes``) and carries a
range (``reserve_gb_lo`` – ``reserve_gb_hi``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from logparse.budget.reserve import EngineReserve as EngineReserve
from logparse.budget.reserve import ReserveTerm as ReserveTerm
from logparse.engines.sglang import versions
from logparse.launches.model import Launch

MIB_PER_GIB = 1024.0
#: Free memory before the weights is the GPU's total less the CUDA context, NCCL buffers and other
#: processes: the total is assumed to lie this much (GiB) above it when it is not given.
CONTEXT_SLACK_GB = (0.0, 3.0)
#: SGLang's default ``max_prefill_tokens`` (used by the formula when chunked prefill is off).
DEFAULT_MAX_PREFILL_TOKENS = 16384


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class ReserveInputs:
    """The launch arguments the reserve depends on (``None``: the release's default for the GPU).

    ``sources`` names where each given value came from (``server_args``, ``--flag``, …)."""

    tp_size: int = 1
    pp_size: int = 1
    dp_size: int = 1
    enable_dp_attention: bool = False
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    cuda_graph_max_bs: int | None = None
    speculative_algorithm: str | None = None
    #: piecewise CUDA graphs on (None: the release's default) and how many capture sizes they have
    piecewise_cuda_graph: bool | None = None
    piecewise_cuda_graph_sizes: int | None = None
    #: an MLA model (its piecewise graphs stop at 2048 tokens)
    mla: bool | None = None
    #: a multimodal model, and its vision tower (None: not known)
    multimodal: bool | None = None
    vision_layers: int | None = None
    vision_hidden_size: int | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def with_(self, **kw: Any) -> ReserveInputs:
        return replace(self, **kw)


# --------------------------------------------------------------------------- rules by release
@dataclass(frozen=True)
class Rule:
    key: str
    first: str
    last: str
    where: str
    exact: bool

    @property
    def label(self) -> str:
        return f"SGLang {self.first}–{self.last}: {self.where}"


RULES: tuple[Rule, ...] = (
    Rule("fixed", "0.1.3", "0.4.7", "a fixed default fraction by tp size (ServerArgs.__post_init__)", True),
    Rule(
        "capacity-table",
        "0.4.7.post1",
        "0.5.2",
        "a reserve by GPU capacity tier (ServerArgs.__post_init__)",
        True,
    ),
    Rule(
        "formula",
        "0.5.3",
        "0.5.18",
        "ServerArgs._handle_gpu_memory_settings",
        True,
    ),
    Rule(
        "arg-groups",
        "0.5.19",
        "0.5.23",
        "arg_groups hooks; not re-derived, the formula's terms are assumed",
        False,
    ),
)
#: The formula replaced the table in a change merged before 0.5.3; the earliest copy of it read here
#: has the 0.5.4.post3 – 0.5.5 field set, so 0.5.3 – 0.5.4.post2 carry both rules' values as a range.
_FORMULA_VERIFIED_FROM = "0.5.4.post3"
#: The piecewise-graph term: absent in the 0.5.4.post3 – 0.5.5 copy, present in the 0.5.7 – 0.5.9 one.
_PIECEWISE_TERM_FROM, _PIECEWISE_TERM_SURELY_FROM = "0.5.5.post1", "0.5.7"
#: ``enable_piecewise_cuda_graph`` (opt-in) until 0.5.9; ``disable_piecewise_cuda_graph`` (opt-out) from 0.5.10.
_PIECEWISE_OPT_OUT_FROM = "0.5.10"


def rule_of(release: str) -> Rule:
    i = versions.index(release)
    for rule in RULES:
        if versions.index(rule.first) <= i <= versions.index(rule.last):
            return rule
    return RULES[-1] if i > versions.index(RULES[-1].last) else RULES[0]


# --------------------------------------------------------------------------- the GPU
def gpu_tier(gpu_mib: float) -> str:
    """SGLang's GPU-capacity tiers (MiB of total memory)."""
    for limit, name in ((20, "<20"), (35, "20-35"), (60, "35-60"), (90, "60-90"), (160, "90-160")):
        if gpu_mib < limit * 1024:
            return name
    return ">=160"


_TIER_WORDS = {
    "<20": "a GPU under 20 GiB",
    "20-35": "a 20–35 GiB GPU",
    "35-60": "a 35–60 GiB GPU",
    "60-90": "a 60–90 GiB GPU",
    "90-160": "a 90–160 GiB GPU",
    ">=160": "a GPU of 160 GiB or more",
}


#: 0.5.23 (corpus) picks 4096 tokens and decode bs 48 | 160 on a 20–35 GiB GPU where 0.5.19 picks 2048 and
#: 24 | 80; assumed from 0.5.20, where the computation moved into ``arg_groups``.
_SMALL_GPU_DEFAULTS_FROM = "0.5.20"


def formula_defaults(tier: str, tp_size: int, release: str | None = None) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) the formula releases pick for a GPU tier (CUDA)."""
    small_tp = tp_size < 4
    if tier == "20-35" and release and versions.index(release) >= versions.index(_SMALL_GPU_DEFAULTS_FROM):
        return 4096, 48 if small_tp else 160
    return {
        "<20": (2048, 8),
        "20-35": (2048, 24 if small_tp else 80),
        "35-60": (4096, 32 if small_tp else 160),
        "60-90": (8192, 256 if small_tp else 512),
        "90-160": (8192, 256 if small_tp else 512),
        ">=160": (16384, 512),
    }[tier]


def piecewise_sizes(max_tokens: int) -> int:
    """How many piecewise CUDA-graph sizes SGLang (0.5.7+) captures up to ``max_tokens``."""
    steps = ((4, 32, 4), (48, 256, 16), (288, 512, 32), (576, 1024, 64), (1280, 4096, 256), (4608, max_tokens, 512))
    return sum(len([s for s in range(a, b + 1, step) if s <= max_tokens]) for a, b, step in steps)


# --------------------------------------------------------------------------- the terms, per rule
def _term(name: str, mib: float, how: str, source: str = "", counted: bool = True) -> tuple[ReserveTerm, float]:
    return ReserveTerm(name, round(mib / MIB_PER_GIB, 2), how, source, counted), mib


def _spec_kind(algorithm: str | None) -> str | None:
    a = (algorithm or "").upper()
    if not a or a == "NONE":
        return None
    return "standalone" if a == "STANDALONE" else "ngram" if a in ("NGRAM", "LOOKAHEAD") else "eagle"


def _fixed_terms(release: str, inp: ReserveInputs, gpu_mib: float) -> tuple[list[tuple[ReserveTerm, float]], float]:
    f = versions.default_mem_fraction_static((release, release), inp.tp_size) or 0.88
    mib = (1 - f) * gpu_mib
    how = f"(1 − {f:g}) × {gpu_mib / MIB_PER_GIB:.2f} GiB (the default for tp={inp.tp_size} in this release)"
    return [_term("fixed share of the GPU", mib, how, "release default by tp size")], f


def _table_terms(inp: ReserveInputs, gpu_mib: float) -> list[tuple[ReserveTerm, float]]:
    tier, par = gpu_tier(gpu_mib), inp.tp_size * inp.pp_size
    words = _TIER_WORDS[tier]
    if tier in ("<20", "20-35"):
        base, share, how = 2.8, par / 10, f"2.8 GiB + tp·pp {par}/10 GiB on {words}"
    elif tier in ("35-60", "60-90"):
        base, share, how = 9.5, par / 2, f"9.5 GiB + tp·pp {par}/2 GiB on {words}"
    elif tier == "90-160":
        base, share, how = 12.0, par / 2, f"12 GiB + tp·pp {par}/2 GiB on {words}"
    else:
        base, share, how = 32.0, 0.0, f"32 GiB flat on {words}"
    out = [_term("capacity tier", base * 1024, how, "GPU capacity")]
    if share:
        out.append(_term("tp·pp share", share * 1024, f"tp·pp = {par}", _src(inp, "tp_size")))
    spec = _spec_kind(inp.speculative_algorithm)
    if spec == "standalone":
        out.append(_term("speculative (STANDALONE draft)", 6 * 1024, "+6 GiB", _src(inp, "speculative_algorithm")))
    elif spec is not None:
        out.append(_term("speculative (draft model)", 2 * 1024, "+2 GiB", _src(inp, "speculative_algorithm")))
    if inp.enable_dp_attention:
        out.append(_term("DP attention", 4 * 1024, "+4 GiB", _src(inp, "enable_dp_attention")))
    return out


def _src(inp: ReserveInputs, name: str) -> str:
    return inp.sources.get(name, "given")


def _formula_inputs(release: str, inp: ReserveInputs, gpu_mib: float) -> tuple[int, int, str, str]:
    """(chunked prefill tokens the activation term uses, cuda_graph_max_bs, and where each came from)."""
    tier = gpu_tier(gpu_mib)
    d_chunk, d_bs = formula_defaults(tier, inp.tp_size, release)
    chunk, chunk_src = inp.chunked_prefill_size, _src(inp, "chunked_prefill_size")
    if chunk is None:
        chunk, chunk_src = d_chunk, f"release default for {_TIER_WORDS[tier]}"
    elif inp.enable_dp_attention and inp.dp_size > 1 and chunk > 0:
        # SGLang divides chunked_prefill_size by dp_size after sizing the reserve; the log prints the quotient
        chunk, chunk_src = chunk * inp.dp_size, chunk_src + f" × dp {inp.dp_size} (printed per DP rank)"
    if chunk <= 0:
        chunk = inp.max_prefill_tokens or DEFAULT_MAX_PREFILL_TOKENS
        chunk_src = "max_prefill_tokens (chunked prefill off)"
    bs, bs_src = inp.cuda_graph_max_bs, _src(inp, "cuda_graph_max_bs")
    if bs is None:
        bs, bs_src = d_bs, f"release default for {_TIER_WORDS[tier]}, tp={inp.tp_size}"
    return chunk, bs, chunk_src, bs_src


def _formula_terms(
    release: str, inp: ReserveInputs, gpu_mib: float, *, piecewise: bool
) -> list[tuple[ReserveTerm, float]]:
    chunk, bs, chunk_src, bs_src = _formula_inputs(release, inp, gpu_mib)
    par = inp.tp_size * inp.pp_size
    out = [
        _term("constant (backend metadata)", 512, "512 MiB"),
        _term("prefill activations", 1.5 * max(chunk, 2048), f"1.5 MiB × max({chunk}, 2048)", chunk_src),
        _term("CUDA graphs", 2 * bs, f"2 MiB × cuda_graph_max_bs {bs}", bs_src),
        _term("tp·pp share", par / 8 * 1024, f"tp·pp {par}/8 × 1 GiB", _src(inp, "tp_size")),
    ]
    if inp.enable_dp_attention and inp.dp_size > 1:
        dp = inp.dp_size
        out.append(_term("DP-attention padding", 3 * bs * dp, f"3 MiB × bs {bs} × dp {dp}", bs_src))
        if bs > 300:
            out.append(_term("DP attention, large graphs", 1.5 * bs * dp, f"1.5 MiB × bs {bs} × dp {dp}", bs_src))
    if piecewise:
        n = inp.piecewise_cuda_graph_sizes or piecewise_sizes(2048 if inp.mla else chunk)
        src = (
            _src(inp, "piecewise_cuda_graph_sizes") if inp.piecewise_cuda_graph_sizes else "the release's capture sizes"
        )
        out.append(_term("piecewise CUDA graphs", 8 * n, f"8 MiB × {n} capture sizes", src))
    return out


def _formula_tail(inp: ReserveInputs, gpu_mib: float, mib: float) -> list[tuple[ReserveTerm, float]]:
    """The 10 GiB floor on big GPUs, then speculative decoding (added after the floor)."""
    out = []
    if gpu_mib > 60 * 1024 and mib < 10 * 1024:
        out.append(
            _term(
                "10 GiB floor (GPU over 60 GiB)", 10 * 1024 - mib, f"at least 10 GiB (the terms give {mib / 1024:.2f})"
            )
        )
    spec = _spec_kind(inp.speculative_algorithm)
    src = _src(inp, "speculative_algorithm")
    if spec == "standalone":
        out.append(_term("speculative (STANDALONE draft)", 6 * 1024, "+6 GiB", src))
    elif spec == "eagle":
        out.append(_term("speculative (EAGLE-type draft)", 2 * 1024, "+2 GiB", src))
    return out


def _piecewise(release: str, inp: ReserveInputs) -> tuple[bool, bool]:
    """(is the piecewise-graph term in this release's reserve, might it be) for these arguments."""
    i = versions.index(release)
    if i < versions.index(_PIECEWISE_TERM_FROM):
        return False, False
    on = inp.piecewise_cuda_graph
    if on is None:
        on = i >= versions.index(_PIECEWISE_OPT_OUT_FROM)
    return bool(on) and i >= versions.index(_PIECEWISE_TERM_SURELY_FROM), bool(on)


@dataclass
class _Computed:
    """One release's reserve at one GPU size: its terms (with their MiB) and default fraction."""

    release: str
    rule: Rule
    terms: list[tuple[ReserveTerm, float]]
    fraction: float | None = None

    @property
    def mib(self) -> float:
        return sum(m for t, m in self.terms if t.counted)


def _compute(release: str, inp: ReserveInputs, gpu_mib: float, *, piecewise: bool | None = None) -> _Computed:
    rule = rule_of(release)
    if rule.key == "fixed":
        terms, f = _fixed_terms(release, inp, gpu_mib)
        return _Computed(release, rule, terms, f)
    if rule.key == "capacity-table":
        terms = _table_terms(inp, gpu_mib)
    else:
        pw = _piecewise(release, inp)[0] if piecewise is None else piecewise
        terms = _formula_terms(release, inp, gpu_mib, piecewise=pw)
        terms += _formula_tail(inp, gpu_mib, sum(m for _, m in terms))
    c = _Computed(release, rule, terms)
    c.fraction = round((gpu_mib - c.mib) / gpu_mib, 3) if gpu_mib > c.mib else None
    return c


def _vision_factor(inp: ReserveInputs) -> tuple[float, float, float, str]:
    """(factor, lo, hi, how) by which SGLang scales a multimodal model's default fraction."""
    if inp.vision_layers and inp.vision_hidden_size:
        ratio = inp.vision_layers * inp.vision_hidden_size**2 / (24 * 1024**2)
        adj = max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))
        how = (
            f"f × 0.95 × {adj:.3f} (vision tower {inp.vision_layers} layers × {inp.vision_hidden_size} hidden = "
            f"{ratio:.2f} × ViT-L/14)"
        )
        return 0.95 * adj, 0.95 * adj, 0.95 * adj, how
    return 0.95, 0.95 * 0.8, 0.95 * 1.05, "f × 0.95 × (0.80–1.05 by the vision tower's size, not known here)"


def _vision_term(c: _Computed, inp: ReserveInputs, gpu_mib: float) -> ReserveTerm | None:
    """The multimodal adjustment, reported beside the reserve (not counted: text-only serving assumed)."""
    if not inp.multimodal or c.rule.key == "fixed" or c.fraction is None:
        return None
    factor, lo, hi, how = _vision_factor(inp)
    extra_gb = c.fraction * (1 - factor) * gpu_mib / MIB_PER_GIB
    if lo != hi:
        lo_gb, hi_gb = (c.fraction * (1 - x) * gpu_mib / MIB_PER_GIB for x in (hi, lo))
        how += f": {max(lo_gb, 0.0):.2f}–{hi_gb:.2f} GiB more"
    return ReserveTerm("multimodal (vision encoder)", round(extra_gb, 2), how, _src(inp, "multimodal"), counted=False)


# --------------------------------------------------------------------------- the public entry points
def _gpu_range(gpu_memory_gb: float | None, m_pre_gb: float | None) -> tuple[float | None, float, float, str]:
    """(point, lo, hi GiB of the GPU's total memory, how it is known)."""
    if gpu_memory_gb:
        return gpu_memory_gb, gpu_memory_gb, gpu_memory_gb, "given"
    if m_pre_gb:
        lo, hi = m_pre_gb + CONTEXT_SLACK_GB[0], m_pre_gb + CONTEXT_SLACK_GB[1]
        how = (
            f"assumed {lo:.2f}–{hi:.2f} GiB: the free memory before the weights ({m_pre_gb:.2f}) plus up to "
            f"{CONTEXT_SLACK_GB[1]:g} GiB of CUDA context, NCCL buffers and other processes (SGLang's log does not "
            "print the GPU's size)"
        )
        return m_pre_gb + 1.0, lo, hi, how
    return None, 0.0, 0.0, "not known"


def _representatives(rng: tuple[str, str]) -> list[str]:
    """The releases of a range whose reserve can differ: each end, and each rule's ends inside it."""
    lo, hi = versions.index(rng[0]), versions.index(rng[1])
    marks = {rng[0], rng[1]}
    for rule in RULES:
        for edge in (rule.first, rule.last, _FORMULA_VERIFIED_FROM, _PIECEWISE_TERM_SURELY_FROM):
            if lo <= versions.index(edge) <= hi:
                marks.add(edge)
    if lo <= versions.index("0.5.2") <= hi or lo <= versions.index(_FORMULA_VERIFIED_FROM) - 1 <= hi:
        marks.add("0.5.2")  # the table's value, for the releases where the switch is not verified
    return sorted(marks, key=versions.index)


def sglang_reserve(
    release_range: tuple[str, str] | str | None,
    inputs: ReserveInputs,
    *,
    gpu_memory_gb: float | None = None,
    m_pre_gb: float | None = None,
) -> EngineReserve:
    """What SGLang's own default-fraction logic holds back for these arguments on this GPU.

    ``release_range``: one release, or a launch's range (the latest release is the point value, the
    others widen the range); None assumes the newest.  ``gpu_memory_gb``: the GPU's total memory in
    GiB; without it the total is assumed from ``m_pre_gb`` (free memory before the weights)."""
    rng = _as_range(release_range)
    point_g, lo_g, hi_g, g_how = _gpu_range(gpu_memory_gb, m_pre_gb)
    release = rng[1]
    if point_g is None:
        return _unknown_gpu(release, rule_of(release))
    point = _compute(release, inputs, point_g * MIB_PER_GIB)
    spread = _spread(rng, inputs, (lo_g, point_g, hi_g))
    out = EngineReserve(
        engine="sglang",
        release=release,
        rule=point.rule.key,
        rule_label=point.rule.label,
        exact=_exact(point.rule, release),
        gpu_memory_gb=round(point_g, 2),
        gpu_memory_source=g_how,
        reserve_gb=round(point.mib / MIB_PER_GIB, 2),
        reserve_gb_lo=round(min(c.mib for c in spread) / MIB_PER_GIB, 2),
        reserve_gb_hi=round(max(c.mib for c in spread) / MIB_PER_GIB, 2),
        terms=[t for t, _ in point.terms],
        default_fraction=point.fraction,
    )
    fractions = [c.fraction for c in spread if c.fraction is not None]
    out.default_fraction_lo = min(fractions) if fractions else None
    out.default_fraction_hi = max(fractions) if fractions else None
    vision = _vision_term(point, inputs, point_g * MIB_PER_GIB)
    if vision is not None:
        out.terms.append(vision)
    out.notes = _notes(rng, point, spread, inputs, vision)
    return out


def _exact(rule: Rule, release: str) -> bool:
    if rule.key == "formula":
        return versions.index(release) >= versions.index(_FORMULA_VERIFIED_FROM)
    return rule.exact


def _as_range(r: tuple[str, str] | str | None) -> tuple[str, str]:
    if r is None or versions.is_empty(r if isinstance(r, tuple) else None):
        return (versions.last(), versions.last())
    return (r, r) if isinstance(r, str) else r


def _unknown_gpu(release: str, rule: Rule) -> EngineReserve:
    return EngineReserve(
        "sglang", release, rule.key, rule.label, False, None, "not known", None, None, None,
        notes=["the GPU's memory is not known (no free-memory figure and none given): the reserve cannot be computed"],
    )  # fmt: skip


def _spread(rng: tuple[str, str], inp: ReserveInputs, gpus: tuple[float, ...]) -> list[_Computed]:
    """The reserve over the releases of the range, the GPU sizes assumed, and the uncertain terms."""
    out = []
    for release in _representatives(rng):
        for g in gpus:
            out.append(_compute(release, inp, g * MIB_PER_GIB))
            sure, maybe = _piecewise(release, inp)
            if maybe and not sure:
                out.append(_compute(release, inp, g * MIB_PER_GIB, piecewise=True))
            if rule_of(release).key == "formula" and versions.index(release) < versions.index(_FORMULA_VERIFIED_FROM):
                out.append(_compute("0.5.2", inp, g * MIB_PER_GIB))
    return out


def _notes(
    rng: tuple[str, str], point: _Computed, spread: list[_Computed], inp: ReserveInputs, vision: ReserveTerm | None
) -> list[str]:
    notes = []
    rules = sorted({c.rule.key for c in spread}, key=[r.key for r in RULES].index)
    if rng[0] != rng[1]:
        notes.append(f"the launch's release range {versions.format_range(rng)} is assumed to be {rng[1]}")
    if len(rules) > 1:
        notes.append("the range spans reserve rules (" + ", ".join(rules) + "): reserve_gb_lo/hi cover them")
    i = versions.index(rng[1])
    if point.rule.key == "formula" and i < versions.index(_FORMULA_VERIFIED_FROM):
        notes.append(
            "the formula replaced the capacity table around 0.5.3 (not verified before 0.5.4.post3): "
            "the range includes the table's value"
        )
    if point.rule.key == "arg-groups":
        notes.append("0.5.19+ computes the reserve in arg_groups hooks, not re-derived here: the formula is assumed")
    if _piecewise(rng[1], inp) == (False, True):
        notes.append("the piecewise CUDA-graph term (8 MiB per size) may already be in this release: in the range")
    if vision is not None:
        span = vision.how.split(": ")[-1] if ": " in vision.how else f"{vision.gb:.2f} GiB more"
        notes.append(
            f"a multimodal model: SGLang's default also scales the fraction for the vision encoder ({span}); "
            "not counted in reserve_gb (text-only serving assumed)"
        )
    if point.rule.key in ("formula", "arg-groups"):
        notes.append("cuda_graph_max_bs and chunked_prefill_size as the launch resolved them (printed in server_args)")
    return notes


# --------------------------------------------------------------------------- from a launch
_MULTIMODAL_HINTS = ("ForConditionalGeneration", "VL", "Vision", "Llava", "LlavaNext", "Omni", "Mllama")


def _sa(launch: Launch, name: str) -> Any:
    return (launch.server_args or {}).get(name)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _graph_max_bs(launch: Launch) -> tuple[int | None, str]:
    """``cuda_graph_max_bs`` as the launch resolved it (renamed ``cuda_graph_max_bs_decode`` /
    ``cuda_graph_config['decode']['max_bs']`` in 0.5.14)."""
    for name in ("cuda_graph_max_bs", "cuda_graph_max_bs_decode"):
        if _int(_sa(launch, name)) is not None:
            return _sa(launch, name), f"server_args {name}"
    cfg = _sa(launch, "cuda_graph_config")
    decode = cfg.get("decode") if isinstance(cfg, dict) else None
    if isinstance(decode, dict) and _int(decode.get("max_bs")) is not None:
        return decode["max_bs"], "server_args cuda_graph_config['decode']['max_bs']"
    bs = _sa(launch, "cuda_graph_bs")
    if isinstance(bs, list) and bs and all(_int(x) is not None for x in bs):
        return max(bs), "max of server_args cuda_graph_bs"
    return None, ""


def _piecewise_of(launch: Launch) -> tuple[bool | None, int | None]:
    """Are the piecewise (prefill) CUDA graphs on, and how many sizes: ``enable_piecewise_cuda_graph``
    (≤ 0.5.9), ``disable_piecewise_cuda_graph`` (0.5.10 – 0.5.13), ``cuda_graph_config['prefill']`` (0.5.14+)."""
    cfg = _sa(launch, "cuda_graph_config")
    prefill = cfg.get("prefill") if isinstance(cfg, dict) else None
    if isinstance(prefill, dict):
        sizes = prefill.get("bs")
        backend = str(prefill.get("backend") or "disabled").lower()
        return backend != "disabled", len(sizes) if isinstance(sizes, list) and sizes else None
    on = None
    if isinstance(_sa(launch, "enable_piecewise_cuda_graph"), bool):
        on = _sa(launch, "enable_piecewise_cuda_graph")
    elif isinstance(_sa(launch, "disable_piecewise_cuda_graph"), bool):
        on = not _sa(launch, "disable_piecewise_cuda_graph")
    sizes = _sa(launch, "piecewise_cuda_graph_tokens")
    return on, len(sizes) if isinstance(sizes, list) and sizes else None


def model_type(launch: Launch) -> str | None:
    """The model class SGLang loaded (``Load weight end … type=``), target worker first."""
    for r in sorted(launch.ranks, key=lambda r: r.worker != "target"):
        if (r.extra or {}).get("model_type"):
            return str(r.extra["model_type"])
    return None


def looks_multimodal(model_class: str | None) -> bool | None:
    """A class name of a vision-language model (a heuristic: SGLang checks its own list)."""
    if not model_class:
        return None
    return any(h in model_class for h in _MULTIMODAL_HINTS)


def _is_mla(launch: Launch) -> bool | None:
    pools = [r for r in launch.ranks if r.worker == "target" and r.kv_size_gb is not None]
    if not pools:
        return None
    return all(r.k_size_gb is None for r in pools)


def reserve_inputs(launch: Launch) -> ReserveInputs:
    """The reserve's inputs from a launch's own arguments (``server_args`` and the launch fields)."""
    src: dict[str, str] = {}

    def given(name: str, value: Any, where: str = "server_args") -> Any:
        if value is not None:
            src[name] = where
        return value

    bs, bs_src = _graph_max_bs(launch)
    on, sizes = _piecewise_of(launch)
    mtype = model_type(launch)
    mm = looks_multimodal(mtype)
    return ReserveInputs(
        tp_size=given("tp_size", launch.tp_size or _int(_sa(launch, "tp_size"))) or 1,
        pp_size=given("pp_size", launch.pp_size or _int(_sa(launch, "pp_size"))) or 1,
        dp_size=given("dp_size", launch.dp_size or _int(_sa(launch, "dp_size"))) or 1,
        enable_dp_attention=bool(given("enable_dp_attention", launch.enable_dp_attention)),
        chunked_prefill_size=given("chunked_prefill_size", launch.chunked_prefill_size or _int(_sa(launch, "chunked_prefill_size"))),
        max_prefill_tokens=given("max_prefill_tokens", _int(_sa(launch, "max_prefill_tokens"))),
        cuda_graph_max_bs=given("cuda_graph_max_bs", bs, bs_src),
        speculative_algorithm=given("speculative_algorithm", launch.speculative_algorithm),
        piecewise_cuda_graph=given("piecewise_cuda_graph", on),
        piecewise_cuda_graph_sizes=given("piecewise_cuda_graph_sizes", sizes, "len(server_args piecewise_cuda_graph_tokens)"),
        mla=_is_mla(launch),
        multimodal=given("multimodal", mm, f"model class {mtype} (Load weight end)"),
        sources=src,
    )  # fmt: skip


def launch_reserve(launch: Launch, m_pre_gb: float | None, gpu_memory_gb: float | None = None) -> EngineReserve:
    """The SGLang engine's own reserve for a launch: its release range, its own arguments, and the GPU
    (given, else assumed from ``m_pre_gb``, the free memory before the weights on the smallest rank)."""
    rng = launch.version_range if launch.version_range and not versions.is_empty(launch.version_range) else None
    out = sglang_reserve(rng, reserve_inputs(launch), gpu_memory_gb=gpu_memory_gb, m_pre_gb=m_pre_gb)
    if rng is None:
        out.notes.insert(0, f"SGLang version unknown: assuming the newest release's logic ({out.release})")
        out.exact = False
    return out
