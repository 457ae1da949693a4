"""Small commands against ``logparse --help``: the issue's measure of a command's start-up.

    bench/small [--repeat 15] [--file samples/kimi-k25/launch-1-baseline.log] [--out DIR]
                [--logparse CMD | --compare A=CMD_A B=CMD_B]

Each round runs every row once, in one order (the machine may be shared: a busy neighbour slows a
round alike); the table gives per row the median wall time and CPU time (user + system, with its
child processes) with their min–max, and the median over rounds of the ratio to ``logparse --help`` in
the same round, of wall time and of CPU time (CPU time is the steadier of the two on a loaded
machine).  The rows:

* ``parse FILE`` (the table on a pipe) and ``parse --json FILE``;
* ``ingest FILE`` into a store that already holds other launches (a fresh copy each round, made
  before the timed run: the usual case), and into a new store (its schema created);
* ``explain @latest`` and ``query SQL`` (a count of the launches) of the store of one small file;
* ``report --html`` of a store of every sample under ``samples/`` (built once, before any timed run).

``--compare A=CMD_A B=CMD_B`` measures two logparse commands (two trees: run each as
``env PYTHONPATH=TREE:SITE_PACKAGES python -S -m logparse``, so that an editable install does not
decide which tree is imported), their runs interleaved in each round, each with its own stores under
``--out``/NAME; a last table compares them row by row.

The targets (issue 28): ``parse``, ``explain`` and ``query`` of one small input within 2.0x of
``logparse --help``, ``ingest`` of one small file within 3.0x.
What a command imports is checked by ``tests/test_imports.py`` (deterministic); this script only
measures.  Not a unit test.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

DEFAULT_FILE = ROOT / "samples" / "kimi-k25" / "launch-1-baseline.log"
#: The store the first ``ingest`` row adds to (not one of the samples the row ingests).
BASE_INPUT = ROOT / "samples" / "sglang-0.5" / "restarts-0.5.12.log"
#: The issue's bounds (× ``logparse --help``): the read commands of one small input, and ingest.
TARGET_READ, TARGET_INGEST = 2.0, 3.0


@dataclass
class Row:
    name: str
    args: str
    setup: str | None = None
    target: float | None = None  #: the issue's bound of the row (× ``--help``), if it has one
    runs: list = field(default_factory=list)  #: (wall s, CPU s, peak RSS KB) per round

    def med(self, k: int) -> float:
        return statistics.median(r[k] for r in self.runs)

    def spread(self, k: int) -> str:
        return f"{min(r[k] for r in self.runs):.3f}–{max(r[k] for r in self.runs):.3f}"


def prepare(out: Path, lp: str) -> tuple[Path, Path]:
    """The base store (other launches) and the store of every sample, each built once."""
    out.mkdir(parents=True, exist_ok=True)
    base, samples = out / "small-base.duckdb", out / "small-samples.duckdb"
    if not base.exists():
        subprocess.run(f"{lp} ingest -q --db {base} {shlex.quote(str(BASE_INPUT))}", shell=True, check=True, cwd=out)
    if not samples.exists():
        subprocess.run(
            f"{lp} ingest -q --db {samples} {shlex.quote(str(ROOT / 'samples'))}", shell=True, check=True, cwd=out
        )
    return base, samples


def rows_for(out: Path, file: Path, base: Path, samples: Path) -> list[Row]:
    f = shlex.quote(str(file))
    work, new = out / "small-work.duckdb", out / "small-new.duckdb"
    return [
        Row("logparse --help", "--help"),
        Row("parse --help", "parse --help"),
        Row("parse FILE", f"parse {f}", target=TARGET_READ),
        Row("parse --json FILE", f"parse --json {f}", target=TARGET_READ),
        Row("explain @latest (a store of one file)", f"explain @latest --db {base}", target=TARGET_READ),
        Row(
            "query SQL (a store of one file)", f"query 'SELECT count(*) FROM launches' --db {base}", target=TARGET_READ
        ),
        Row(
            "ingest FILE (a store with launches)",
            f"ingest -q --db {work} {f}",
            f"cp {base} {work}",
            target=TARGET_INGEST,
        ),
        Row("ingest FILE (a new store)", f"ingest -q --db {new} {f}", f"rm -f {new} {new}.wal", target=TARGET_INGEST),
        Row("report --html (the samples)", f"report -q --html {out / 'small-report.html'} --db {samples}"),
    ]


def run_once(argv: list[str], setup: str | None, cwd: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS KB) of one run, from the kernel's account of the process (wait4:
    microseconds, where ``os.times`` counts clock ticks of 10 ms).  Its output goes to a file."""
    if setup:
        subprocess.run(setup, shell=True, check=True)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            print(f"  ! {' '.join(argv)}: exit {code}: {err.read().decode(errors='replace')[-300:]}", file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


@dataclass
class Side:
    """One logparse command measured: its rows, and its own stores under ``out``."""

    name: str
    cmd: str
    out: Path
    rows: list[Row] = field(default_factory=list)


def measure(sides: list[Side], repeat: int) -> list[float]:
    """Every row of every side once a round (the sides in turn first: A B, B A, ...); run in the side's
    ``out`` (not the worktree: ``-m logparse`` would import the worktree's package before one named
    by ``PYTHONPATH``)."""
    loads = []
    for i in range(repeat):
        loads.append(os.getloadavg()[0])
        for side in sides if i % 2 == 0 else sides[::-1]:
            for row in side.rows:
                row.runs.append(run_once([*shlex.split(side.cmd), *shlex.split(row.args)], row.setup, side.out))
        print(f"  round {i + 1}/{repeat} done (load {loads[-1]:.2f})", file=sys.stderr)
    return loads


def ratio(row: Row, ref: Row, k: int) -> float:
    """The median over rounds of the row's time over the reference's time in the same round."""
    return statistics.median(a[k] / b[k] for a, b in zip(row.runs, ref.runs) if b[k] > 0)


def print_table(rows: list[Row]) -> None:
    ref = rows[0]
    print("| command | wall s (min–max) | CPU s (min–max) | peak RSS MB | × --help, wall | × --help, CPU | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        vs_wall, vs_cpu = ratio(r, ref, 0), ratio(r, ref, 1)
        verdict = (
            (f"≤ {r.target:.1f}: " + ("met" if max(vs_wall, vs_cpu) <= r.target else "not met")) if r.target else ""
        )
        print(
            f"| {r.name} | {r.med(0):.3f} ({r.spread(0)}) | {r.med(1):.3f} ({r.spread(1)}) | "
            f"{r.med(2) / 1024:.0f} | {vs_wall:.2f} | {vs_cpu:.2f} | {verdict} |"
        )


def print_compare(a: Side, b: Side) -> None:
    """Per row: each side's ratio to its own ``--help`` (CPU) and B's median CPU time over A's."""
    print(f"\n| command | {a.name}: × --help, CPU | {b.name}: × --help, CPU | CPU {b.name} / {a.name} |")
    print("|---|---:|---:|---:|")
    for ra, rb in zip(a.rows, b.rows):
        print(
            f"| {ra.name} | {ratio(ra, a.rows[0], 1):.2f} | {ratio(rb, b.rows[0], 1):.2f} | {rb.med(1) / ra.med(1):.2f} |"
        )


def make_side(name: str, cmd: str, out: Path, file: Path) -> Side:
    side = Side(name, cmd, out)
    base, samples = prepare(out, cmd)
    side.rows = rows_for(out, file, base, samples)
    # the grammar tables cached before the timed runs (an installed package has them)
    subprocess.run(f"{cmd} parse {shlex.quote(str(file))}", shell=True, capture_output=True, check=False, cwd=out)
    return side


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the small file parse and ingest read")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("LOGPARSE_BENCH_DIR") or HERE / "out"))
    ap.add_argument("--logparse", default=f"{sys.executable} -m logparse", help="the logparse command measured")
    ap.add_argument("--compare", nargs=2, metavar="NAME=CMD", help="two logparse commands, their runs interleaved")
    args = ap.parse_args()
    file, out = args.file.resolve(), args.out.resolve()
    specs = [spec.split("=", 1) for spec in args.compare] if args.compare else [["logparse", args.logparse]]
    if any(len(spec) != 2 for spec in specs):
        sys.exit("bench/small: --compare NAME=CMD NAME=CMD")
    # bytecode written before the timed runs (an installed package has it)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "logparse")], stdout=subprocess.DEVNULL)
    sides = [make_side(name, cmd, out / name if args.compare else out, file) for name, cmd in specs]
    lines = sum(1 for _ in file.open("rb"))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}; load average before: {os.getloadavg()[0]:.2f}"
    )
    shown = file.relative_to(ROOT) if file.is_relative_to(ROOT) else file
    print(f"{'; '.join(f'{s.name} = {s.cmd}' for s in sides)}; FILE = {shown} ({lines} lines)")
    loads = measure(sides, args.repeat)
    print(f"{args.repeat} rounds; load average at the start of each: {', '.join(f'{x:.1f}' for x in loads)}")
    for side in sides:
        print(f"\n{side.name}:\n" if args.compare else "")
        print_table(side.rows)
        for name in ("small-work.duckdb", "small-new.duckdb", "small-report.html"):
            (side.out / name).unlink(missing_ok=True)
    if args.compare:
        print_compare(*sides)


if __name__ == "__main__":
    main()
