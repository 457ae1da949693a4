#!/usr/bin/env python3
"""Generate realistic large SGLang logs for the benchmark.

A production journal is mostly runtime lines (``Decode batch``, ``Prefill batch``,
uvicorn access lines) with a few hundred startup lines per launch.  This writes one
month of such a log for a fleet host: launches of several SGLang eras and TP sizes
(taken from ``samples/``, with interleaved ranks), crash loops (a failing start
repeated), restarts across boots, and millions of runtime lines in between, rendered
as a plain log and as ``journalctl -o short-iso``, ``-o json`` and ``-o export``.

    python bench/generate.py --lines 5200000 --out bench/out/1g      # ~1 GB per format
    python bench/generate.py --mb 100 --out bench/out/100m
    python bench/generate.py --lines 10000000 --launches 10000 --days 10 --formats short-iso --out DIR

``--launches N`` sizes the runtime between starts for about N launches (crash-loop starts included)
instead of 150,000-600,000 lines each; ``--days K`` writes K copies of a log of one day (``--lines`` /
K lines over 10 hours of 2026-10-01), each copy on the next day: a large input in the time a K-th of
it takes to generate (the same pids each day: other launches, since their times differ).

Deterministic for the same arguments (seeded).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
STAMP_RE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d{3})?")
READY = "The server is fired up and ready to roll!"

# Startup templates: launches that end ready, and failing starts for crash loops.
READY_SAMPLES = [
    "sglang-0.5/llama-0.5.9-dataclass.log",
    "sglang-0.5/qwen-tp2-0.5.22-dict.log",
    "kimi-k25/launch-1-baseline.log",
    "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log",
    "sglang-0.4/dp-attention-0.4.9.log",
    "sglang-0.5/restarts-0.5.12.log",
]
CRASH_SAMPLES = ["sglang-0.5/crash-oom-0.5.6.log", "sglang-0.5/fail-weights-leave-no-memory-0.5.16.log"]


def startup_blocks(name: str) -> list[list[str]]:
    """The startup part of each launch in a sample (up to and including the ready line)."""
    path = SAMPLES / name
    if not path.exists():
        return []
    blocks, cur = [], []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if "server_args=" in line and any("server_args=" in ln for ln in cur):
            blocks.append(cur)
            cur = []
        cur.append(line)
    if cur:
        blocks.append(cur)
    out = []
    for b in blocks:
        if any(READY in ln for ln in b):
            b = b[: next(i for i, ln in enumerate(b) if READY in ln) + 1]
        out.append(b)
    return out


def restamp(line: str, when: datetime) -> str:
    m = STAMP_RE.match(line)
    if not m:
        return line
    return "[" + when.strftime("%Y-%m-%d %H:%M:%S") + (m.group(2) or "") + line[m.end() :]


class Entry:
    __slots__ = ("boot", "msg", "pid", "ts")

    def __init__(self, ts: datetime, msg: str, pid: int, boot: str):
        self.ts, self.msg, self.pid, self.boot = ts, msg, pid, boot


#: Lines of a launch's start, on average over the samples above (for ``--launches``).
STARTUP_LINES = 130
#: A crash loop (every 11th launch): five failing starts of ~75 lines.
CRASH_STARTS, CRASH_LINES = 5, 375


def runtime_range(total_lines: int, launches: int | None) -> tuple[int, int]:
    """Runtime lines after a start: a month's worth, or what gives about ``launches`` launches
    (10 ready starts and one crash loop of 5 in every 11 launches drawn)."""
    if not launches:
        return 150_000, 600_000
    per_cycle = total_lines * (10 + CRASH_STARTS) / launches
    mean = max(int((per_cycle - CRASH_LINES) / 10 - STARTUP_LINES), 1)
    return max(mean * 2 // 3, 1), mean * 4 // 3


def generate(
    total_lines: int, seed: int = 7, runtime_lines: tuple[int, int] = (150_000, 600_000), span_s: int = 2_592_000
):
    rnd = random.Random(seed)
    ready = [b for s in READY_SAMPLES for b in startup_blocks(s)]
    crash = [b for s in CRASH_SAMPLES for b in startup_blocks(s)]
    if not ready:
        sys.exit("bench/generate.py: samples/ not found; run from a checkout")
    t = datetime(2026, 10, 1, 0, 0, 0)
    step = timedelta(seconds=span_s / max(total_lines, 1))  # one month over the whole file
    pid, boot = 40000, f"{rnd.getrandbits(128):032x}"
    n = 0
    launches = 0
    while n < total_lines:
        launches += 1
        pid += rnd.randint(1, 400)
        if launches % 7 == 0:
            boot = f"{rnd.getrandbits(128):032x}"
        if launches % 11 == 0 and crash:  # a crash loop: the same failing start, five times
            block = rnd.choice(crash)
            for _ in range(5):
                for line in block:
                    yield Entry(t, restamp(line, t), pid, boot)
                    t += step
                    n += 1
                pid += 3
                t += timedelta(seconds=10)
            continue
        block = rnd.choice(ready)
        for line in block:
            yield Entry(t, restamp(line, t), pid, boot)
            t += step
            n += 1
        tp_tag = " TP0" if "TP1]" in "".join(block[:200]) else ""
        # Runtime: most of the file.
        runtime = rnd.randint(*runtime_lines)
        running, tokens = 0, 0
        for _ in range(min(runtime, max(total_lines - n, 0))):
            r = rnd.random()
            stamp = t.strftime("%Y-%m-%d %H:%M:%S")
            if r < 0.55:
                running = max(0, min(64, running + rnd.randint(-3, 3)))
                tokens = max(0, tokens + rnd.randint(-2000, 2600))
                usage = min(tokens / 400000, 0.99)
                msg = (
                    f"[{stamp}{tp_tag}] Decode batch, #running-req: {running}, #token: {tokens}, "
                    f"token usage: {usage:.2f}, cuda graph: True, gen throughput (token/s): "
                    f"{rnd.uniform(200, 4000):.2f}, #queue-req: {rnd.randint(0, 5)}"
                )
            elif r < 0.75:
                msg = (
                    f"[{stamp}{tp_tag}] Prefill batch, #new-seq: {rnd.randint(1, 4)}, #new-token: "
                    f"{rnd.randint(8, 8192)}, #cached-token: {rnd.randint(0, 4096)}, token usage: "
                    f"{min(tokens / 400000, 0.99):.2f}, #running-req: {running}, #queue-req: 0, "
                    f"#pending-token: 0, cuda graph: False, input throughput (token/s): {rnd.uniform(100, 9000):.2f}"
                )
            elif r < 0.99995:
                msg = (
                    f"[{stamp}] INFO:     10.0.{rnd.randint(0, 9)}.{rnd.randint(1, 250)}:{rnd.randint(30000, 65000)} - "
                    f'"POST /v1/chat/completions HTTP/1.1" 200 OK'
                )
            else:
                msg = (
                    f"[{stamp}{tp_tag}] KV cache pool is full. Retract requests. #retracted_reqs: 1, "
                    f"#new_tokens_gained: {rnd.randint(100, 5000)}, #new_token_ratio: 0.3000 -> 0.5000"
                )
            yield Entry(t, msg, pid, boot)
            t += step
            n += 1
        t += timedelta(seconds=30)


def write_all(entries, out: Path, formats: list[str], host: str = "gpu-node-7", unit: str = "sglang.service"):
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        files = {
            f: stack.enter_context(open(out / f"sglang.{f}.log", "w", encoding="utf-8", buffering=1 << 22))
            for f in formats
        }
        seq = 0
        mono0: dict[str, datetime] = {}
        buf: dict[str, list[str]] = {f: [] for f in formats}
        for e in entries:
            seq += 1
            us = int(e.ts.replace(tzinfo=UTC).timestamp() * 1_000_000)
            if "plain" in buf:
                buf["plain"].append(e.msg + "\n")
            if "short-iso" in buf:
                buf["short-iso"].append(f"{e.ts.strftime('%Y-%m-%dT%H:%M:%S')}+0000 {host} python3[{e.pid}]: {e.msg}\n")
            if "json" in buf or "export" in buf:
                mono = int((e.ts - mono0.setdefault(e.boot, e.ts)).total_seconds() * 1_000_000) + 5_000_000
                cursor = f"s=5eed0000000000000000000000000000;i={seq:x};b={e.boot};m={mono:x};t={us:x};x={seq * 2654435761 % (1 << 64):x}"
                if "json" in buf:
                    buf["json"].append(
                        json.dumps(
                            {
                                "__CURSOR": cursor,
                                "__REALTIME_TIMESTAMP": str(us),
                                "__MONOTONIC_TIMESTAMP": str(mono),
                                "_BOOT_ID": e.boot,
                                "_HOSTNAME": host,
                                "_SYSTEMD_UNIT": unit,
                                "_PID": str(e.pid),
                                "SYSLOG_IDENTIFIER": "python3",
                                "_TRANSPORT": "stdout",
                                "PRIORITY": "6",
                                "MESSAGE": e.msg,
                            },
                            ensure_ascii=False,
                        )
                        + "\n"
                    )
                if "export" in buf:
                    buf["export"].append(
                        f"__CURSOR={cursor}\n__REALTIME_TIMESTAMP={us}\n__MONOTONIC_TIMESTAMP={mono}\n_BOOT_ID={e.boot}\n"
                        f"_HOSTNAME={host}\n_SYSTEMD_UNIT={unit}\n_TRANSPORT=stdout\n_PID={e.pid}\n"
                        f"SYSLOG_IDENTIFIER=python3\nPRIORITY=6\nMESSAGE={e.msg}\n\n"
                    )
            if seq % 50_000 == 0:
                for f, lines in buf.items():
                    files[f].write("".join(lines))
                    lines.clear()
        for f, lines in buf.items():
            files[f].write("".join(lines))
    return seq


def copy_days(out: Path, formats: list[str], days: int) -> None:
    """Append ``days - 1`` copies of each rendering, the day of its times moved on by one each time
    (the log of one day, 2026-10-01, as ``--days`` generates it)."""
    for f in formats:
        path = out / f"sglang.{f}.log"
        day = path.read_bytes()
        if b"2026-10-02" in day:
            sys.exit("bench/generate.py: the day's log runs past its day; give more --lines per day")
        with open(path, "ab") as fh:
            for k in range(2, days + 1):
                fh.write(day.replace(b"2026-10-01", f"2026-10-{k:02d}".encode()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, help="number of log lines (journal entries)")
    ap.add_argument("--mb", type=float, help="approximate size of the short-iso rendering in MB")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--formats", default="plain,short-iso,json,export")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--launches", type=int, help="about this many launches (runtime sized to fit)")
    ap.add_argument("--days", type=int, default=1, help="copies of one day's log, a day apart (1 to 28)")
    args = ap.parse_args()
    lines = args.lines or int((args.mb or 100) * 1_000_000 / 200)  # ~200 bytes per short-iso line
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    days = min(max(args.days, 1), 28)
    per_day = lines // days
    launches = args.launches // days if args.launches else None
    # a day's lines over 10 hours (and the pauses between launches, 30 s each): it stays within its date
    span = 36_000 if days > 1 else 2_592_000
    n = write_all(generate(per_day, args.seed, runtime_range(per_day, launches), span), args.out, formats)
    if days > 1:
        copy_days(args.out, formats, days)
        n *= days
    sizes = ", ".join(f"{f}: {os.path.getsize(args.out / f'sglang.{f}.log') / 1e6:.0f} MB" for f in formats)
    print(f"wrote {n} lines to {args.out} ({sizes})")


if __name__ == "__main__":
    main()
