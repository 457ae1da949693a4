#!/usr/bin/env python3
"""Build logparse/data/sglang_versions.json from the SGLang log catalogue.

The catalogue's Appendix A lists, per PyPI release, the ServerArgs fields added and
removed.  We replay those changes into the full field set of every release (facts,
not prose), which is what `logparse.grammar.versions` uses to date a `server_args=` line.
Run it again when the catalogue grows:  python tools/build_version_data.py ../shared/sglang-log-catalogue.md
"""

import json
import re
import sys
from pathlib import Path

src = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/sglang-log-catalogue.md").read_text()
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
mismatch = {v: (counts[v], len(fields_by_version[v])) for v in versions if counts[v] != len(fields_by_version[v])}
# Stored as per-release changes (small); logparse.grammar.versions replays them at load time.
changes, prev = {}, set()
for v in versions:
    cur = set(fields_by_version[v])
    changes[v] = {"+": sorted(cur - prev), "-": sorted(prev - cur)}
    prev = cur
out = {
    "comment": "ServerArgs field changes per SGLang PyPI release (in release order), from the catalogue's "
    "Appendix A. 'declared_count' is the catalogue's printed-field count.",
    "versions": versions,
    "declared_count": counts,
    "changes": changes,
}
dest = Path(__file__).resolve().parent.parent / "logparse" / "data" / "sglang_versions.json"
dest.write_text(json.dumps(out, separators=(",", ":")) + "\n")
print(f"{len(versions)} releases written to {dest}; count mismatches: {mismatch}")
