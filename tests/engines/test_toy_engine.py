"""A toy third engine, written here and registered from here, goes through every command.

The proof that the engine interface is real: nothing outside this file knows the toy engine, yet
its log is parsed (every line accounted for), ingested into a real store, listed, explained and
diffed, beside SGLang's and vLLM's launches.  The engine implements only what
:class:`logparse.engines.base.Engine` asks of an engine with no reports of its own: its classifier
(its own prefix, three kinds of line), an assembly, and a trivial budget.

The toy format (ours)::

    toy| 2026-01-05 10:00:00 start model=/models/toy-7b tp=2 fraction=0.80
    toy| 2026-01-05 10:00:01 rank=0 weights=12.50 free=60.00
    toy| 2026-01-05 10:00:02 rank=0 kv_tokens=40000 kv=30.00
    toy| 2026-01-05 10:00:03 ready
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import SAMPLES, cli

from logparse import engines
from logparse.budget.model import Budget, RankBudget
from logparse.engines.base import Claim, Engine
from logparse.grammar.events import Event
from logparse.launches.identity import launch_id
from logparse.launches.model import Launch, RankMemory

_LINE = re.compile(r"toy\| (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (?P<msg>.*)\Z")
_START = re.compile(r"start model=(?P<model>\S+) tp=(?P<tp>\d+) fraction=(?P<fraction>[\d.]+)\Z")
_WEIGHTS = re.compile(r"rank=(?P<rank>\d+) weights=(?P<weights>[\d.]+) free=(?P<free>[\d.]+)\Z")
_KV = re.compile(r"rank=(?P<rank>\d+) kv_tokens=(?P<tokens>\d+) kv=(?P<kv>[\d.]+)\Z")


def _read(msg: str) -> tuple[str, dict[str, Any]] | None:
    for kind, pattern in (("toy_start", _START), ("toy_weights", _WEIGHTS), ("toy_kv", _KV)):
        m = pattern.match(msg)
        if m is not None:
            return kind, {
                k: (float(v) if "." in v else int(v)) if v[:1].isdigit() else v for k, v in m.groupdict().items()
            }
    return ("toy_ready", {}) if msg == "ready" else None


class ToyClassifier:
    engine = "toy"
    continuing = False

    def reset(self) -> None:
        pass

    def line_start(self, text: str, exact: bool) -> int | None:
        at = text.find("toy| ")
        return at if at > 0 else None

    def layered(self, text: str) -> Claim | None:
        m = _LINE.match(text)
        if m is None:
            return None
        read = _read(m.group("msg"))
        if read is None:
            return Claim("unrecognized", "near miss (the toy engine prints no such line)", text=text, engine="toy")
        kind, fields = read
        return Claim("parsed", kind, ({"stamp": m.group("ts")}, None, (kind, fields, None)), text, engine="toy")

    def has_prefix(self, text: str) -> None:
        return None

    def starts_line(self, text: str) -> bool:
        return text.startswith("toy| ")

    def continuation(self, text: str) -> None:
        return None

    prefixed = tracked = untracked = lambda self, text, m: None
    bare = contest = message = exception = lambda self, text: None

    def anchored(self, text: str) -> bool:
        return False


class ToyAssembler:
    def __init__(self, source: str, stream: tuple) -> None:
        self.source, self.stream, self.events, self.order = source, stream, [], 0

    def starts_new_launch(self, ev: Event) -> bool:
        return ev.kind == "toy_start" and bool(self.events)

    def add(self, ev: Event) -> None:
        ev.seq = len(self.events)
        self.events.append(ev)

    def is_launch(self) -> bool:
        return any(e.kind == "toy_start" for e in self.events)

    def only_generic(self) -> bool:
        return False

    def continue_wrapped(self, piece: str) -> None:
        pass

    def merge_runtime(self, agg: dict[str, Any]) -> None:
        pass

    def finish(self, version: str | None = None, ordinal: int | None = None) -> Launch:
        launch = Launch(engine="toy", source=self.source, source_ordinal=ordinal, engine_version="1.0")
        launch.engine_version_range, launch.version_range = "1.0", ("1.0", "1.0")
        launch.host, launch.unit, launch.boot, launch.pid = self.stream
        launch.events = self.events
        launch.first_line, launch.last_line = self.events[0].line_no, self.events[-1].line_no
        launch.started_at = self.events[0].ts
        ranks: dict[int, RankMemory] = {}
        for ev in self.events:
            f = ev.fields
            if ev.kind == "toy_start":
                launch.model_path, launch.tp_size = f["model"], f["tp"]
            elif ev.kind == "toy_weights":
                r = ranks.setdefault(f["rank"], RankMemory(tp_rank=f["rank"]))
                r.weights_gb, r.avail_before_load_gb = f["weights"], f["free"]
            elif ev.kind == "toy_kv":
                r = ranks.setdefault(f["rank"], RankMemory(tp_rank=f["rank"]))
                r.kv_tokens, r.kv_size_gb = f["tokens"], f["kv"]
            elif ev.kind == "toy_ready":
                launch.outcome, launch.ready_at = "ready", ev.ts
        launch.ranks = list(ranks.values())
        launch.launch_id = launch_id(launch)
        return launch


class ToyAssembly:
    def new(self, source: str, stream: tuple) -> ToyAssembler:
        return ToyAssembler(source, stream)

    def opens(self, ev: Event) -> bool:
        return ev.kind == "toy_start"

    def holds(self, ev: Event) -> bool:
        return True

    def marks_stream(self, ev: Event) -> bool:
        return True

    def adopts_head(self, ev: Event) -> bool:
        return False

    def owns_generic(self, prefix: dict[str, Any]) -> bool:
        return False

    def place(self, ev, prefix, gpu, own, outer, mtime) -> None:
        ev.ts = prefix.get("stamp", "").replace(" ", "T") or None

    def date(self, ev: Event, outer: str | None) -> None:
        ev.ts = ev.ts or outer

    def is_batch(self, ev: Event) -> bool:
        return False


class Toy(Engine):
    """The toy engine: KV pool = tokens it prints; headroom = free − weights − KV."""

    name = "toy"
    label = "Toy"
    claim_order = 5

    def classifier(self) -> ToyClassifier:
        return ToyClassifier()

    def assembly(self) -> ToyAssembly:
        return ToyAssembly()

    def owns_events(self, events: list[Event]) -> bool:
        return any(e.kind.startswith("toy_") for e in events)

    def budget(self, launch: Launch) -> Budget:
        ranks = [
            RankBudget(r.label(), None, None, r.tp_rank, None, r.avail_before_load_gb, r.weights_gb, None, r.kv_tokens,
                       r.kv_size_gb, None, None, None, None, None, None, None, _headroom(r), None)
            for r in launch.ranks
        ]  # fmt: skip
        b = Budget(launch.launch_id, launch.outcome, "gpu", launch.outcome == "ready", ranks)
        binding = min(ranks, key=lambda r: r.headroom_gb if r.headroom_gb is not None else 1e9, default=None)
        if binding is not None:
            b.binding_rank, b.headroom_gb, b.weights_gb = binding.rank, binding.headroom_gb, binding.weights_gb
            b.kv_tokens, b.kv_pool_gb = binding.kv_tokens, binding.kv_pool_gb
        b.formula = "kv = what the toy engine prints"
        return b


def _headroom(r: RankMemory) -> float | None:
    if None in (r.avail_before_load_gb, r.weights_gb, r.kv_size_gb):
        return None
    return round(r.avail_before_load_gb - r.weights_gb - r.kv_size_gb, 2)  # type: ignore[operator]


def _log(tokens: int, kv: float, day: int = 5) -> str:
    return (
        f"toy| 2026-01-0{day} 10:00:00 start model=/models/toy-7b tp=1 fraction=0.80\n"
        f"toy| 2026-01-0{day} 10:00:01 rank=0 weights=12.50 free=60.00\n"
        "a line of something else\n"
        f"toy| 2026-01-0{day} 10:00:02 rank=0 kv_tokens={tokens} kv={kv:.2f}\n"
        f"toy| 2026-01-0{day} 10:00:03 ready\n"
    )


@pytest.fixture
def toy(tmp_path: Path):
    engines.register(Toy())
    a = tmp_path / "toy-a.log"
    b = tmp_path / "toy-b.log"
    a.write_text(_log(40_000, 30.0, 5))
    b.write_text(_log(36_000, 27.0, 6))
    try:
        yield a, b
    finally:
        engines.unregister("toy")


def test_the_toy_engine_is_registered_beside_the_others(toy):
    assert engines.names()[0] == "toy" and {"sglang", "vllm"} <= set(engines.names())
    assert engines.get("toy").label == "Toy"


def test_parse_reads_the_toy_log_and_accounts_for_every_line(toy):
    a, _ = toy
    res = cli("parse", a, "--json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["lines"] == {"total": 5, "parsed": 4, "noise": 0, "unrecognized": 1, "other_units": 0}
    (launch,) = doc["launches"]
    assert launch["engine"] == "toy" and launch["outcome"] == "ready"
    assert launch["model_path"] == "/models/toy-7b" and launch["tp_size"] == 1


def test_ingest_launches_explain_and_diff_of_toy_launches(toy, tmp_path):
    a, b = toy
    db = tmp_path / "h.duckdb"
    res = cli("ingest", a, b, SAMPLES / "vllm", db=db)
    assert res.code == 0, res.err
    rows = json.loads(cli("launches", "--format", "json", db=db).out)
    toys = [r for r in rows if r["engine"] == "toy"]
    assert [r["kv_tokens"] for r in toys] == [40_000, 36_000]
    assert any(r["engine"] == "vllm" for r in rows)
    table = cli("launches", db=db)
    assert table.code == 0 and "Toy 1.0" in table.out
    ids = [r["launch_id"] for r in toys]
    exp = cli("explain", ids[0], "--json", db=db)
    assert exp.code == 0, exp.err
    doc = json.loads(exp.out)
    assert doc["kv_tokens"] == 40_000 and doc["headroom_gb"] == 17.5
    text = cli("explain", ids[0], db=db)
    assert text.code == 0 and "40,000" in text.out and "Toy 1.0" in text.out, text.err
    assert not re.search("SGLang|vLLM|mem_fraction_static|gpu_memory_utilization", text.out), text.out
    diff = cli("diff", ids[0], ids[1], "--json", db=db)
    assert diff.code == 0, diff.err
    d = json.loads(diff.out)
    assert d["budget"]["kv_tokens"] == {"a": 40_000, "b": 36_000, "delta": -4_000, "pct": -10.0}
    assert d["budget"]["headroom_gb"]["b"] == 20.5 and d["version"]["engine"] == "toy"
    shown = cli("diff", ids[0], ids[1], db=db)
    assert shown.code == 0 and "40,000 -> 36,000" in shown.out, shown.err
    assert not re.search("SGLang|vLLM|mem_fraction_static|gpu_memory_utilization", shown.out), shown.out
