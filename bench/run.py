"""Benchmark logparse against the references of the performance issue, side by side in one run.

    bench/run [--mb 500] [--journal-entries 300000] [--launches 10000] [--repeat 3]
              [--many-lines 10000000] [--many-launches 10000] [--bomb-mb 1024]
              [--out DIR] [--skip-lnav] [--skip-store] [--only GROUP]
    bench/run --compare A=CMD_A B=CMD_B [same options]


Inputs (generated once by ``bench/generate.py`` and cached in ``--out``, default ``bench/out``):
a ``journalctl -o short-iso`` log of about ``--mb`` MB with its ``-o json`` and ``-o export``
renderings, a genuine ``.journal`` of ``--journal-entries`` entries (written by
``systemd-journal-remote`` from a generated export stream), a store of ``--launches`` launches
(``bench/store_bench.py``), and the two inputs of the memory bound: a ``short-iso`` log of
``--many-lines`` lines holding about ``--many-launches`` launches (ten copies of one day's log, a day
apart: ``generate.py --days``) and a ``.gz`` of ``--bomb-mb`` MiB of NUL bytes, each ingested.  Each command runs ``--repeat`` times, the runs of all commands
interleaved (the machine may be shared: ratios measured side by side mean more than absolute
times); the table gives the median wall time, CPU time and peak RSS (summed over all the processes
of the command, sampled every 10 ms), the rate, and the ratio to the row's reference:

* short-iso: ``LC_ALL=C grep -c "Decode batch"`` (and lnav's load + count, installed from Debian's
  packages when missing);
* the same file on stdin: the file's ``ingest``;
* ``ingest --journal``: ``journalctl -o export --all > /dev/null`` alone, on the same journal;
* read commands: ``logparse --help`` (the difference, in seconds, is the issue's measure: the median
  over rounds of the difference within a round).

Peak RSS has targets (issue 34): 500 MB for the two inputs of the memory bound, 300 MB for every
other row; the rows over theirs are listed under the table.

``--compare A=CMD_A B=CMD_B`` measures two logparse commands instead (``main=/work/main/.venv/bin/logparse``,
``branch=".venv/bin/python -m logparse"``): every logparse row of the table, for both, on the same
inputs, the runs of A and B interleaved in each round (A first in odd rounds, B first in even ones),
each side reading its own copy of the read commands' store (built once, before any timed run, and
opened once by each side, so that a schema migration is not timed). The table gives per row the median
wall time of each with its min–max, the ratio B / A, and ``worse`` where B's median is more than 5 %
slower and outside A's min–max (``better`` the other way round); the load average is noted before and
at the start of every round.

Not a unit test; the README quotes its last table.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
LOGPARSE = f"{PY} -m logparse"


def generate(out: Path, formats: str, mb: int | None = None, lines: int | None = None) -> None:
    size = ["--mb", str(mb)] if mb else ["--lines", str(lines)]
    print(f"generating {out} ...", file=sys.stderr, flush=True)
    subprocess.run([PY, str(HERE / "generate.py"), *size, "--out", str(out), "--formats", formats], check=True)


def ensure_inputs(out: Path, mb: int) -> Path:
    d = out / f"{mb}m"
    if not all((d / f"sglang.{f}.log").exists() for f in ("short-iso", "json", "export")):
        generate(d, "short-iso,json,export", mb=mb)
    return d


MANY, BOMB = "many launches", "gzip bomb"
#: Peak RSS targets (MB): the inputs of the memory bound, and every other row.
RSS_TARGET_MB = {MANY: 500, BOMB: 500}
RSS_TARGET_OTHER_MB = 300


def many_group(lines: int, launches: int) -> str:
    return f"{MANY}: short-iso of {lines / 1e6:g} M lines, ~{launches:,} launches"


def bomb_group(mb: int) -> str:
    return f"{BOMB}: .gz of {mb:,} MiB of NUL bytes"


def ensure_many(out: Path, lines: int, launches: int) -> Path:
    """A short-iso log of ``lines`` lines and about ``launches`` launches (ten days of one day's log)."""
    d = out / f"many-{lines / 1e6:g}m-{launches}"
    path = d / "sglang.short-iso.log"
    if path.exists():
        return path
    tmp = d.with_name(d.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"generating {d} ...", file=sys.stderr, flush=True)
    days = ["--lines", str(lines), "--launches", str(launches), "--days", "10"]
    subprocess.run([PY, str(HERE / "generate.py"), *days, "--out", str(tmp), "--formats", "short-iso"], check=True)
    shutil.rmtree(d, ignore_errors=True)
    tmp.rename(d)
    return path


def ensure_bomb(out: Path, mb: int) -> Path:
    """A gzip stream of ``mb`` MiB of NUL bytes (one member, level 6: ~1 MB per GiB)."""
    import zlib

    path = out / f"zeros-{mb}m.gz"
    if path.exists():
        return path
    tmp = path.with_name(path.name + ".part")
    z = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: a gzip header and trailer
    block = bytes(1 << 20)
    with open(tmp, "wb") as fh:
        for _ in range(mb):
            fh.write(z.compress(block))
        fh.write(z.flush())
    tmp.rename(path)
    return path


def memory_rows(args: argparse.Namespace, db: Path, lp: str = LOGPARSE) -> list[Row]:
    """The two rows of the memory bound (issue 34), ingested into a new store each run; only those
    ``--only`` asks for are generated."""
    rows = []
    new_db = f"rm -f {db} {db}.wal"
    g = many_group(args.many_lines, args.many_launches)
    if not args.only or args.only in g:
        path = ensure_many(args.out, args.many_lines, args.many_launches)
        size = path.stat().st_size
        rows.append(
            Row(g, "logparse ingest", f"{lp} ingest -q --db {db} {path}", args.many_lines, size=size, setup=new_db)
        )
    g = bomb_group(args.bomb_mb)
    if not args.only or args.only in g:
        path = ensure_bomb(args.out, args.bomb_mb)
        # exit 2: no launch in the input, as expected
        cmd = f"{lp} ingest -q --db {db} {path}"
        rows.append(Row(g, "logparse ingest", cmd, size=args.bomb_mb << 20, setup=new_db, ok=(0, 1, 2)))
    return rows


#: Words of the other groups' names (for ``--only``).
OTHER_GROUPS = ("MB short-iso (", "MB -o json", "MB -o export", ".journal of", "store of")


def memory_only(args: argparse.Namespace) -> bool:
    """``--only`` names a group of the memory bound and none of the others."""
    only = args.only
    if not only or any(only in g for g in OTHER_GROUPS):
        return False
    return only in many_group(args.many_lines, args.many_launches) or only in bomb_group(args.bomb_mb)


def ensure_journal(out: Path, entries: int) -> Path:
    """A directory with a genuine journal of ``entries`` entries (systemd-journal-remote)."""
    d = out / f"j{entries // 1000}k"
    if any(d.glob("*.journal")):
        return d
    generate(d, "export,short-iso", lines=entries)
    remote = next(
        (
            p
            for p in ("/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote")
            if Path(p).exists()
        ),
        None,
    )
    if remote is None:
        sys.exit("systemd-journal-remote is missing (apt-get install systemd-journal-remote)")
    subprocess.run([remote, "-o", str(d / "sglang.journal"), str(d / "sglang.export.log")], check=True)
    return d


def ensure_lnav() -> str | None:
    if shutil.which("lnav"):
        return shutil.which("lnav")
    print("installing lnav from Debian's packages ...", file=sys.stderr, flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env, check=False)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "lnav"], env=env, check=False)
    return shutil.which("lnav")


