"""Benchmark logparse against the baselines of the performance issue, side by side.

    bench/run [--sizes 100,1000,3000] [--repeat 3] [--skip-lnav] [--store]

For each size (MB of ``journalctl -o short-iso`` text) it generates the input once
(``bench/generate.py``, cached in ``bench/out/``), then times in the same run, on the
same file: ``grep -c``, ``grep -cE``, lnav (load + count; installed from Debian's
packages when missing), a plain Python ``for line in f`` loop with three substring
tests, polars reading all lines with two regex passes, and logparse (``parse`` and,
with ``--store``, ``ingest`` into a fresh DuckDB file).  It prints wall time (median of
``--repeat`` runs), CPU time, lines/s, MB/s, peak RSS and the ratios to ``grep -c`` and
to lnav.  Not a unit test; the README quotes its last table.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PY = sys.executable


def ensure_input(mb: int, formats: str) -> Path:
    d = OUT / f"{mb}m"
    want = [d / f"sglang.{f}.log" for f in formats.split(",")]
    if not all(p.exists() for p in want):
        print(f"generating {mb} MB input in {d} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [PY, str(HERE / "generate.py"), "--mb", str(mb), "--out", str(d), "--formats", formats], check=True
        )
    return d


def count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 24)
            if not b:
                return n
            n += b.count(b"\n")


def timed(cmd: list[str] | str, shell: bool = False, env: dict | None = None) -> tuple[float, float, int, int]:
    """(wall s, cpu s, peak RSS KB, exit code) of one run of a command (children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # stdout to a pipe, not /dev/null: GNU grep stops at the first match when its output is
    # /dev/null, which would make the floor look 100x lower than it is.
    proc = subprocess.run(cmd, shell=shell, capture_output=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        print(
            f"  ! {cmd if isinstance(cmd, str) else ' '.join(cmd)}: exit {proc.returncode}: "
            f"{proc.stderr.decode(errors='replace')[-300:]}",
            file=sys.stderr,
        )
    return wall, cpu, after.ru_maxrss, proc.returncode


def peak_rss(cmd: list[str] | str, shell: bool = False) -> int:
    """Peak RSS (KB) of one run, measured alone with /usr/bin/time when available."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if not gnu_time:
        return 0
    with tempfile.NamedTemporaryFile("r") as f:
        full = [gnu_time, "-f", "%M", "-o", f.name] + (["sh", "-c", cmd] if shell else cmd)
        subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            return int(f.read().strip().splitlines()[-1])
        except (ValueError, IndexError):
            return 0


def ensure_lnav() -> str | None:
    if shutil.which("lnav"):
        return shutil.which("lnav")
    print("installing lnav from Debian's packages ...", file=sys.stderr, flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env, check=False)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "lnav"], env=env, check=False)
    return shutil.which("lnav")


PY_LOOP = r"""
import sys
n = a = b = c = 0
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        n += 1
        if "KV Cache is allocated" in line: a += 1
        if "Decode batch" in line: b += 1
        if "avail mem=" in line: c += 1
print(n, a, b, c)
"""

POLARS_TWO_REGEX = r"""
import sys, polars as pl
df = pl.read_csv(sys.argv[1], has_header=False, separator="\x1f", quote_char=None, new_columns=["l"],
                 schema={"l": pl.String}, encoding="utf8-lossy")
print(df.select(pl.col("l").str.contains(r"KV Cache is allocated\. .*#tokens: \d+").sum(),
                pl.col("l").str.extract(r"#running-req: (\d+)", 1).cast(pl.Int64).max()))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000,3000", help="input sizes in MB (short-iso rendering)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-lnav", action="store_true")
    ap.add_argument("--store", action="store_true", help="also time `logparse ingest` into a fresh DuckDB file")
    ap.add_argument(
        "--formats",
        default="short-iso,json,export",
        help="journalctl renderings to time logparse on (the baselines run on short-iso)",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    lnav = None if args.skip_lnav else ensure_lnav()
    logparse = [PY, "-m", "logparse"]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}"
    )
    rows = []
    for mb in sizes:
        formats = args.formats
        d = ensure_input(mb, formats)
        for fmt in formats.split(","):
            path = d / f"sglang.{fmt}.log"
            size = path.stat().st_size
            lines = count_lines(path)
            tools: list[tuple[str, list[str] | str, bool]] = []
            if fmt == "short-iso":
                tools += [
                    ("grep -c", ["grep", "-c", "KV Cache is allocated", str(path)], False),
                    ("grep -cE", ["grep", "-cE", r"KV Cache is allocated\. .*#tokens: [0-9]+", str(path)], False),
                    ("python for-loop", [PY, "-c", PY_LOOP, str(path)], False),
                    ("polars 2 regex", [PY, "-c", POLARS_TWO_REGEX, str(path)], False),
                ]
                if lnav:
                    tools.append(
                        ("lnav load+count", [lnav, "-n", "-c", ";SELECT count(*) FROM all_logs", str(path)], False)
                    )
            tools.append(("logparse parse", logparse + ["parse", "--json", str(path)], False))
            if args.store:
                db = OUT / "bench.duckdb"
                tools.append(
                    ("logparse ingest", f"rm -f {db} {db}.wal && {PY} -m logparse ingest --db {db} {path}", True)
                )
            results = {}
            for name, cmd, shell in tools:
                runs = [timed(cmd, shell) for _ in range(args.repeat)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = peak_rss(cmd, shell)
                results[name] = (wall, cpu, rss)
                print(f"  {mb:>5} MB {fmt:<10} {name:<18} {wall:7.2f} s", file=sys.stderr, flush=True)
            base = results.get("grep -c")
            ref_lnav = results.get("lnav load+count")
            for name, (wall, cpu, rss) in results.items():
                rows.append(
                    (
                        f"{mb} MB",
                        fmt,
                        name,
                        wall,
                        cpu,
                        lines / wall / 1e6,
                        size / wall / 1e6,
                        rss / 1024,
                        wall / base[0] if base else None,
                        wall / ref_lnav[0] if ref_lnav else None,
                    )
                )
    print()
    print("| input | format | tool | wall s | CPU s | M lines/s | MB/s | peak RSS MB | × grep -c | × lnav |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = f"{r[8]:.1f}" if r[8] else "—"
        lnav_ratio = f"{r[9]:.2f}" if r[9] else "—"
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} | {r[6]:.0f} | {r[7]:.0f} | "
            f"{ratio} | {lnav_ratio} |"
        )


if __name__ == "__main__":
    main()
