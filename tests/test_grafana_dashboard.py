"""The Grafana dashboard of docs/grafana-dashboard.json asks only for what ``logparse metrics`` writes.

Every query of the dashboard (each panel target's ``expr``, each template variable's query) is read
as PromQL: the metric names it selects must be series ``metrics`` writes for a store of the samples,
and every label it matches, groups, joins or shows in a legend must be a label of those series.
Prometheus' own ``promtool check rules`` then parses every query (as a recording rule), so a query
that names the right series but is not PromQL fails too.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator

import pytest
from helpers import ROOT, SAMPLES, ci_tool, cli_process
from prometheus_client.parser import text_string_to_metric_families

DASHBOARD = ROOT / "docs" / "grafana-dashboard.json"
#: The dashboard's filters: one template variable per separate label.
VARIABLES = ("engine", "host", "model")
#: Grafana's own variables, replaced by a duration before a query is read as PromQL.
GRAFANA_RANGES = ("$__range", "$__rate_interval", "$__interval")
#: PromQL words that are neither metrics nor labels: keywords, and the functions and aggregations used.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless"}
FUNCTIONS = {"sum", "min", "max", "count", "avg", "topk", "increase", "rate", "time", "max_over_time"}
LABEL_LISTS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
MATCHER = re.compile(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)\s*\"")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
LABEL_VALUES = re.compile(r"^label_values\((.*),\s*([A-Za-z_]\w*)\s*\)$", re.S)


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def panels(items: list[dict]) -> Iterator[dict]:
    """Every panel, those folded in a row included."""
    for p in items:
        yield p
        yield from panels(p.get("panels", []))


def targets(dash: dict) -> list[dict]:
    return [t for p in panels(dash["panels"]) for t in p.get("targets", [])]


def variable_queries(dash: dict) -> dict[str, str]:
    """Each query variable's query (Grafana writes it as a string or as ``{"query": ...}``)."""
    out = {}
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            q = v["query"]
            out[v["name"]] = q["query"] if isinstance(q, dict) else q
    return out


def promql(query: str) -> tuple[str, set[str]]:
    """A dashboard query as plain PromQL, and the labels a ``label_values(..., LABEL)`` query lists."""
    for name in GRAFANA_RANGES:
        query = query.replace(name, "1h")
    found = LABEL_VALUES.match(query.strip())
    return (found.group(1), {found.group(2)}) if found else (query, set())


def names(expr: str) -> tuple[set[str], set[str]]:
    """(metric names, label names) an expression uses."""
    labels = set(MATCHER.findall(expr))
    bare = STRING.sub('""', expr)
    for group in LABEL_LISTS.findall(bare):
        labels |= {x.strip() for x in group.split(",") if x.strip()}
    bare = LABEL_LISTS.sub(" ", bare)
    bare = re.sub(r"\{[^}]*\}", " ", bare)  # the matchers, read above
    bare = re.sub(r"\[[^\]]*\]", " ", bare)  # range durations
    words = set(re.findall(r"(?<![\w.])[A-Za-z_:][\w:]*", bare))
    return words - KEYWORDS - FUNCTIONS, labels


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[set[str], set[str]]:
    """(series names, label names) ``logparse metrics`` writes for a store of every sample."""
    db = tmp_path_factory.mktemp("grafana") / "h.duckdb"
    res = cli_process("ingest", *sorted(SAMPLES.glob("*/*.log")), "--db", db, "-q")
    assert res.returncode == 0, res.stderr
    text = cli_process("metrics", "--db", db).stdout.decode()
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
    assert samples
    return {s.name for s in samples}, {k for s in samples for k in s.labels}


def all_queries(dash: dict) -> list[tuple[str, str]]:
    """(where, query) of every query of the dashboard."""
    out = [(f"target {t.get('refId')} of {t['expr'][:40]}", t["expr"]) for t in targets(dash)]
    out += [(f"variable {name}", q) for name, q in variable_queries(dash).items()]
    return out


def test_every_query_names_only_written_metrics_and_labels(written):
    metrics, labels = written
    dash = dashboard()
    used: set[str] = set()
    for where, query in all_queries(dash):
        expr, listed = promql(query)
        got_metrics, got_labels = names(expr)
        assert got_metrics, f"{where}: no metric"
        assert got_metrics <= metrics, f"{where}: {sorted(got_metrics - metrics)} is not written by metrics"
        assert got_labels | listed <= labels, f"{where}: {sorted((got_labels | listed) - labels)} is no label"
        used |= got_metrics
    for t in targets(dash):
        legend = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")))
        assert legend <= labels, t["expr"]
    assert used == metrics, f"not on the dashboard: {sorted(metrics - used)}"  # every figure has a panel


def test_the_reader_of_queries_catches_a_wrong_name(written):
    """The check can fail: an unknown metric and an unknown label are found."""
    metrics, labels = written
    got_metrics, got_labels = names('sum by (gpu) (logparse_kv_token{engine=~"$engine"}) / 2^30')
    assert got_metrics == {"logparse_kv_token"} and not got_metrics <= metrics
    assert got_labels == {"gpu", "engine"} and not got_labels <= labels


def test_every_value_panel_filters_by_the_variables():
    dash = dashboard()
    assert set(VARIABLES) <= set(variable_queries(dash))
    for t in targets(dash):
        for v in VARIABLES:
            assert f'{v}=~"${v}"' in t["expr"], (v, t["expr"])
    for p in panels(dash["panels"]):
        assert p["datasource"]["uid"] == "${datasource}" and p["title"] and p["description"], p["id"]


def test_panels_have_their_own_ids_and_places():
    """Grafana keys panels by id; two panels on one cell of the grid would hide each other."""
    ps = list(panels(dashboard()["panels"]))
    assert len({p["id"] for p in ps}) == len(ps)
    cells: set[tuple[int, int]] = set()
    for p in ps:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not mine & cells, p["title"]
        cells |= mine


def test_every_query_is_promql_to_promtool(tmp_path):
    tool = ci_tool("promtool", "prometheus", "parse the dashboard's queries")
    rules = [
        {"record": f"dashboard:query_{i}", "expr": promql(q)[0].replace("$", "")}
        for i, (_, q) in enumerate(all_queries(dashboard()))
    ]
    (tmp_path / "rules.yml").write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))
    res = subprocess.run([tool, "check", "rules", "rules.yml"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