def count(path: Path, what: bytes) -> int:
    n = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            n += block.count(what)
    return n


# ------------------------------------------------------------------ measuring


def _tree_rss_kb(pid: int) -> int:
    """Resident memory (KB) of a process and all its descendants, from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run_once(cmd: str, setup: str | None = None, ok: tuple[int, ...] = (0, 1)) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS KB summed over the process tree) of one run of a shell command.

    stdout goes to a pipe, not /dev/null: GNU grep stops at the first match when its output is
    /dev/null."""
    if setup:
        subprocess.run(setup, shell=True, check=False)
    before = os.times()
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            stop.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _out, err = proc.communicate()
    wall = time.perf_counter() - t
    stop.set()
    sampler.join()
    after = os.times()
    if proc.returncode not in ok:
        print(f"  ! {cmd}: exit {proc.returncode}: {err.decode(errors='replace')[-300:]}", file=sys.stderr)
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, peak


@dataclass
class Row:
    group: str
    name: str
    cmd: str
    units: int = 0  # lines or entries, for the rate
    unit: str = "lines"
    size: int = 0
    ref: str | None = None  # the name of the row this one is compared with
    setup: str | None = None
    ok: tuple[int, ...] = (0, 1)  # exit codes of a run that went as expected
    runs: list = field(default_factory=list)

    def median(self, k: int) -> float:
        return statistics.median(r[k] for r in self.runs)


