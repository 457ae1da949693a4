"""The README's Prometheus alert rules, proven with Prometheus' own ``promtool test rules``.

The rules are read from docs/unattended.md (the ``yaml`` block of the "Prometheus and Grafana" section),
the series are built from what ``logparse metrics`` really exposes (its metric and label names and a
deployment's figures, read back with prometheus_client's parser), then laid out in time: an upgrade
that keeps the KV pool, a real KV drop, a drop in the very restart that upgrades, a failed start, a
deployment named at ingest that moves to another host and loses KV tokens there, and a model that
keeps failing to start on one host under two parallel sizes.
promtool comes with Debian's ``prometheus`` package (``.ci/run`` installs it); without it the test is
skipped, except in CI (``CI`` set), where it fails.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from helpers import ROOT, SAMPLES, ci_tool, cli_process
from prometheus_client.parser import text_string_to_metric_families

STEP_MIN = 5  # the scrape interval of the series, in minutes
HOURS = 6
OLD_RULE = """groups:
  - name: before
    rules:
      - alert: KVCacheShrank
        expr: logparse_kv_tokens < 0.99 * max_over_time(logparse_kv_tokens[7d])
"""


def promtool() -> str:
    return ci_tool("promtool", "prometheus", "run the alert rules' test")


def readme_rules() -> str:
    text = (ROOT / "docs" / "unattended.md").read_text(encoding="utf-8")
    section = text[text.index("**Prometheus and Grafana.**") :]
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found, "the README's alert rules"
    return found.group(1)


@pytest.fixture(scope="module")
def exposed(tmp_path_factory):
    """A real deployment's series as ``logparse metrics`` writes them (Kimi-K2.5 on gpu-node-7)."""
    db = tmp_path_factory.mktemp("rules") / "h.duckdb"
    res = cli_process("ingest", SAMPLES / "kimi-k25", "--db", db, "--host", "gpu-node-7", "-q")
    assert res.returncode == 0, res.stderr
    text = cli_process("metrics", "--db", db).stdout.decode()
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    (kv,) = fams["logparse_kv_tokens"].samples
    (ready,) = fams["logparse_launch_ready"].samples
    (info,) = fams["logparse_launch_info"].samples
    assert set(kv.labels) == {"deployment", "engine", "host", "model", "tp", "dp", "pp", "ep"} and ready.value == 1
    # the info series carries the value series' labels, then the unit and the release
    assert ready.labels == kv.labels and {k: info.labels[k] for k in kv.labels} == kv.labels
    assert info.labels["engine_version"] == "0.5.10" and kv.labels["host"] == "gpu-node-7"
    return {"kv": kv.value, "labels": dict(kv.labels), "info": dict(info.labels)}


N = HOURS * 60 // STEP_MIN  # steps of every series


def at(hours: float) -> int:
    """The step of a time."""
    return int(hours * 60) // STEP_MIN


def series(name: str, labels: dict[str, str], values: list[float | None], start: int = 0) -> dict[str, str]:
    """A promtool input series from step ``start`` (absent before: ``_``), one value per step (None: the
    series is gone from the scrape, a stale marker)."""
    sel = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
    shown = ["_"] * start + ["stale" if v is None else f"{v:g}" for v in values]
    return {"series": f"{name}{{{sel}}}", "values": " ".join(shown)}


def steps(before: float, after: float, change_h: float) -> list[float | None]:
    """A value that changes at ``change_h`` and stays."""
    return [before] * at(change_h) + [after] * (N - at(change_h))


def relabel(labels: dict[str, str], deployment: str, **parts: str) -> dict[str, str]:
    """Labels of another deployment (a replica named at ingest), with some parts changed."""
    return {**labels, "deployment": deployment, **parts}


def upgraded_info(info: dict[str, str], deployment: str, upgrade_h: float, **parts: str) -> list[dict[str, str]]:
    """The info series of a deployment upgraded from 0.5.10 to 0.5.12 at ``upgrade_h``: the old one ends
    (a stale marker, as Prometheus writes when a series leaves the textfile) and the new one begins."""
    labels = relabel(info, deployment, **parts)
    old: list[float | None] = [1.0] * at(upgrade_h) + [None]
    new: list[float | None] = [1.0] * (N - at(upgrade_h))
    return [
        series("logparse_launch_info", {**labels, "engine_version": "0.5.10"}, old),
        series("logparse_launch_info", {**labels, "engine_version": "0.5.12"}, new, at(upgrade_h)),
    ]


def kv_alert(labels: dict[str, str], version: str, tokens: float) -> dict:
    """An alert of KVCacheShrank: the value series' labels (never the unit), the release and the severity."""
    what = f"{labels['model']} on {labels['host']} ({labels['engine']} {version}, tp={labels['tp']})"
    return {
        "exp_labels": {**labels, "engine_version": version, "severity": "warning"},
        "exp_annotations": {"summary": f"{what}: KV cache shrank to {tokens:.0f} tokens after a restart"},
    }


