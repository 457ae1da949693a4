#!/usr/bin/env python3
"""The public contract of an installed logparse, recorded and compared (the refactor's safety net).

    python tools/contract.py snapshot DIR [--logparse PATH] [--samples DIR] [--corpus DIR | --no-corpus]
                                          [--subprocess [--jobs N]]
    python tools/contract.py compare DIR_A DIR_B     # two snapshots
    python tools/contract.py compare DIR_A [--logparse PATH ...]   # DIR_A against a fresh snapshot

``snapshot`` runs the installed logparse (the ``logparse`` next to the running Python, or
``--logparse PATH``: another install's console script, so that two installs can be compared) over
``samples/`` and ``../shared/corpus`` (``$LOGPARSE_SHARED/corpus``; skipped when absent) and writes
every public output under ``DIR/outputs/`` (one text file per command: the command line, its exit
status, stderr and stdout), and ``DIR/manifest.json`` (versions, timings; not compared):

* per input file (every file a directory walk reads: not hidden, not documentation): ``parse --json``,
  ``parse --ndjson``, ``parse --format csv``;
* one ``ingest`` of both directories into a fresh DuckDB store (its report), then on that store:
  ``launches`` (json, csv, table), ``history`` (json of every metric, csv and table of the default),
  per launch ``show``, ``explain``, ``check`` (json and table) and ``plan CONFIG --from LAUNCH``
  (json and table; for the launches whose model has a config in ``samples/models/`` or
  ``corpus/models/``), ``diff`` of every consecutive pair in ``launches`` order (json and table),
  ``metrics`` (Prometheus text), ``export`` (per table its Parquet schema and its rows sorted, the
  partition layout, the marker file), ``DESCRIBE`` of every table and view (and the indexes), and
  ``report --html`` (split into one tag per line so that a diff stays short).

Tables are rendered with ``COLUMNS=200``; every command runs with ``TZ=UTC``, ``PYTHONHASHSEED=0``,
no ``$LOGPARSE_DB``, an empty ``$XDG_DATA_HOME`` and, where ``setarch -R`` works, without
address-space randomization (see ``fixed_addresses``): the same run gives the same bytes. The inputs are copied into the snapshot's
temporary directory, every file with the same fixed mtime (2026-01-01 00:00 UTC), and named by
relative paths from there, so that a snapshot does not depend on where the repository lives.

Normalizations (volatile values only; everything else is compared byte for byte):

1. **absolute paths**: the snapshot's temporary directory (holding the copied inputs and the store)
   -> ``<tmp>``; the install's package directory -> ``<package>`` and its ``sys.prefix`` -> ``<prefix>``;
2. **clock timestamps**: a timestamp (``YYYY-MM-DD[ T]HH:MM[:SS[.f]]``, optionally ``Z``/``+00:00``/
   `` UTC``) that falls inside the snapshot's own run (start - 2 min .. end + 2 min) -> ``<now>``:
   ``ingested_at``, ``updated_at``, ``applied_at``, ``exported_at``, the report's "generated" stamp.
   A timestamp from a log is never inside the run;
3. **JSON keys** ``ingested_at``, ``updated_at``, ``applied_at``, ``exported_at`` (any value but null)
   -> ``<now>``, and ``logparse_version`` -> ``<version>``, wherever they are in a JSON document
   (the same column names in the Parquet rows);
4. **the version string**: ``logparse X.Y.Z`` -> ``logparse <version>``;
5. **durations of the run itself**: none is printed today on a non-terminal (no progress bar, no
   "took N s"), so none is normalized; a launch's own durations (load, graphs, startup) are data.

``compare`` prints a unified diff (at most ``--lines`` lines, long lines cut) for each output that
differs, the outputs present in one snapshot only, and a summary; it exits 1 on any difference, 0
when there is none.

By default the commands run inside one Python process of the install under test (its console
script's interpreter; the CLI app invoked as typer's test runner does, the same path as the
suite's ``cli()``): 725 commands in 40-110 s on 2 cores (load average 5-9). ``--subprocess`` runs
each command as its own ``logparse`` process instead (``--jobs`` at a time; 10 min at load 8). On
main both modes give the same bytes in every output.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("LOGPARSE_SHARED", ROOT.parent / "shared"))
FORMAT = "logparse-contract/1"

#: The files a directory walk does not read (logparse.sources: documentation and code).
NOT_LOGS = frozenset({".md", ".rst", ".py", ".pyc", ".sh", ".toml", ".cfg", ".ini", ".yaml", ".yml"})
#: ``history --metric`` names on main (an unknown one in another install is a difference).
HISTORY_METRICS = (
    "kv_tokens", "max_total_num_tokens", "predicted_kv_tokens", "avail_before_load_gb", "weights_gb",
    "avail_after_load_gb", "kv_size_gb", "kv_pool_gb", "avail_after_pool_gb", "graph_gb",
    "avail_after_graph_gb", "headroom_gb", "min_headroom_gb", "lowest_free_gb", "available_mem_gb",
    "kv_bytes_per_token", "max_prefill_tokens", "max_running_requests_effective", "context_len",
    "mem_fraction_static", "load_s", "graph_s", "startup_s", "peak_running_req", "peak_token_usage",
    "peak_queue_req", "retractions",
)  # fmt: skip
CLOCK_KEYS = frozenset({"ingested_at", "updated_at", "applied_at", "exported_at"})
VERSION_KEYS = frozenset({"logparse_version"})
FIXED_MTIME = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
TIMESTAMP = re.compile(
    r"(?P<d>\d{4}-\d{2}-\d{2})[T ](?P<t>\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?:Z|[+-]\d{2}:?\d{2}| UTC)?"
)
CLOCK_SLACK_S = 120


# ----------------------------------------------------------------------------- normalizing


class Normalizer:
    """The normalizations of one snapshot (see the module docstring): paths, clock, version."""

    def __init__(self, paths: dict[str, str], window: tuple[float, float], version: str) -> None:
        # longest first, so that a directory inside another is replaced by its own name
        self.paths = sorted(((p, name) for p, name in paths.items() if p), key=lambda x: -len(x[0]))
        self.window = (window[0] - CLOCK_SLACK_S, window[1] + CLOCK_SLACK_S)
        self.version = version

    def _clock(self, m: re.Match) -> str:
        t = m.group("t")
        try:
            when = datetime.fromisoformat(f"{m.group('d')}T{t if len(t) > 5 else t + ':00'}").replace(tzinfo=UTC)
        except ValueError:
            return m.group(0)
        inside = self.window[0] - 60 <= when.timestamp() <= self.window[1]  # minute precision: a minute's slack
        return "<now>" if inside else m.group(0)

    def text(self, s: str) -> str:
        for path, name in self.paths:
            s = s.replace(path, name)
        s = TIMESTAMP.sub(self._clock, s)
        if self.version:
            s = s.replace(f"logparse {self.version}", "logparse <version>")
        return s

    def value(self, v: Any, key: str | None = None) -> Any:
        """A JSON value (or a Parquet cell) with its volatile parts replaced."""
        if key in CLOCK_KEYS and v is not None:
            return "<now>"
        if key in VERSION_KEYS and v is not None:
            return "<version>"
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {k: self.value(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        return v

    def stdout(self, out: str, kind: str) -> str:
        """``kind``: json (one document), ndjson (one per line), html, or text."""
        if kind == "json":
            try:
                return json.dumps(self.value(json.loads(out)), indent=1, ensure_ascii=False) + "\n"
            except ValueError:
                pass
        elif kind == "ndjson":
            try:
                docs = [self.value(json.loads(line)) for line in out.splitlines() if line.strip()]
                return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
            except ValueError:
                pass
        elif kind == "html":
            return self.text(out).replace("><", ">\n<")
        return self.text(out)


def render(n: Normalizer, argv: list[str], res: dict, kind: str) -> str:
    """One recorded output: the command line, the exit status, stderr, stdout."""
    head = f"$ logparse {' '.join(argv)}\nexit {res['code']}\n"
    err = n.text(res["stderr"])
    return head + (f"--- stderr\n{err}" if err else "") + f"--- stdout\n{n.stdout(res['stdout'], kind)}"


# ----------------------------------------------------------------------------- the runner
# Runs inside the install under test (its own Python): ``contract.py _run REQUEST RESULT``.


@functools.cache
def _cli_app() -> Any:
    """The typer app of the install's ``logparse`` console script."""
    from importlib import import_module
    from importlib.metadata import entry_points

    (ep,) = entry_points(group="console_scripts", name="logparse")
    return import_module(ep.module).app


