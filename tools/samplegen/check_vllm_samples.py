"""Re-derive the figures of every vLLM sample log from its text (run: python tools/samplegen/check_vllm_samples.py).

Independent of make_vllm_samples.py: it reads only the .log files and the model geometry below, and
applies the vLLM log catalogue's formulas (§4):
  * the bytes: UTF-8, '\\n' line ends; vLLM's MM-DD HH:MM:SS stamps never go back;
  * V0 0.6.5-0.10.2 profile message: u·T printed = u × T, and KV = u·T − weights − non-torch − activation;
  * blocks (V0) = floor(min over ranks of KV / block bytes), within the 2-decimal rounding of the KV GiB;
  * tokens: V0 blocks × block_size; V1 ≤ 0.20.0 each worker's floor(KV / page) × B; V1 0.20.1+
    int(blocks / ceil(L / B) × L); concurrency = blocks / ceil(L / B) (2 decimals);
  * the 0.27.0+ budget report: requested − (consumed + activation) − graphs = KV in use;
  * the CUDA-graph advice (0.20.0+): equivalent = u − G/T and suggested = u + G/T (4 decimals);
  * failures: the max-len error's token count = blocks × B < max_model_len; "No available memory"
    follows a negative ``Available KV cache memory``.
Exits non-zero on any mismatch.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples", "vllm")
GiB = 1 << 30
B = 16

#: file -> (layers, KV heads, head dim, TP, bytes per element): the KV bytes of one token on one rank.
GEOMETRY = {
    "v0-llama-tp2-0.6.6.post1.log": (32, 8, 128, 2, 2),
    "v1-tp2-per-worker-0.10.1.1.log": (48, 8, 128, 2, 2),
    "v1-defaults-0.20.2.log": (32, 8, 128, 1, 2),
    "v1-tags-in-format-0.31.0.log": (64, 8, 128, 2, 1),
    "fail-max-len-docker-0.6.3.log": (32, 8, 128, 1, 2),
    "fail-no-kv-memory-journal-0.9.2.log": (64, 8, 128, 1, 2),
}
#: Releases whose token count is concurrency × max_model_len (0.20.1+, catalogue §4.8).
CONCURRENCY_DEFINITION = {"v1-defaults-0.20.2.log", "v1-tags-in-format-0.31.0.log"}

STAMP = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d-\d\d \d\d:\d\d:\d\d) ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
NUM = r"(-?\d+(?:\.\d+)?)"


class Check:
    def __init__(self, name: str) -> None:
        self.name, self.errors, self.n = name, [], 0

    def eq(self, what: str, got: float, want: float, tol: float = 0.0) -> None:
        self.n += 1
        if abs(got - want) > tol + 1e-9:
            self.errors.append(f"{self.name}: {what}: got {got}, want {want} (±{tol})")


def ptb(name: str) -> int:
    layers, heads, dim, tp, elem = GEOMETRY[name]
    return layers * 2 * max(1, heads // tp) * dim * elem


def find(text: str, pattern: str) -> list[tuple[str, ...]]:
    return re.findall(pattern, text)


def check_bytes(c: Check, raw: bytes) -> str:
    text = raw.decode("utf-8")
    c.eq("CR bytes", text.count("\r"), 0)
    stamps = STAMP.findall(ANSI.sub("", text))
    c.eq("stamps in order", sum(1 for a, b in itertools.pairwise(stamps) if b < a), 0)
    return ANSI.sub("", text)


def check_v0_profile(c: Check, text: str) -> list[float]:
    """V0 0.6.5-0.10.2: every rank prints u·T and the terms; returns each rank's KV GiB."""
    budgets = find(text, rf"total_gpu_memory \({NUM}GiB\) x gpu_memory_utilization \({NUM}\) = {NUM}GiB")
    terms = find(
        text,
        rf"model weights take {NUM}GiB; non_torch_memory takes {NUM}GiB; PyTorch activation peak memory takes {NUM}GiB; "
        rf"the rest of the memory reserved for KV Cache is {NUM}GiB\.",
    )
    c.eq("profile lines per rank", len(budgets), len(terms))
    kvs = []
    for (t, u, ut), (w, n, a, kv) in zip(budgets, terms, strict=False):
        c.eq("u·T", float(ut), round(float(u) * float(t), 2), 0.01)
        c.eq("KV = u·T − W − N − A", float(kv), float(ut) - float(w) - float(n) - float(a), 0.015)
        kvs.append(float(kv))
    return kvs


