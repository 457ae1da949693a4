#!/usr/bin/env python3
"""Build grammars/sglang/server_args_defaults.json: the ServerArgs default of every field,
per SGLang release, read from each release's own source with ``ast``.

Usage::

    python tools/build_server_args_defaults.py WHEEL_DIR

``WHEEL_DIR`` holds the sglang wheels, one per release, downloaded outside the repository::

    mkdir -p /work/scratch/sglang-releases/dl
    for v in $(pip index versions sglang | sed -n 's/^Available versions: //p' | tr -d ,) 0.5.0rc2; do
        pip download -q --no-deps --only-binary=:all: "sglang==$v" -d /work/scratch/sglang-releases/dl
    done

Nothing is installed or imported: each wheel is opened as a zip and ``sglang/srt/server_args.py``
(plus ``sglang/srt/arg_groups/`` from 0.5.20, where ``ServerArgs`` is assembled from namespace
classes) is parsed with ``ast`` (see ``tools/sglang_release_src.py`` for what counts as a
literal default and what is ``derived``).  Releases covered: every one in the wheel folder
(0.1.3-0.5.23 on PyPI, with 0.5.0rc2).

Output (compact)::

    {"releases": [oldest ... newest],
     "unreadable": {release: why},
     "fields": {name: [[first, last, "v", value] | [first, last, "d"] | [first, last, "r"], ...]}}

One run per stretch of consecutive releases in which the field exists with the same default:
``"v"`` a literal default (tuples and sets as lists), ``"d"`` derived at runtime, ``"r"``
required (no default).  A release outside every run of a field does not have that field.
``logparse.engines.sglang.versions.default_of`` reads it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sglang_release_src import Unreadable, json_value, read_server_args, wheels

DEST = Path(__file__).resolve().parent.parent / "grammars" / "sglang" / "server_args_defaults.json"


def build(wheel_dir: str) -> dict:
    found = wheels(wheel_dir)
    if not found:
        raise SystemExit(f"no sglang wheels in {wheel_dir}")
    releases = list(found)
    unreadable: dict[str, str] = {}
    per_release: dict[str, dict] = {}
    for v, path in found.items():
        try:
            per_release[v] = read_server_args(path)["defaults"]
        except (Unreadable, OSError, ValueError) as exc:
            unreadable[v] = str(exc)
    names: list[str] = []
    for v in releases:
        for name in per_release.get(v, {}):
            if name not in names:
                names.append(name)
    fields: dict[str, list] = {}
    for name in sorted(names):
        runs: list[list] = []
        for v in releases:
            if v in unreadable:
                continue  # a gap we know nothing about: do not bridge it
            d = per_release[v].get(name)
            if d is None:
                continue
            kind, value = d
            code = {"value": "v", "derived": "d", "required": "r"}[kind]
            entry = [code, json_value(value)] if code == "v" else [code]
            prev = runs[-1] if runs else None
            if prev is not None and prev[2:] == entry and _next(releases, unreadable, prev[1]) == v:
                prev[1] = v
            else:
                runs.append([v, v, *entry])
        fields[name] = runs
    return {
        "comment": "ServerArgs default of each field per SGLang PyPI release, from each release's "
        "server_args.py (and arg_groups/ from 0.5.20) read with ast; built by "
        "tools/build_server_args_defaults.py. Runs: [first, last, 'v', value] literal, "
        "[first, last, 'd'] derived at runtime, [first, last, 'r'] required.",
        "releases": releases,
        "unreadable": unreadable,
        "fields": fields,
    }


def _next(releases: list[str], unreadable: dict[str, str], v: str) -> str | None:
    """The release read after ``v`` (an unreadable release in between breaks a run)."""
    i = releases.index(v) + 1
    return releases[i] if i < len(releases) else None


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    data = build(sys.argv[1])
    DEST.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n")
    runs = sum(len(r) for r in data["fields"].values())
    print(
        f"{len(data['releases'])} releases ({len(data['unreadable'])} unreadable: {data['unreadable'] or 'none'}), "
        f"{len(data['fields'])} fields, {runs} runs -> {DEST} ({DEST.stat().st_size} bytes)"
    )


if __name__ == "__main__":
    main()