def _run_cli_inprocess(argv: list[str]) -> dict:
    import traceback

    from typer.testing import CliRunner

    res = CliRunner().invoke(_cli_app(), argv, prog_name="logparse")
    err = res.stderr
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        last = traceback.format_exception_only(type(res.exception), res.exception)[-1]
        err += f"uncaught {last}"
    return {"code": res.exit_code, "stdout": res.stdout, "stderr": err}


def _run_cli_process(exe: str, argv: list[str]) -> dict:
    p = subprocess.run([exe, *argv], capture_output=True, text=True, errors="replace")
    return {"code": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def _describe(db: str) -> dict:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    out = {}
    objects = con.sql(
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
    ).fetchall()
    for name, kind in objects:
        cols = con.sql(f'DESCRIBE "{name}"').fetchall()
        out[name] = [kind] + ["\t".join(map(str, c)) for c in cols]
    idx = con.sql("SELECT index_name, table_name, sql FROM duckdb_indexes() ORDER BY 1").fetchall()
    out["_indexes"] = ["\t".join(map(str, i)) for i in idx]
    con.close()
    return out


def _cell(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dict):
        return {k: _cell(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_cell(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)


def _parquet(root: str) -> dict:
    """Per exported table: its schema (as DuckDB reads it) and its rows; the files; the marker."""
    import duckdb

    base = Path(root)
    files = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
    tables = {}
    for d in sorted(p for p in base.iterdir() if p.is_dir()):
        glob = str(d / "**" / "*.parquet").replace("'", "''")
        rel = duckdb.sql(f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true)")
        tables[d.name] = {
            "schema": [f"{c}\t{t}" for c, t in zip(rel.columns, rel.types)],
            "rows": [dict(zip(rel.columns, map(_cell, row))) for row in rel.fetchall()],
        }
    markers = {f: (base / f).read_text() for f in files if not f.endswith(".parquet")}
    return {"files": files, "tables": tables, "markers": markers}


def _info() -> dict:
    import logparse

    return {"version": logparse.__version__, "package": str(Path(logparse.__file__).parent), "prefix": sys.prefix}


def run_requests(request: dict) -> list[dict]:
    """The results of the request's stages, in order: one stage after the other, the operations
    of a stage in parallel with ``--subprocess`` (they only read what the stages before wrote)."""
    from concurrent.futures import ThreadPoolExecutor

    exe = request.get("exe")

    def one(op: dict) -> dict:
        if op["op"] == "cli":
            return _run_cli_process(exe, op["argv"]) if exe else _run_cli_inprocess(op["argv"])
        if op["op"] == "describe":
            return _describe(op["db"])
        if op["op"] == "parquet":
            return _parquet(op["dir"])
        return _info()

    results: list[dict] = []
    for ops in request["stages"]:
        if exe:  # processes may overlap; in one process the CLI runs one command at a time
            with ThreadPoolExecutor(request.get("jobs", 2)) as pool:
                results += pool.map(one, ops)
        else:
            results += [one(op) for op in ops]
    return results


def runner_main(req_path: str, out_path: str) -> None:
    here = Path(__file__).resolve().parent  # tools/ is no place to import the install from
    sys.path[:] = [p for p in sys.path if not p or Path(p).resolve() != here]
    request = json.loads(Path(req_path).read_text())
    Path(out_path).write_text(json.dumps(run_requests(request), default=str))


# ----------------------------------------------------------------------------- the snapshot


class Install:
    """The logparse under test: its console script and the Python that runs it."""

    def __init__(self, logparse: str | None, subprocess_mode: bool, jobs: int) -> None:
        exe = Path(logparse) if logparse else Path(sys.executable).parent / "logparse"
        if not exe.exists():
            sys.exit(f"contract: {exe}: no such file (give --logparse PATH)")
        self.exe = str(exe.absolute())
        self.python = self._python_of(exe)
        self.subprocess, self.jobs = subprocess_mode, jobs

    @staticmethod
    def _python_of(exe: Path) -> str:
        first = exe.read_bytes()[:200].split(b"\n", 1)[0].decode(errors="replace")
        if first.startswith("#!") and "python" in first:
            return first[2:].strip().split()[0]
        sibling = exe.parent / "python"
        if sibling.exists():
            return str(sibling)
        sys.exit(f"contract: cannot tell the Python of {exe} (not a console script)")

    def run(self, stages: list[list[dict]], work: Path, env: dict[str, str]) -> list[dict]:
        """The results of the operations of ``stages`` (one after the other), in one runner process."""
        req, out = work / "request.json", work / "result.json"
        request: dict[str, Any] = {"stages": stages}
        if self.subprocess:
            request |= {"exe": self.exe, "jobs": self.jobs}
        req.write_text(json.dumps(request))
        cmd = [*fixed_addresses(), self.python, str(Path(__file__).resolve()), "_run", str(req), str(out)]
        p = subprocess.run(cmd, cwd=work, env=env)
        if p.returncode != 0:
            sys.exit(f"contract: the runner failed (exit {p.returncode}): {' '.join(cmd)}")
        return json.loads(out.read_text())


@functools.cache
def fixed_addresses() -> list[str]:
    """``setarch -R``: the runner (and the processes it starts) without address-space randomization,
    when the system allows it. Python 3.11 hashes None by its address, so a set holding None iterates
    in another order in every process; with fixed addresses it is the same order in every run (main's
    ``diff`` orders the ranks of two launches by a key where DP-1 and no DP rank tie, so their rows
    swapped between runs)."""
    exe = shutil.which("setarch")
    if exe is None:
        return []
    cmd = [exe, os.uname().machine, "-R"]
    probe = subprocess.run([*cmd, "true"], capture_output=True)
    return cmd if probe.returncode == 0 else []


def command_env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LOGPARSE_DB", "FORCE_COLOR", "CLICOLOR_FORCE")}
    (work / "xdg-data").mkdir(exist_ok=True)
    return env | {"TZ": "UTC", "COLUMNS": "200", "PYTHONHASHSEED": "0", "XDG_DATA_HOME": str(work / "xdg-data")}


def copy_inputs(src: Path, dst: Path) -> list[str]:
    """``src`` copied to ``dst`` with a fixed mtime; the log files a directory walk reads, relative to ``dst.parent``."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    for p in [dst, *dst.rglob("*")]:
        os.utime(p, (FIXED_MTIME, FIXED_MTIME))
    return sorted(
        str(p.relative_to(dst.parent))
        for p in dst.rglob("*")
        if p.is_file() and p.suffix.lower() not in NOT_LOGS and not p.name.startswith(".")
    )


def cli(argv: list[str], key: str, kind: str = "text") -> dict:
    return {"op": "cli", "argv": argv, "key": key, "kind": kind}


def parse_ops(inputs: Iterable[str]) -> list[dict]:
    ops = []
    for rel in inputs:
        base = f"parse/{rel}"
        ops += [
            cli(["parse", "-q", "--json", rel], f"{base}/json", "json"),
            cli(["parse", "-q", "--ndjson", rel], f"{base}/ndjson", "ndjson"),
            cli(["parse", "-q", "--format", "csv", rel], f"{base}/csv"),
        ]
    return ops


def model_config(model_path: str | None, dirs: list[Path]) -> str | None:
    """The config of a launch's model in samples/models (a directory) or corpus/models (NAME.json)."""
    name = (model_path or "").rstrip("/").rsplit("/", 1)[-1].lower()
    for d in dirs:
        if not name or not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.name.lower() in (name, name + ".json"):
                return str(p.relative_to(d.parent.parent))
    return None


def launch_ops(launches: list[dict], db: str, model_dirs: list[Path]) -> list[dict]:
    ops = []
    for la in launches:
        lid = la["launch_id"]
        for cmd in ("show", "explain", "check"):
            ops += [
                cli([cmd, lid, "--json", "--db", db], f"store/{cmd}/{lid}.json", "json"),
                cli([cmd, lid, "--db", db], f"store/{cmd}/{lid}.table"),
            ]
        config = model_config(la.get("model_path"), model_dirs)
        if config:
            ops += [
                cli(["plan", config, "--from", lid, "--json", "--db", db], f"store/plan-from/{lid}.json", "json"),
                cli(["plan", config, "--from", lid, "--db", db], f"store/plan-from/{lid}.table"),
            ]
    for a, b in itertools.pairwise(launches):
        pair = f"{a['launch_id']}..{b['launch_id']}"
        ops += [
            cli(["diff", a["launch_id"], b["launch_id"], "--json", "--db", db], f"store/diff/{pair}.json", "json"),
            cli(["diff", a["launch_id"], b["launch_id"], "--db", db], f"store/diff/{pair}.table"),
        ]
    return ops


def store_ops(db: str) -> list[dict]:
    ops = [
        cli(["launches", "--db", db], "store/launches.table"),
        cli(["launches", "--format", "csv", "--db", db], "store/launches.csv"),
        cli(["history", "--db", db], "store/history.table"),
        cli(["history", "--format", "csv", "--db", db], "store/history.csv"),
        cli(["metrics", "--db", db], "store/metrics"),
        cli(["export", "export", "-q", "--db", db], "store/export"),
        cli(["report", "--html", "report.html", "-q", "--db", db], "store/report"),
    ]
    ops += [
        cli(["history", "--metric", m, "--format", "json", "--db", db], f"store/history/{m}.json", "json")
        for m in HISTORY_METRICS
    ]
    return ops


def write_outputs(out: Path, n: Normalizer, ops: list[dict], results: list[dict], work: Path) -> None:
    for op, res in zip(ops, results):
        if op["op"] == "cli":
            write(out / f"{op['key']}.txt", render(n, op["argv"], res, op["kind"]))
        elif op["op"] == "describe":
            for name, lines in res.items():
                write(out / "describe" / f"{name}.txt", n.text("\n".join(lines) + "\n"))
        elif op["op"] == "parquet":
            write_export(out / "export", n, res)
    report = work / "report.html"
    if report.exists():
        write(out / "store" / "report.html", n.stdout(report.read_text(errors="replace"), "html"))


def write_export(out: Path, n: Normalizer, res: dict) -> None:
    write(out / "files.txt", n.text("\n".join(res["files"]) + "\n"))
    for name, text in res["markers"].items():
        write(out / f"{name}.txt", n.stdout(text, "json"))
    for table, t in res["tables"].items():
        write(out / f"{table}.schema.txt", "\n".join(t["schema"]) + "\n")
        rows = sorted(json.dumps(n.value(r), ensure_ascii=False) for r in t["rows"])
        write(out / f"{table}.rows.txt", "".join(r + "\n" for r in rows))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def snapshot(out: Path, install: Install, samples: Path, corpus: Path | None) -> dict:
    """Record every public output of ``install`` over ``samples`` (and ``corpus``) in ``out``."""
    if out.exists() and any(out.iterdir()):
        sys.exit(f"contract: {out} exists and is not empty")
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="lp-contract-") as tmp:
        work = Path(tmp)
        env = command_env(work)
        inputs = copy_inputs(samples, work / "samples")
        if corpus is not None:
            inputs += copy_inputs(corpus, work / "corpus")
        roots = ["samples"] + (["corpus"] if corpus is not None else [])
        db = "store.duckdb"
        first = [{"op": "info", "key": "info"}, cli(["ingest", *roots, "--db", db], "store/ingest")]
        reads = [cli(["launches", "--json", "--db", db], "store/launches.json", "json"), *parse_ops(inputs)]
        res1 = install.run([first, reads], work, env)
        launches = json.loads(res1[2]["stdout"] or "[]")
        models = [work / "samples" / "models", work / "corpus" / "models"]
        second = launch_ops(launches, db, models) + store_ops(db)
        files = [{"op": "describe", "db": db, "key": "describe"}, {"op": "parquet", "dir": "export", "key": "export"}]
        res2 = install.run([second, files], work, env)
        first += reads
        second += files
        t1 = time.time()
        info = res1[0]
        paths = {str(work): "<tmp>", os.path.realpath(work): "<tmp>", info["package"]: "<package>"}
        n = Normalizer(paths | {info["prefix"]: "<prefix>"}, (t0, t1), info["version"])
        write_outputs(out / "outputs", n, first[1:] + second, res1[1:] + res2, work)
    manifest = {
        "format": FORMAT,
        "logparse": install.exe,
        "python": install.python,
        "logparse_version": info["version"],
        "package": info["package"],
        "commit": git_commit(Path(info["package"])),
        "mode": "subprocess" if install.subprocess else "in-process",
        "fixed_addresses": bool(fixed_addresses()),
        "inputs": len(inputs),
        "launches": len(launches),
        "commands": len(first) + len(second) - 1,
        "taken_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.time() - t0, 1),
    }
    write(out / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    return manifest


def git_commit(package: Path) -> str | None:
    p = subprocess.run(["git", "-C", str(package), "log", "-1", "--format=%H %s"], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    dirty = subprocess.run(["git", "-C", str(package), "status", "--porcelain", "--", "."], capture_output=True)
    return p.stdout.strip() + (" (package modified)" if dirty.stdout.strip() else "")


# ----------------------------------------------------------------------------- comparing


def outputs(d: Path) -> dict[str, Path]:
    base = d / "outputs"
    if not base.is_dir():
        sys.exit(f"contract: {d} is not a snapshot (no outputs/)")
    return {str(p.relative_to(base)): p for p in sorted(base.rglob("*")) if p.is_file()}


def cut(line: str, width: int = 240) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def differences(a: Path, b: Path, max_lines: int = 40) -> Iterator[str]:
    """Blocks of text, one per difference between the snapshots ``a`` and ``b``."""
    oa, ob = outputs(a), outputs(b)
    for key in sorted(oa.keys() | ob.keys()):
        if key not in ob:
            yield f"only in {a}: {key}"
            continue
        if key not in oa:
            yield f"only in {b}: {key}"
            continue
        ta, tb = oa[key].read_text(), ob[key].read_text()
        if ta == tb:
            continue
        diff = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), f"a/{key}", f"b/{key}", n=1, lineterm=""))
        more = len(diff) - max_lines
        shown = [cut(line) for line in diff[:max_lines]]
        yield "\n".join(shown + ([f"... ({more} more diff lines)"] if more > 0 else []))


def compare(a: Path, b: Path, max_lines: int) -> int:
    found = 0
    for block in differences(a, b, max_lines):
        found += 1
        print(block + "\n")
    total = len(outputs(a).keys() | outputs(b).keys())
    for d in (a, b):
        m = json.loads((d / "manifest.json").read_text()) if (d / "manifest.json").exists() else {}
        print(f"{d}: logparse {m.get('logparse_version')} {m.get('commit') or ''} ({m.get('mode')})")
    print(f"{found} of {total} outputs differ" if found else f"no difference in {total} outputs")
    return 1 if found else 0


# ----------------------------------------------------------------------------- the command line


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["_run"]:
        runner_main(args[1], args[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    snap = sub.add_parser("snapshot", help="record every public output in DIR")
    snap.add_argument("dir", type=Path)
    cmp_ = sub.add_parser("compare", help="compare two snapshots (or one with the current install)")
    cmp_.add_argument("a", type=Path)
    cmp_.add_argument("b", type=Path, nargs="?", help="default: a fresh snapshot of --logparse")
    cmp_.add_argument("--lines", type=int, default=40, help="diff lines shown per output")
    for p in (snap, cmp_):
        p.add_argument("--logparse", help="the console script of the install (default: next to this Python)")
        p.add_argument("--samples", type=Path, default=ROOT / "samples")
        p.add_argument("--corpus", type=Path, default=SHARED / "corpus")
        p.add_argument("--no-corpus", action="store_true")
        p.add_argument("--subprocess", action="store_true", help="one logparse process per command")
        p.add_argument("--jobs", type=int, default=2, help="with --subprocess: processes at a time")
    ns = ap.parse_args(args)
    if ns.cmd == "compare" and ns.b is not None:
        return compare(ns.a, ns.b, ns.lines)
    install = Install(ns.logparse, ns.subprocess, ns.jobs)
    corpus = None if ns.no_corpus or not ns.corpus.is_dir() else ns.corpus
    if ns.cmd == "snapshot":
        m = snapshot(ns.dir, install, ns.samples, corpus)
        print(
            f"{ns.dir}: {m['commands']} commands over {m['inputs']} inputs, {m['launches']} launches, {m['seconds']} s"
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="lp-contract-b-") as tmp:
        snapshot(Path(tmp) / "snap", install, ns.samples, corpus)
        return compare(ns.a, Path(tmp) / "snap", ns.lines)


if __name__ == "__main__":
    sys.exit(main())