def measure(rows: list[Row], repeat: int) -> None:
    """All rows ``repeat`` times, interleaved (a busy neighbour slows every row alike)."""
    for i in range(repeat):
        for row in rows:
            row.runs.append(run_once(row.cmd, row.setup, row.ok))
            print(f"  [{i + 1}/{repeat}] {row.group:<28} {row.name:<32} {row.runs[-1][0]:7.2f} s", file=sys.stderr)


# ------------------------------------------------------------------ the rows


def input_rows(d: Path, lnav: str | None, db: Path, lp: str = LOGPARSE) -> list[Row]:
    short, js, ex = (d / f"sglang.{f}.log" for f in ("short-iso", "json", "export"))
    lines = count(short, b"\n")
    entries = count(ex, b"\n__CURSOR=") + 1
    new_db = f"rm -f {db} {db}.wal"
    mb = short.stat().st_size
    g = f"{mb / 1e6:.0f} MB short-iso ({lines / 1e6:.1f} M lines)"
    grep = "grep -c (LC_ALL=C)"
    rows = [Row(g, grep, f'LC_ALL=C grep -c "Decode batch" {short}', lines, size=mb)]
    if lnav:
        rows.append(Row(g, "lnav load+count", f'{lnav} -n -c ";SELECT count(*) FROM all_logs" {short}', lines, size=mb))
    rows += [
        Row(g, "logparse parse", f"{lp} parse --json {short}", lines, size=mb, ref=grep),
        Row(g, "logparse ingest", f"{lp} ingest -q --db {db} {short}", lines, size=mb, ref=grep, setup=new_db),
        Row(
            g,
            "logparse ingest - (stdin, cat)",
            f"cat {short} | {lp} ingest -q --db {db} -",
            lines,
            size=mb,
            ref="logparse ingest",
            setup=new_db,
        ),
    ]
    for path, fmt in ((js, "json"), (ex, "export")):
        size = path.stat().st_size
        g = f"{size / 1e6:.0f} MB -o {fmt} ({entries / 1e6:.1f} M entries)"
        rows += [
            Row(g, "logparse parse", f"{lp} parse --json {path}", entries, "entries", size),
            Row(g, "logparse ingest", f"{lp} ingest -q --db {db} {path}", entries, "entries", size, setup=new_db),
        ]
    return rows


def journal_rows(jd: Path, db: Path, lp: str = LOGPARSE) -> list[Row]:
    exe = shutil.which("journalctl") or "journalctl"
    entries = count(jd / "sglang.export.log", b"\n__CURSOR=") + 1
    size = (jd / "sglang.export.log").stat().st_size
    g = f".journal of {entries / 1e3:.0f} k entries"
    return [
        # the reference: journalctl alone, its output thrown away
        Row(g, "journalctl -o export --all", f"{exe} -D {jd} -o export --all > /dev/null", entries, "entries", size),
        Row(
            g,
            "logparse ingest --journal",
            f"{lp} ingest -q --journal -D {jd} --db {db}",
            entries,
            "entries",
            size,
            ref="journalctl -o export --all",
            setup=f"rm -f {db} {db}.wal",
        ),
    ]


def store_rows(store: Path, launches: int, lp: str = LOGPARSE) -> list[Row]:
    d = f"--db {store}"
    g = f"store of {launches:,} launches"
    cmds = {
        "logparse --help": "--help",
        "launches --limit 50": f"launches --limit 50 {d}",
        "history (one deployment)": f"history --host gpu-3 --model /models/m0 {d}",
        "history (all)": f"history {d}",
        "diff @latest @-2": f"diff @latest @-2 {d}",
        "explain @latest": f"explain @latest {d}",
        "show @latest": f"show @latest {d}",
    }
    return [
        Row(g, name, f"{lp} {args}", ref=None if name == "logparse --help" else "logparse --help")
        for name, args in cmds.items()
    ]


def ensure_store(out: Path, launches: int) -> Path:
    db = out / f"store{launches}.duckdb"
    if not db.exists():
        env = {**os.environ, "LOGPARSE_BENCH_DIR": str(out)}
        subprocess.run([PY, str(HERE / "store_bench.py"), "--launches", str(launches), "--db", str(db)], env=env)
    return db


# ------------------------------------------------------------------ the table


def rss_target(row: Row) -> int:
    return next((mb for key, mb in RSS_TARGET_MB.items() if row.group.startswith(key)), RSS_TARGET_OTHER_MB)


