#!/usr/bin/env python3
"""Build grammars/sglang/versions.json: every SGLang release in order, with its ServerArgs field set.

Two sources of facts:

* 0.2.0-0.5.23: the SGLang log catalogue's Appendix A lists, per PyPI release, the
  ServerArgs fields added and removed; we replay those changes into the full field set
  of every release.
* 0.1.x (before the catalogue): read from each release's own wheel with ``ast``
  (``tools/sglang_release_src.py``: the annotated fields of the ``ServerArgs`` dataclass).
  Give the folder of downloaded wheels (outside the repository) with ``--wheels``; releases
  the catalogue already covers are not read from it.

``logparse.engines.sglang.versions`` uses the result to order releases and to date a
``server_args=`` line.  Run it again when the catalogue grows::

    python tools/build_version_data.py ../shared/sglang-log-catalogue.md --wheels /work/scratch/sglang-releases/dl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sglang_release_src import read_server_args, release_key, wheels


def from_catalogue(path: str) -> tuple[list[str], dict[str, list[str]], dict[str, int]]:
    src = Path(path).read_text()
    appendix = src.split("## Appendix A", 1)[1]
    entry = re.compile(r"^- \*\*([0-9a-z.]+)\*\* \((\d+) fields\): (.*)$", re.M)
    versions, fields_by_version, counts = [], {}, {}
    current: list[str] = []
    for m in entry.finditer(appendix):
        ver, count, body = m.group(1), int(m.group(2)), m.group(3)
        if body.startswith("initial set"):
            current = re.findall(r"`([A-Za-z_0-9]+)`", body)
        elif not body.startswith("no change"):
            added = re.findall(r"\+`([A-Za-z_0-9]+)`", body)
            removed = set(re.findall(r"[−-]`([A-Za-z_0-9]+)`", body))
            current = [f for f in current if f not in removed]
            for f in added:
                if f not in current:
                    current.append(f)
        versions.append(ver)
        fields_by_version[ver] = sorted(current)
        counts[ver] = count
    return versions, fields_by_version, counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("catalogue", nargs="?", default="../shared/sglang-log-catalogue.md")
    ap.add_argument("--wheels", help="folder of sglang wheels: releases older than the catalogue are read from it")
    args = ap.parse_args()
    versions, fields_by_version, counts = from_catalogue(args.catalogue)
    mismatch = {v: (counts[v], len(fields_by_version[v])) for v in versions if counts[v] != len(fields_by_version[v])}
    read = []
    if args.wheels:
        first = release_key(versions[0])
        older = {v: p for v, p in wheels(args.wheels).items() if release_key(v) < first}
        for v, p in older.items():
            names = read_server_args(p)["fields"]
            fields_by_version[v] = sorted(set(names))
            counts[v] = len(names)
            read.append(v)
        versions = read + versions
    # Stored as per-release changes (small); logparse.engines.sglang.versions replays them at load time.
    changes, prev = {}, set()
    for v in versions:
        cur = set(fields_by_version[v])
        changes[v] = {"+": sorted(cur - prev), "-": sorted(prev - cur)}
        prev = cur
    out = {
        "comment": "ServerArgs field changes per SGLang PyPI release (in release order): 0.2.0 on from the "
        "catalogue's Appendix A, 0.1.x from each release's own server_args.py (ast). "
        "'declared_count' is the number of fields printed.",
        "versions": versions,
        "declared_count": counts,
        "changes": changes,
    }
    dest = Path(__file__).resolve().parent.parent / "grammars" / "sglang" / "versions.json"
    dest.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{len(versions)} releases written to {dest} ({len(read)} read from wheels); count mismatches: {mismatch}")


if __name__ == "__main__":
    main()