def check_blocks(c: Check, text: str, kvs: list[float], name: str) -> None:
    blocks = find(text, r"# (?:GPU|CUDA|cuda) blocks: (\d+)")
    conc = find(text, rf"Maximum concurrency for (\d+) tokens per request: {NUM}x")
    if not blocks:
        return
    n = int(blocks[0][0] if isinstance(blocks[0], tuple) else blocks[0])
    bb = B * ptb(name)
    if kvs:
        slack = math.ceil(0.005 * GiB / bb) + 1
        c.eq("blocks = floor(min KV / block bytes)", n, int(min(kvs) * GiB) // bb, slack)
    if conc:
        length, x = conc[0]
        c.eq("V0 concurrency = blocks × B / L", float(x), round(n * B / int(length), 2), 0.005)
    fail = find(
        text,
        r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)",
    )
    for length, tokens in fail:
        c.eq("max-len error tokens = blocks × B", int(tokens), n * B)
        c.eq("the request does not fit", int(int(tokens) < int(length)), 1)


def check_v1_tokens(c: Check, text: str, name: str) -> None:
    kvs = [float(x) for x in find(text, rf"Available KV cache memory: {NUM} GiB")]
    tokens = [int(x.replace(",", "")) for x in find(text, r"GPU KV cache size: ([\d,]+) tokens")]
    conc = find(text, rf"Maximum concurrency for ([\d,]+) tokens per request: {NUM}x")
    if not kvs or not tokens:
        return
    page = B * ptb(name)
    slack = math.ceil(0.005 * GiB / page) + 1
    if name in CONCURRENCY_DEFINITION:
        length = int(conc[0][0].replace(",", ""))
        per_request = math.ceil(length / B)
        nblocks = int(min(kvs) * GiB) // page
        c.eq("blocks of the pool", tokens[0] / length * per_request, nblocks, slack)
        c.eq(
            "tokens = int(concurrency × L)",
            tokens[0],
            int(round(tokens[0] / length * per_request) / per_request * length),
            1,
        )
        c.eq("concurrency = blocks / ceil(L/B)", float(conc[0][1]), round(tokens[0] / length, 2), 0.005)
        return
    c.eq("one token line per worker", len(tokens), len(kvs))
    for kv, tok, (length, x) in zip(kvs, tokens, conc, strict=False):
        c.eq("worker tokens = floor(KV / page) × B", tok, int(kv * GiB) // page * B, slack * B)
        c.eq("worker concurrency = tokens / L", float(x), round(tok / int(length.replace(",", "")), 2), 0.005)


def check_reports(c: Check, text: str) -> None:
    pattern = (
        rf"Desired GPU memory utilization is \({NUM}, {NUM} GiB\)\. Actual usage is {NUM} GiB for consumed memory "
        rf"\(weights \+ non-torch\), {NUM} GiB for peak activation, and {NUM} GiB for CUDAGraph memory\..*"
        rf"Current kv cache memory in use is {NUM} GiB\."
    )
    for _u, req, cons, act, graph, kv in find(text, pattern):
        c.eq(
            "report: requested − consumed − activation − graphs = KV",
            float(kv),
            float(req) - float(cons) - float(act) - float(graph),
            0.02,
        )
    avail = find(text, rf"Available KV cache memory: {NUM} GiB")
    for kv in find(text, rf"Current kv cache memory in use is {NUM} GiB"):
        c.eq("report KV = Available KV cache memory", float(kv), float(avail[0]), 0.01)


def check_advice(c: Check, text: str) -> None:
    pattern = rf"--gpu-memory-utilization={NUM} is equivalent to --gpu-memory-utilization={NUM} .*increase --gpu-memory-utilization to {NUM}\."
    est = find(text, rf"Estimated CUDA graph memory: {NUM} GiB total")
    for u, equiv, sugg in find(text, pattern):
        c.eq("suggested − u = u − equivalent", float(sugg) - float(u), float(u) - float(equiv), 0.0002)
        if est:
            total = float(est[0]) / (float(u) - float(equiv))
            c.eq("T = G / (u − equivalent) is a plausible device", int(60 < total < 200), 1)


def check_failure(c: Check, text: str) -> None:
    if "No available memory for the cache blocks" in text:
        avail = [float(x) for x in find(text, rf"Available KV cache memory: {NUM} GiB")]
        c.eq("a negative pool precedes 'No available memory'", int(bool(avail) and avail[-1] <= 0), 1)


def main() -> int:
    errors: list[str] = []
    checks = 0
    for name in sorted(GEOMETRY):
        c = Check(name)
        with open(os.path.join(SAMPLES, name), "rb") as fh:
            text = check_bytes(c, fh.read())
        kvs = check_v0_profile(c, text)
        check_blocks(c, text, kvs, name)
        check_v1_tokens(c, text, name)
        check_reports(c, text)
        check_advice(c, text)
        check_failure(c, text)
        errors += c.errors
        checks += c.n
    listed = {f for f in os.listdir(SAMPLES) if f.endswith(".log")}
    if listed != set(GEOMETRY):
        errors.append(f"samples without geometry, or geometry without a sample: {sorted(listed ^ set(GEOMETRY))}")
    for e in errors:
        print("MISMATCH", e)
    print(
        f"{len(GEOMETRY)} vLLM samples, {checks} checks: "
        + ("samples consistent" if not errors else f"{len(errors)} mismatches")
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
