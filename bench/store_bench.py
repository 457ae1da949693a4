"""Timing of the read commands on a store of many launches, side by side with ``logparse --help``.

    python bench/store_bench.py [--launches 10000] [--db bench/out/10k.duckdb] [--repeat 7]

Builds (once) a store of N launches: a few deployments restarting with changing fractions,
KV dtypes and versions, written in SGLang 0.5.x format, ingested in bulk; then times
``launches``, ``history``, ``diff``, ``explain`` and ``show`` as a user runs them (a new
process each time, output to /dev/null), each round running ``--help`` and every command once.
The table gives each command's median wall time and the median over rounds of its difference to
``--help`` in the same round (the issue's measure: the machine may be shared).  logparse's
bytecode is compiled first, as an installed package has it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("LOGPARSE_BENCH_DIR") or HERE / "out")


def launch_text(rnd: random.Random, t: int, model: str, frac: float, fp8: bool, tp: int) -> str:
    def ts(dt: int) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t + dt))

    before = round(rnd.uniform(78.0, 78.6), 2)
    weights = 15.05
    after = round(before - weights, 2)
    rest = after - before * (1 - frac)
    cell = 4096 * (1 if fp8 else 2) * 32 // tp * 2
    tokens = max(int(rest * 2**30 // cell), 1)
    kv = round((tokens + 1) * cell / 2**30 / 2, 2)
    dtype = "torch.float8_e4m3fn" if fp8 else "torch.bfloat16"
    lines = [
        f"[{ts(0)}] server_args=ServerArgs(model_path='{model}', tp_size={tp}, mem_fraction_static={frac}, "
        f"kv_cache_dtype='{'fp8_e4m3' if fp8 else 'auto'}', random_seed={rnd.randrange(10**9)})"
    ]
    for r in range(tp):
        tag = f" TP{r}" if tp > 1 else ""
        lines += [
            f"[{ts(5)}{tag}] Load weight begin. avail mem={before:.2f} GB",
            f"[{ts(9)}{tag}] Load weight end. elapsed=4.20 s, type=LlamaForCausalLM, avail mem={after:.2f} GB, "
            f"mem usage={weights:.2f} GB.",
            f"[{ts(10)}{tag}] KV Cache is allocated. dtype: {dtype}, #tokens: {tokens}, K size: {kv:.2f} GB, "
            f"V size: {kv:.2f} GB",
            f"[{ts(11)}{tag}] Memory pool end. avail mem={after - 2 * kv:.2f} GB",
        ]
    lines += [
        f"[{ts(20)}{' TP0' if tp > 1 else ''}] max_total_num_tokens={tokens}, chunked_prefill_size=8192, "
        f"max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, "
        f"available_gpu_mem={after - 2 * kv - 0.5:.2f} GB",
        f"[{ts(30)}] The server is fired up and ready to roll!",
    ]
    return "\n".join(lines) + "\n"


def build(db: Path, n: int, base: Path) -> None:
    rnd = random.Random(11)
    out = base / f"store{n}"
    out.mkdir(parents=True, exist_ok=True)
    files = []
    per_host = n // 10
    for h in range(10):
        t = 1_770_000_000
        parts = []
        for i in range(per_host):
            t += rnd.randint(600, 86400)
            parts.append(
                launch_text(rnd, t, f"/models/m{h % 3}", rnd.choice([0.8, 0.85, 0.88]), i % 7 == 0, rnd.choice([1, 2]))
            )
        f = out / f"host{h}.log"
        f.write_text("".join(parts))
        files.append(f)
    for h, f in enumerate(files):
        subprocess.run(
            [sys.executable, "-m", "logparse", "ingest", "-q", "--db", str(db), "--host", f"gpu-{h}", str(f)],
            check=True,
        )


def run_once(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "logparse", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--launches", type=int, default=10000)
    ap.add_argument("--db", type=Path)
    ap.add_argument("--repeat", type=int, default=7, help="rounds (each runs --help and every command once)")
    ap.add_argument(
        "--out",
        type=Path,
        default=OUT,
        help="where the generated logs and store go (default $LOGPARSE_BENCH_DIR or bench/out)",
    )
    args = ap.parse_args()
    db = args.db or args.out / f"store{args.launches}.duckdb"
    if not db.exists():
        t = time.perf_counter()
        build(db, args.launches, args.out)
        print(f"built {db} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "logparse")], stdout=subprocess.DEVNULL)
    d = ["--db", str(db)]
    cmds = {
        "logparse --help": ["--help"],
        "launches --limit 50": ["launches", "--limit", "50", *d],
        "launches --host gpu-3": ["launches", "--host", "gpu-3", *d],
        "history --deployment (one)": ["history", "--host", "gpu-3", "--model", "/models/m0", *d],
        "history (all)": ["history", *d],
        "diff @latest @-2": ["diff", "@latest", "@-2", *d],
        "explain @latest": ["explain", "@latest", *d],
        "show @latest": ["show", "@latest", *d],
    }
    run_once(["launches", "--limit", "1", *d])  # a store of an older schema is migrated once, not timed
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            walls[name].append(run_once(cmd))
    help_walls = walls["logparse --help"]
    print(f"| command ({args.launches} launches) | wall s (median of {args.repeat}) | − `--help` (median of rounds) |")
    print("|---|---:|---:|")
    for name, w in walls.items():
        delta = statistics.median(a - b for a, b in zip(w, help_walls))
        print(f"| `{name}` | {statistics.median(w):.2f} | {'—' if w is help_walls else f'+{delta:.2f}'} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
