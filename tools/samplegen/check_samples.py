"""Re-derive the key figures of every sample log from its text (run: python tools/samplegen/check_samples.py).

Independent of make_samples.py: it only reads the .log files, the model dimensions below and
grammars/sglang/versions.json.  Checks, per launch:
  * the bytes: UTF-8, '\\n' line ends, no ANSI escapes, <= 300 lines;
  * server_args= has exactly the field set of the imitated release;
  * timestamps never go back;
  * Load weight end: mem usage == begin - end (0.01), per rank and per model runner;
  * every capture end: avail == begin avail - mem usage (0.01);
  * #tokens == SGLang's formula of the era (min over ranks, page rounding, EAGLE headroom where the
    era adds it), within what the 2-decimal rounding of the logged GB values allows;
  * KV size(s) == (#tokens + page) x cell / 2^30;
  * the summary line repeats #tokens, and available_gpu_mem == TP0's last avail mem;
  * HiCache host pool size, the failure messages' numbers;
  * 0.1.x (``Rank N:`` lines, no memory figure printed): every rank's summary agrees, its tokens come
    out of the 0.1.x formula for the premise in V01_PREMISE, max_prefill_num_token = max(context_len,
    tokens // 6), and each ``token usage`` = #token / tokens.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import operator
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples")
ROOT = os.path.dirname(SAMPLES)
GiB = 1 << 30

with open(os.path.join(ROOT, "grammars", "sglang", "versions.json")) as fh:
    VERS = json.load(fh)


def fieldset(version):
    fields = []
    for rel in VERS["versions"]:
        ch = VERS["changes"].get(rel, {})
        for f in ch.get("-", []):
            if f in fields:
                fields.remove(f)
        for f in ch.get("+", []):
            if f not in fields:
                fields.append(f)
        if rel == version:
            return set(fields)
    raise KeyError(version)


def mha(kv_heads_per_rank, head_dim, layers):
    return {"kind": "mha", "h": kv_heads_per_rank, "d": head_dim, "L": layers}


def mla(layers):
    return {"kind": "mla", "latent": 576, "L": layers}


# era: 'A' (<=0.5.6.post2: floor of a float), 'BC' (0.5.7+: int(rest*2^30)//cell)
META = {
    "sglang-0.1/llama-tp2-0.1.12.log": ("0.1.12", "v01", mha(20, 128, 40), None),
    "sglang-0.2/llama-tp2-0.2.5.log": ("0.2.5", "A", mha(20, 128, 40), None),
    "sglang-0.3/qwen-tp4-0.3.2.log": ("0.3.2", "A", mha(2, 128, 80), None),
    "sglang-0.3/llama-0.3.6-dp-minus-one.log": ("0.3.6", "A", mha(8, 128, 32), None),
    "sglang-0.4/deepseek-v3-tp8-eagle-0.4.7.log": ("0.4.7", "A", mla(61), mla(1)),
    "sglang-0.4/dp-attention-0.4.9.log": ("0.4.9", "A", mla(27), None),
    "sglang-0.5/llama-0.5.9-dataclass.log": ("0.5.9", "BC", mha(8, 128, 32), None),
    "sglang-0.5/qwen-tp2-0.5.22-dict.log": ("0.5.22", "BC", mha(4, 128, 64), None),
    "sglang-0.5/restarts-0.5.12.log": ("0.5.12", "BC", mha(8, 128, 48), None),
    "sglang-0.5/crash-oom-0.5.6.log": ("0.5.6", "A", mha(8, 128, 64), None),
    "sglang-0.5/crash-cuda-oom-0.5.18.log": ("0.5.18", "BC", mha(4, 128, 80), None),
    "sglang-0.5/fail-weights-leave-no-memory-0.5.16.log": ("0.5.16", "BC", None, None),
    "kimi-k25/launch-1-baseline.log": ("0.5.10.post1", "BC", mla(61), mha(1, 128, 1)),
    "kimi-k25/launch-2-hicache.log": ("0.5.10.post1", "BC", mla(61), mha(1, 128, 1)),
}

# 0.1.x prints no memory figure: the free memory (GiB, min over ranks) before and after the weights and
# the fraction the sample was written from.  0.1.12's default fraction for tp_size 2 is 0.85.
V01_PREMISE = {"sglang-0.1/llama-tp2-0.1.12.log": (78.12, 65.93, 0.85)}
RANK = re.compile(r"^Rank (?P<r>\d+): (?P<msg>.*)$")

PREFIX = re.compile(
    r"^\[(?P<ts>\d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?: (?P<tag>[^\]]+))?\] (?P<msg>.*)$"
)
GPUID = re.compile(r"^\[gpu_id=(?P<g>\d+)\] (?P<msg>.*)$")
F = r"(-?\d+\.\d\d)"

problems: list[str] = []
report: list[str] = []


def bad(where, msg):
    problems.append(f"{where}: {msg}")


def parse_server_args(payload):
    if payload.startswith("{"):
        node = ast.parse(payload, mode="eval").body
        return {ast.literal_eval(k): v for k, v in zip(node.keys, node.values)}
    node = ast.parse(payload, mode="eval").body
    return {kw.arg: kw.value for kw in node.keywords}


def lit(args, name, default=None):
    if name not in args:
        return default
    try:
        return ast.literal_eval(args[name])
    except ValueError:
        return default


def cell_bytes(model, nbytes):
    if model["kind"] == "mla":
        return model["latent"] * model["L"] * nbytes
    return model["h"] * 2 * model["d"] * model["L"] * nbytes


def split_launches(lines):
    launches, cur = [], []
    for ln in lines:
        if "server_args=" in ln and cur and any("server_args=" in x for x in cur):
            launches.append(cur)
            cur = []
        cur.append(ln)
    launches.append(cur)
    return launches


def check_bytes(rel, raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        bad(rel, "not UTF-8")
        return None
    if "\r\n" in text:
        bad(rel, "CRLF line ends")
    if "\x1b" in text:
        bad(rel, "ANSI escape")
    if not text.endswith("\n"):
        bad(rel, "no final newline")
    n = text.count("\n")
    if n > 300:
        bad(rel, f"{n} lines > 300")
    return text


def check_launch(rel, idx, lines):
    release, era, model, draft_model = META[rel]
    where = f"{rel}#{idx + 1}"
    # ---- server_args
    args = {}
    for ln in lines:
        m = re.search(r"server_args=(.*)$", ln)
        if m:
            args = parse_server_args(m.group(1))
            want = fieldset(release)
            got = set(args)
            if got != want:
                bad(
                    where,
                    f"server_args field set != {release}: missing {sorted(want - got)[:5]}, extra {sorted(got - want)[:5]}",
                )
            break
    else:
        bad(where, "no server_args")
    f = lit(args, "mem_fraction_static")
    page = lit(args, "page_size", 1) or 1
    kvd = lit(args, "kv_cache_dtype", "auto")
    nbytes = 1 if str(kvd).startswith("fp8") else 2
    # ---- per-rank events
    last_ts = None
    ranks: dict[str, list[tuple[str, str]]] = {}
    for ln in lines:
        m = PREFIX.match(ln)
        if m:
            ts = m.group("ts")
            if last_ts is not None and ts < last_ts:
                bad(where, f"timestamp goes back: {ts} after {last_ts}")
            last_ts = ts
            tag = m.group("tag") or ""
            if tag.startswith("INFO") or m.group("msg").startswith("INFO:"):
                continue
            ranks.setdefault(tag, []).append(m.group("msg"))
            continue
        m = GPUID.match(ln)
        if m:
            ranks.setdefault(f"gpu{m.group('g')}", []).append(m.group("msg"))
    sched = {k: v for k, v in ranks.items() if any("Load weight begin" in x for x in v)}
    if not sched:
        bad(where, "no scheduler lines")
        return
    rank0 = sorted(sched)[0]
    loads, kvs, summary, last_avail = {}, {}, None, {}
    for tag, msgs in sched.items():
        begin = None
        loads[tag] = []
        kvs[tag] = []
        cap_begin = None
        for msg in msgs:
            if m := re.match(r"Load weight begin\. avail mem=" + F + " GB", msg):
                begin = float(m.group(1))
            elif msg.startswith("Load weight end."):
                av = float(re.search(r"avail mem=" + F, msg).group(1))
                mu = re.search(r"mem usage=" + F, msg)
                if mu and abs(begin - av - float(mu.group(1))) > 0.0101:
                    bad(where, f"{tag}: load mem usage {mu.group(1)} != {begin} - {av}")
                loads[tag].append((begin, av))
                last_avail[tag] = av
            elif msg.startswith("KV Cache is allocated."):
                tok = int(re.search(r"#tokens: (\d+)", msg).group(1))
                sizes = [float(x) for x in re.findall(r"size: " + F + " GB", msg)]
                kvs[tag].append((tok, sizes))
            elif m := re.search(r"Memory pool end\. avail mem=" + F, msg):
                last_avail[tag] = float(m.group(1))
            elif re.match(r"Capture .*begin.*avail mem=", msg):
                cap_begin = float(re.search(r"avail mem=" + F, msg).group(1))
                if tag in last_avail and cap_begin > last_avail[tag] + 0.0101:
                    bad(where, f"{tag}: capture begins with more memory than before: {msg}")
            elif re.match(r"Capture .*end.*avail mem=", msg):
                av = float(re.search(r"avail mem=" + F, msg).group(1))
                mu = float(re.search(r"mem usage=" + F, msg).group(1))
                if cap_begin is not None and abs(cap_begin - mu - av) > 0.0101:
                    bad(where, f"{tag}: capture {cap_begin} - {mu} != {av}")
                last_avail[tag] = av
            elif msg.startswith("max_total_num_tokens="):
                summary = msg
    # ---- sizing formula
    if model is None:
        return loads, kvs, args, summary
    cell = cell_bytes(model, nbytes)
    if not all(loads.values()):
        bad(where, "missing Load weight end")
        return
    m_pre = min(v[0][0] for v in loads.values())
    m_post = min(v[0][1] for v in loads.values())
    rest = m_post - m_pre * (1 - f)
    t_formula = int(rest * GiB // cell) if era == "A" else int(rest * GiB) // cell
    t_formula = t_formula // page * page
    tol = math.ceil((0.005 + 0.005 * (1 - f)) * GiB / cell) + page
    infl = 0
    spec = lit(args, "speculative_algorithm")
    if spec and release in ("0.4.7",):  # EAGLE headroom era (0.4.3.post3 - 0.5.6.post2)
        mrr = lit(args, "max_running_requests")
        infl = (
            mrr * lit(args, "speculative_num_steps") * lit(args, "speculative_eagle_topk")
            + mrr * lit(args, "speculative_num_draft_tokens")
            + 100
        )
    if not any(kvs.values()):
        if summary is None:
            report.append(
                f"{where}: {release} M_pre={m_pre} M_post={m_post} f={f} rest={rest:.4f} -> "
                + ("no pool (failed)" if rest <= 0 else f"formula {t_formula} tokens, no pool line (failed later)")
            )
        if summary:
            tok = int(re.search(r"max_total_num_tokens=(\d+)", summary).group(1))
            if abs(tok - infl - t_formula) > tol:
                bad(where, f"summary tokens {tok} vs formula {t_formula}+{infl} (tol {tol})")
            report.append(
                f"{where}: {release} ranks={len(sched)} M_pre={m_pre} M_post={m_post} f={f} rest={rest:.4f} "
                f"T_formula={t_formula} logged={tok} (no KV line in this era; summary line)"
            )
        return
    logged = {kv[0][0] for kv in kvs.values() if kv}
    if len(logged) != 1:
        bad(where, f"ranks disagree on #tokens: {logged}")
    tok = logged.pop()
    if abs(tok - infl - t_formula) > tol:
        bad(where, f"#tokens {tok} vs formula {t_formula} + headroom {infl} (tol {tol})")
    for tag, kv in kvs.items():
        t0, sizes = kv[0]
        if model["kind"] == "mla":
            exp = [(t0 + page) * cell / GiB]
        else:
            exp = [(t0 + page) * model["h"] * model["d"] * model["L"] * nbytes / GiB] * 2
        if any(abs(a - b) > 0.0051 for a, b in zip(sizes, exp)):
            bad(where, f"{tag}: KV sizes {sizes} != {[round(x, 4) for x in exp]}")
        if draft_model is not None:
            if len(kv) < 2:
                bad(where, f"{tag}: no draft KV line")
            else:
                t1, s1 = kv[1]
                dcell = cell_bytes(draft_model, nbytes)
                if draft_model["kind"] == "mla":
                    dexp = [(t1 + page) * dcell / GiB]
                else:
                    dexp = [(t1 + page) * draft_model["h"] * draft_model["d"] * draft_model["L"] * nbytes / GiB] * 2
                if t1 != t0 or any(abs(a - b) > 0.0051 for a, b in zip(s1, dexp)):
                    bad(where, f"{tag}: draft KV {t1} {s1} vs {t0} {dexp}")
    if summary:
        st = int(re.search(r"max_total_num_tokens=(\d+)", summary).group(1))
        if st != tok:
            bad(where, f"summary tokens {st} != pool {tok}")
        m = re.search(r"available_gpu_mem=" + F, summary)
        if m and abs(float(m.group(1)) - last_avail[rank0]) > 0.0101:
            bad(where, f"available_gpu_mem {m.group(1)} != {rank0} last avail {last_avail[rank0]}")
    headroom = min(last_avail.values())
    kvgb = kvs[rank0][0][1]
    report.append(
        f"{where}: {release} ranks={len(sched)} M_pre={m_pre} M_post={m_post} f={f} rest={rest:.4f} "
        f"T_formula={t_formula}{' +' + str(infl) if infl else ''} logged={tok} KV={kvgb} "
        f"headroom(min last avail)={headroom}"
    )
    # HiCache host pool
    host = [
        x
        for x in functools.reduce(operator.iadd, sched.values(), [])
        if x.startswith("Allocating ") and "hierarchical KV cache" in x
    ]
    if host:
        ratio = lit(args, "hicache_ratio")
        host_tokens = (int(tok * ratio) // page + 1) * page
        gb = host_tokens * cell / 1e9
        for x in host:
            if f"Allocating {gb:.2f} GB" not in x:
                bad(where, f"host pool line {x!r} != {gb:.2f} GB")
        report.append(
            f"{where}: HiCache host pool {host_tokens} tokens = {gb:.2f} GB (10^9) per rank, {len(host)} lines"
        )
    return loads, kvs, args, summary


def check_v01(rel, lines):
    """0.1.x router era: ModelRunner.profile_max_num_token = int((avail - total x (1 - f)) // cell)."""
    release, _, model, _ = META[rel]
    m_pre, m_post, f = V01_PREMISE[rel]
    if any("server_args=" in ln for ln in lines):
        bad(rel, f"{release} prints no server_args=")
    ranks: dict[str, list[str]] = {}
    for ln in lines:
        m = RANK.match(ln)
        if m:
            ranks.setdefault(m.group("r"), []).append(m.group("msg"))
    if not ranks:
        bad(rel, "no 'Rank N:' lines")
        return
    cell = cell_bytes(model, 2)
    want = int((m_post * GiB - m_pre * GiB * (1 - f)) // cell)
    summaries = set()
    for r, msgs in ranks.items():
        if msgs[:2] != ["load weight begin.", "load weight end."]:
            bad(rel, f"rank {r}: load lines {msgs[:2]}")
        s = [x for x in msgs if x.startswith("max_total_num_token=")]
        if len(s) != 1:
            bad(rel, f"rank {r}: {len(s)} summary lines")
            continue
        summaries.add(s[0])
    if len(summaries) != 1:
        bad(rel, f"ranks disagree: {summaries}")
        return
    m = re.match(r"max_total_num_token=(\d+), max_prefill_num_token=(\d+), context_len=(\d+)", summaries.pop())
    tok, prefill, ctx = (int(x) for x in m.groups())
    if tok != want:
        bad(rel, f"max_total_num_token {tok} != formula {want}")
    if prefill != max(ctx, tok // 6):
        bad(rel, f"max_prefill_num_token {prefill} != max({ctx}, {tok} // 6)")
    for ln in lines:
        d = re.match(r"#running-req: \d+, #token: (\d+), token usage: ([\d.]+)", ln)
        if d and f"{int(d.group(1)) / tok:.2f}" != d.group(2):
            bad(rel, f"token usage in {ln!r} != #token / {tok}")
    report.append(
        f"{rel}: {release} ranks={len(ranks)} M_pre={m_pre} M_post={m_post} f={f} "
        f"rest={m_post - m_pre * (1 - f):.4f} T_formula={want} logged={tok} prefill={prefill}"
    )


def extra_checks(rel, text):
    if rel.endswith("crash-oom-0.5.6.log"):
        assert "Current value: self.server_args.mem_fraction_static=0.55" in text
    if rel.endswith("fail-weights-leave-no-memory-0.5.16.log"):
        pre = min(float(x) for x in re.findall(r"Load weight begin\. avail mem=" + F, text))
        post = min(float(x) for x in re.findall(r"Load weight end\..*?avail mem=" + F, text))
        m = re.search(r"above ([\d.]+) \(minimum viable = 1 - available/pre = ([\d.]+)\)", text)
        minimum = 1 - post / pre
        if abs(float(m.group(2)) - minimum) > 0.0002 or float(m.group(1)) < float(m.group(2)):
            bad(rel, f"minimum viable {m.group(2)} vs 1 - {post}/{pre} = {minimum:.4f}")
        report.append(f"{rel}: 1 - {post}/{pre} = {minimum:.4f} (logged {m.group(2)}, suggested {m.group(1)})")
    if rel.endswith("crash-cuda-oom-0.5.18.log"):
        assert "Exception: Capture cuda graph failed: CUDA out of memory." in text
        assert "torch.OutOfMemoryError: CUDA out of memory." in text


def main():
    for rel in sorted(META):
        path = os.path.join(SAMPLES, rel)
        with open(path, "rb") as fh:
            text = check_bytes(rel, fh.read())
        if text is None:
            continue
        lines = text.split("\n")[:-1]
        if META[rel][1] == "v01":
            check_v01(rel, lines)
            continue
        for i, launch in enumerate(split_launches(lines)):
            check_launch(rel, i, launch)
        extra_checks(rel, text)
    print("\n".join(report))
    if problems:
        print("\nPROBLEMS:\n" + "\n".join(problems))
        sys.exit(1)
    print(f"\nall {len(META)} samples consistent")


if __name__ == "__main__":
    main()