def print_table(rows: list[Row]) -> None:
    by_name = {(r.group, r.name): r for r in rows}
    print("| input | tool | wall s | CPU s | M lines or entries/s | MB/s | peak RSS MB | reference | × reference |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    last = None
    for r in rows:
        wall, cpu, rss = r.median(0), r.median(1), r.median(2)
        rate = f"{r.units / wall / 1e6:.2f}" if r.units else "—"
        mbs = f"{r.size / wall / 1e6:.0f}" if r.size else "—"
        ref = by_name.get((r.group, r.ref)) if r.ref else None
        if ref is None:
            vs, name = "—", "—"
        elif r.group.startswith("store"):  # the median over rounds of the difference within a round
            vs, name = f"+{statistics.median(a[0] - b[0] for a, b in zip(r.runs, ref.runs)):.2f} s", ref.name
        else:
            vs, name = f"{wall / ref.median(0):.2f}", ref.name
        if r.group.startswith("store") or r.units == 0:
            rate = "—"
        group = r.group if r.group != last else ""
        last = r.group
        print(f"| {group} | {r.name} | {wall:.2f} | {cpu:.2f} | {rate} | {mbs} | {rss / 1024:.0f} | {name} | {vs} |")
    over = [r for r in rows if r.median(2) / 1024 > rss_target(r)]
    for r in over:
        print(f"\npeak RSS over its target: {r.group}, {r.name}: {r.median(2) / 1024:.0f} MB > {rss_target(r)} MB")
    lnav = [r for r in rows if r.name == "lnav load+count"]
    if lnav:
        ingest = next(r for r in rows if r.group == lnav[0].group and r.name == "logparse ingest")
        print(f"\nlogparse ingest / lnav load+count on short-iso: {ingest.median(0) / lnav[0].median(0):.2f}")


# ------------------------------------------------------------------ --compare A=CMD B=CMD


@dataclass
class Pair:
    """One row of the table measured for both commands."""

    a: Row
    b: Row

    def verdict(self) -> str:
        wa, wb = [r[0] for r in self.a.runs], [r[0] for r in self.b.runs]
        ma, mb = statistics.median(wa), statistics.median(wb)
        if mb > ma * 1.05 and min(wb) > max(wa):
            return "worse"
        if ma > mb * 1.05 and min(wa) > max(wb):
            return "better"
        return ""


def parse_sides(specs: list[str]) -> list[tuple[str, str]]:
    sides = []
    for spec in specs:
        name, sep, cmd = spec.partition("=")
        if not sep or not name or not cmd.strip():
            sys.exit(f"bench/run: --compare takes NAME=COMMAND, not {spec!r}")
        sides.append((name, cmd.strip()))
    if len(sides) != 2 or sides[0][0] == sides[1][0]:
        sys.exit("bench/run: --compare takes two commands with different names: A=CMD_A B=CMD_B")
    return sides


def side_rows(args: argparse.Namespace, name: str, lp: str, lnav: str | None) -> list[Row]:
    """The logparse rows of the table for one command (each side its own databases)."""
    rows = input_rows(ensure_inputs(args.out, args.mb), lnav, args.out / f"bench-{name}.duckdb", lp)
    jd = ensure_journal(args.out, args.journal_entries)
    rows += journal_rows(jd, args.out / f"bench-journal-{name}.duckdb", lp)
    rows += memory_rows(args, args.out / f"bench-memory-{name}.duckdb", lp)
    if not args.skip_store:
        store = ensure_store(args.out, args.launches)
        copy = args.out / f"store{args.launches}-{name}.duckdb"
        shutil.copyfile(store, copy)
        # the first read of a side opens (and, for a newer schema, migrates) its copy: not timed
        subprocess.run(f"{lp} launches --limit 1 --db {copy}", shell=True, capture_output=True, check=False)
        rows += store_rows(copy, args.launches, lp)
    if args.only:
        rows = [r for r in rows if args.only in r.group]
    return [r for r in rows if lp in r.cmd]


def measure_pairs(pairs: list[Pair], repeat: int) -> list[float]:
    """Every pair ``repeat`` times, A and B back to back, the first of them alternating; the load
    average at the start of every round."""
    loads = []
    for i in range(repeat):
        loads.append(os.getloadavg()[0])
        for p in pairs:
            for row in (p.a, p.b) if i % 2 == 0 else (p.b, p.a):
                row.runs.append(run_once(row.cmd, row.setup, row.ok))
            print(
                f"  [{i + 1}/{repeat}] {p.a.group:<28} {p.a.name:<32} "
                f"{p.a.runs[-1][0]:7.2f} s / {p.b.runs[-1][0]:7.2f} s",
                file=sys.stderr,
            )
    return loads


def _spread(row: Row) -> str:
    walls = [r[0] for r in row.runs]
    return f"{statistics.median(walls):.2f} ({min(walls):.2f}–{max(walls):.2f})"


def print_compare(pairs: list[Pair], names: tuple[str, str]) -> None:
    a, b = names
    print(f"| input | command | {a}: wall s (min–max) | {b}: wall s (min–max) | {b} / {a} | peak RSS MB {a} / {b} | |")
    print("|---|---|---:|---:|---:|---:|---|")
    last = None
    for p in pairs:
        ratio = p.b.median(0) / p.a.median(0) if p.a.median(0) else float("nan")
        rss = f"{p.a.median(2) / 1024:.0f} / {p.b.median(2) / 1024:.0f}"
        group = p.a.group if p.a.group != last else ""
        last = p.a.group
        print(f"| {group} | {p.a.name} | {_spread(p.a)} | {_spread(p.b)} | {ratio:.2f} | {rss} | {p.verdict()} |")
    worse = [p for p in pairs if p.verdict() == "worse"]
    print(f"\n{len(worse)} of {len(pairs)} rows worse for {b} (median > 5 % slower and outside {a}'s min–max)")


def compare_main(args: argparse.Namespace) -> None:
    (na, ca), (nb, cb) = parse_sides(args.compare)
    lnav = None  # the references are the other side's runs, not lnav or grep
    pairs = [Pair(ra, rb) for ra, rb in zip(side_rows(args, na, ca, lnav), side_rows(args, nb, cb, lnav))]
    if not pairs:
        sys.exit("bench/run: no row to compare (see --only)")
    before = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}; load average before: {before:.2f}"
    )
    print(f"{na} = {ca}\n{nb} = {cb}")
    for cmd in (ca, cb):  # bytecode written (where it can be) before the timed runs
        subprocess.run(f"{cmd} --help", shell=True, capture_output=True, check=False)
    loads = measure_pairs(pairs, args.repeat)
    print(f"load average at the start of each round: {', '.join(f'{x:.2f}' for x in loads)}\n")
    print_compare(pairs, (na, nb))