def one_test(inputs: list[dict], alerts: list[dict]) -> dict:
    return {
        "evaluation_interval": "1m",
        "tests": [{"interval": f"{STEP_MIN}m", "input_series": inputs, "alert_rule_test": alerts}],
    }


def run_promtool(tmp_path, rules: str, tests: dict):
    (tmp_path / "rules.yml").write_text(rules, encoding="utf-8")
    # JSON is YAML: promtool reads the test file as it is
    (tmp_path / "test.yml").write_text(json.dumps({"rule_files": ["rules.yml"], **tests}, indent=1))
    return subprocess.run([promtool(), "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True)


def moved_cases(exposed) -> tuple[list[dict], list[dict]]:
    """D, named at ingest, moves from gpu-node-7 to gpu-node-8 at 3h (a new series, the same key) and
    has 10 % fewer KV tokens there; the 7-day maximum by deployment spans the move."""
    kv, labels, info = exposed["kv"], exposed["labels"], exposed["info"]
    d = labels["deployment"] + "-d"
    old: list[float | None] = [kv] * at(3) + [None]
    moved = relabel(labels, d, host="gpu-node-8")
    inputs = [
        series("logparse_kv_tokens", relabel(labels, d), old),
        series("logparse_kv_tokens", moved, [kv * 0.9] * (N - at(3)), at(3)),
        series("logparse_launch_info", relabel(info, d, engine_version="0.5.12"), old),
        series(
            "logparse_launch_info",
            relabel(info, d, host="gpu-node-8", engine_version="0.5.12"),
            [1.0] * (N - at(3)),
            at(3),
        ),
    ]
    return inputs, [kv_alert(moved, "0.5.12", kv * 0.9)]


def crash_cases(exposed) -> tuple[list[dict], list[dict]]:
    """E fails to start twice at tp=8 (1h, 1h10) and once more at tp=4 (1h20), on one host: three failed
    starts of one model in an hour, over two deployments."""
    labels = exposed["labels"]
    e8, e4 = relabel(labels, labels["deployment"] + "-e"), relabel(labels, labels["deployment"] + "-e4", tp="4")
    counts = [0.0] * at(1) + [1.0] * 2 + [2.0] * (N - at(1) - 2)
    inputs = [
        series("logparse_failed_launches_total", e8, counts),
        series("logparse_failed_launches_total", e4, steps(0.0, 1.0, 1 + 20 / 60)),
    ]
    group = {k: labels[k] for k in ("engine", "host", "model")}
    summary = f"{group['model']} on {group['host']} ({group['engine']}): 3 failed starts in the last hour"
    fired = [{"exp_labels": group, "exp_annotations": {"summary": summary}}]
    alerts = [
        {"eval_time": "1h15m", "alertname": "CrashLoop", "exp_alerts": []},
        {"eval_time": "1h25m", "alertname": "CrashLoop", "exp_alerts": fired},
        {"eval_time": "3h", "alertname": "CrashLoop", "exp_alerts": []},
    ]
    return inputs, alerts


def upgrade_cases(exposed) -> tuple[list[dict], list[dict]]:
    """(input series, alert tests): A upgrades at 2h keeping its pool and loses 10 % at 4h; B loses 5 %
    in the restart that upgrades it at 2h; C's start fails at 1h (and its unit is named anew at 1h30);
    D moves hosts (:func:`moved_cases`); E crash-loops (:func:`crash_cases`)."""
    kv, labels, info = exposed["kv"], exposed["labels"], exposed["info"]
    a, b, c = labels["deployment"], labels["deployment"] + "-b", labels["deployment"] + "-c"
    ready = [1.0] * N
    moved, d_alerts = moved_cases(exposed)
    crash, e_alerts = crash_cases(exposed)
    inputs = [
        series("logparse_kv_tokens", relabel(labels, a), steps(kv, kv * 0.9, 4)),
        *upgraded_info(info, a, 2),
        series("logparse_launch_ready", relabel(labels, a), ready),
        series("logparse_kv_tokens", relabel(labels, b), steps(kv, kv * 0.95, 2)),
        *upgraded_info(info, b, 2),
        series("logparse_launch_ready", relabel(labels, b), ready),
        series("logparse_kv_tokens", relabel(labels, c), steps(kv, kv, 0)),
        # C's unit is named differently from 1h30 on (a short journal rendering names the syslog
        # identifier): a new info series, the same release
        series("logparse_launch_info", relabel(info, c, unit="sglang.service"), [1.0] * at(1.5) + [None]),
        series("logparse_launch_info", relabel(info, c, unit="python3"), [1.0] * (N - at(1.5)), at(1.5)),
        series("logparse_launch_ready", relabel(labels, c), steps(1.0, 0.0, 1)),
        *moved,
        *crash,
    ]
    b_alert = kv_alert(relabel(labels, b), "0.5.12", kv * 0.95)
    what = f"{labels['model']} on {labels['host']} ({labels['engine']} {info['engine_version']})"
    alerts = [
        # before the upgrades: nothing; just after: B lost 5 % in the restart that upgraded it
        {"eval_time": "1h", "alertname": "KVCacheShrank", "exp_alerts": []},
        {"eval_time": "2h5m", "alertname": "KVCacheShrank", "exp_alerts": [b_alert]},
        # A upgraded with its pool unchanged (no alert); D moved at 3h with fewer tokens; A lost 10 % at 4h
        {"eval_time": "3h55m", "alertname": "KVCacheShrank", "exp_alerts": [b_alert, *d_alerts]},
        {
            "eval_time": "4h5m",
            "alertname": "KVCacheShrank",
            "exp_alerts": [kv_alert(relabel(labels, a), "0.5.12", kv * 0.9), b_alert, *d_alerts],
        },
        # C's start failed at 1h: pending for 10 minutes, then firing (its labels: never the unit)
        {"eval_time": "1h5m", "alertname": "StartFailed", "exp_alerts": []},
        {
            "eval_time": "1h15m",
            "alertname": "StartFailed",
            "exp_alerts": [
                {
                    "exp_labels": relabel(labels, c, engine_version=info["engine_version"]),
                    "exp_annotations": {"summary": f"{what}: the latest start did not become ready"},
                }
            ],
        },
        *e_alerts,
    ]
    return inputs, alerts


def test_readme_alert_rules_fire_across_an_upgrade(tmp_path, exposed):
    inputs, alerts = upgrade_cases(exposed)
    res = run_promtool(tmp_path, readme_rules(), one_test(inputs, alerts))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS" in res.stdout


def readme_query(comment: str) -> str:
    """The PromQL line under ``# comment`` in the README's promql block."""
    text = (ROOT / "docs" / "unattended.md").read_text(encoding="utf-8")
    block = re.search(r"```promql\n(.*?)```", text, re.S)
    assert block, "the README's PromQL examples"
    lines = block.group(1).splitlines()
    return lines[lines.index(f"# {comment}") + 1]


def test_readme_upgrade_query_finds_the_upgraded_deployments(tmp_path, exposed):
    inputs, _ = upgrade_cases(exposed)
    expr = readme_query("deployments upgraded in the last week (their release name changes only then)")
    labels = exposed["labels"]
    a = labels["deployment"]
    part = ",".join(f"{k}={json.dumps(labels[k])}" for k in ("engine", "host", "model"))
    # D moved hosts at 3h under one release: two info series, not an upgrade
    exprs = [
        {"expr": expr, "eval_time": "1h", "exp_samples": []},
        {
            "expr": expr,
            "eval_time": "3h30m",
            "exp_samples": [{"labels": f"{{deployment={json.dumps(d)},{part}}}", "value": 2} for d in (a, a + "-b")],
        },
    ]
    tests = one_test(inputs, [])
    tests["tests"][0]["promql_expr_test"] = exprs
    res = run_promtool(tmp_path, readme_rules(), tests)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize(
    ("alert", "before", "after"),
    [("KVCacheShrank", "0.99 * max by", "0.5 * max by"), ("CrashLoop", ">= 3", ">= 4")],
)
def test_promtool_fails_a_rule_that_does_not_fire(tmp_path, exposed, alert, before, after):
    """The test can fail: the same expectations over a rule that never fires are refused by promtool."""
    inputs, alerts = upgrade_cases(exposed)
    assert before in readme_rules()
    silent = readme_rules().replace(before, after)
    res = run_promtool(tmp_path, silent, one_test(inputs, alerts))
    assert res.returncode != 0 and alert in res.stdout + res.stderr


def test_the_old_rule_missed_a_drop_at_an_upgrade(tmp_path, exposed):
    """Why the release left the gauge: with ``engine_version`` on ``logparse_kv_tokens`` the upgrade starts
    a new series, whose 7-day maximum is its own first value, so a drop in that restart never fires."""
    kv, deployment = exposed["kv"], exposed["labels"]["deployment"]
    old: list[float | None] = [kv] * at(2) + [None]
    inputs = [
        series("logparse_kv_tokens", {"deployment": deployment, "engine_version": "0.5.10"}, old),
        series(
            "logparse_kv_tokens",
            {"deployment": deployment, "engine_version": "0.5.12"},
            [kv * 0.95] * (N - at(2)),
            at(2),
        ),
    ]
    alerts = [{"eval_time": t, "alertname": "KVCacheShrank", "exp_alerts": []} for t in ("2h5m", "4h")]
    res = run_promtool(tmp_path, OLD_RULE, one_test(inputs, alerts))
    assert res.returncode == 0, res.stdout + res.stderr
