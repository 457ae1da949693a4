"""Build grammars/vllm/line_numbers.json from the vLLM log catalogue's Appendix A.

Run: python tools/build_vllm_line_numbers.py [../shared/vllm-log-catalogue.md]

Appendix A lists, per key line, the ``[file.py:N]`` each release prints (``N@A → B, C``: line N in
releases A to B and in C).  The JSON maps a line family to ``{"file.py:N": [[first, last], ...]}``
(release ranges over the catalogue's release list); :mod:`logparse.engines.vllm.variants` dates a
launch from the locations its lines show.
"""

from __future__ import annotations

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "grammars", "vllm", "line_numbers.json")

#: Appendix A's headings -> the family names the code uses.
FAMILIES = {
    "version banner (logo / plain)": "version_banner",
    "vLLM API server version": "api_server_version",
    "non-default args": "non_default_args",
    "Initializing ... engine (v…)": "engine_init",
    "Loading model weights took / Model loading took": "weights",
    "Loading weights took": "load_time",
    "V0 `Memory profiling takes …` (`logger.info(msg)` call)": "v0_profile",
    "# GPU/cuda blocks": "blocks",
    "Available KV cache memory": "kv_memory",
    "GPU KV cache size": "kv_tokens",
    "Maximum concurrency": "concurrency",
    "Graph capturing finished": "graph",
    "init engine took": "init_engine",
}
_ITEM = re.compile(r"(\d+)@(.+)")


def parse(text: str) -> dict[str, dict[str, list[list[str]]]]:
    body = text.split("## Appendix A", 1)[1].split("## Appendix B", 1)[0]
    out: dict[str, dict[str, list[list[str]]]] = {}
    family = None
    for line in body.splitlines():
        head = re.fullmatch(r"\*\*(.+)\*\*", line.strip())
        if head:
            family = FAMILIES.get(head.group(1))
            continue
        m = re.match(r"\* `([\w.]+\.py)`: (.+)$", line.strip())
        if family is None or m is None:
            continue
        fname, items = m.groups()
        for item in items.split("; "):
            im = _ITEM.fullmatch(item.strip())
            if im is None:
                raise ValueError(f"unreadable item {item!r} in {line!r}")
            loc = f"{fname}:{im.group(1)}"
            for rng in im.group(2).split(", "):
                first, _, last = rng.partition(" → ")
                out.setdefault(family, {}).setdefault(loc, []).append([first.strip(), (last or first).strip()])
    return out


def main() -> int:
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(ROOT), "shared", "vllm-log-catalogue.md")
    with open(src, encoding="utf-8") as fh:
        data = parse(fh.read())
    missing = set(FAMILIES.values()) - set(data)
    if missing:
        print(f"families not found: {sorted(missing)}", file=sys.stderr)
        return 1
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    print(f"wrote {OUT}: {sum(len(v) for v in data.values())} locations in {len(data)} families")
    return 0


if __name__ == "__main__":
    sys.exit(main())