def compile_bytecode() -> None:
    """Write the bytecode of logparse and its dependencies before any timed run: where Python does
    not write it (``PYTHONDONTWRITEBYTECODE``, a read-only install), every run would otherwise time
    the compiler (a quarter of a second a command, measured) as no user's installed copy does."""
    import site
    import sysconfig

    roots = {str(HERE.parent / "logparse"), sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    subprocess.run(
        [PY, "-m", "compileall", "-q", "-j", "0", *sorted(r for r in roots if Path(r).is_dir())], check=False
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=500, help="size of the short-iso input in MB")
    ap.add_argument("--journal-entries", type=int, default=300_000)
    ap.add_argument("--launches", type=int, default=10_000, help="launches in the store of the read commands")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("LOGPARSE_BENCH_DIR") or HERE / "out"))
    ap.add_argument("--skip-lnav", action="store_true")
    ap.add_argument("--skip-store", action="store_true", help="without the read commands")
    ap.add_argument("--many-lines", type=int, default=10_000_000, help="lines of the input of many launches")
    ap.add_argument("--many-launches", type=int, default=10_000, help="launches in the input of many launches")
    ap.add_argument("--bomb-mb", type=int, default=1024, help="MiB of NUL bytes in the .gz of the memory bound")
    ap.add_argument(
        "--only",
        help="only the groups whose name contains this (short-iso, json, export, journal, store, many launches, bomb)",
    )
    ap.add_argument(
        "--compare", nargs=2, metavar="NAME=CMD", help="two logparse commands, measured side by side on every row"
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    if args.compare:
        compare_main(args)
        return
    db = args.out / "bench.duckdb"
    rows = []
    if not memory_only(args):  # --only many/bomb: the other inputs are not generated
        rows += input_rows(ensure_inputs(args.out, args.mb), None if args.skip_lnav else ensure_lnav(), db)
        rows += journal_rows(ensure_journal(args.out, args.journal_entries), args.out / "bench-journal.duckdb")
    rows += memory_rows(args, args.out / "bench-memory.duckdb")
    if not args.skip_store and not memory_only(args):
        rows += store_rows(ensure_store(args.out, args.launches), args.launches)
    if args.only:
        rows = [r for r in rows if args.only in r.group]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}; load average before: {os.getloadavg()[0]:.2f}"
    )
    # logparse's bytecode, as an installed package has it (with PYTHONDONTWRITEBYTECODE set and no
    # __pycache__, every command would compile the modules it imports, the read commands more than --help)
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "logparse")], stdout=subprocess.DEVNULL)
    measure(rows, args.repeat)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
