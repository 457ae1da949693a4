"""The README's Prometheus alert rules, proven with Prometheus' own ``promtool test rules``.

The rules are read from docs/unattended.md (the ``yaml`` block of the "Prometheus and Grafana" section),
the series are built from what ``logparse metrics`` really exposes (its metric and label names and a
deployment's figures, read back with prometheus_client's parser), then laid out in time: an upgrade
that keeps the KV pool, a real KV drop, a drop in the very restart that upgrades, a failed start.
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
    assert set(kv.labels) == {"deployment"} and ready.value == 1
    assert info.labels["engine_version"] == "0.5.10" and info.labels["host"] == "gpu-node-7"
    return {"kv": kv.value, "info": dict(info.labels)}


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


def upgraded_info(info: dict[str, str], deployment: str, upgrade_h: float) -> list[dict[str, str]]:
    """The info series of a deployment upgraded from 0.5.10 to 0.5.12 at ``upgrade_h``: the old one ends
    (a stale marker, as Prometheus writes when a series leaves the textfile) and the new one begins."""
    labels = {**info, "deployment": deployment}
    old: list[float | None] = [1.0] * at(upgrade_h) + [None]
    new: list[float | None] = [1.0] * (N - at(upgrade_h))
    return [
        series("logparse_launch_info", {**labels, "engine_version": "0.5.10"}, old),
        series("logparse_launch_info", {**labels, "engine_version": "0.5.12"}, new, at(upgrade_h)),
    ]


def kv_alert(info: dict[str, str], deployment: str, version: str, tokens: float) -> dict:
    labels = {k: v for k, v in info.items() if v and k != "unit"}
    labels.update(deployment=deployment, engine_version=version, severity="warning")
    return {
        "exp_labels": labels,
        "exp_annotations": {
            "summary": f"{info['model']} on {info['host']}: KV cache shrank to {tokens:.0f} tokens after a "
            f"restart ({info['engine']} {version})"
        },
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


def upgrade_cases(exposed) -> tuple[list[dict], list[dict]]:
    """(input series, alert tests): A upgrades at 2h keeping its pool and loses 10 % at 4h; B loses 5 %
    in the restart that upgrades it at 2h; C's start fails at 1h (and its unit is named anew at 1h30)."""
    kv, info = exposed["kv"], exposed["info"]
    a, b, c = info["deployment"], info["deployment"] + "-b", info["deployment"] + "-c"
    ready = [1.0] * N
    inputs = [
        series("logparse_kv_tokens", {"deployment": a}, steps(kv, kv * 0.9, 4)),
        *upgraded_info(info, a, 2),
        series("logparse_launch_ready", {"deployment": a}, ready),
        series("logparse_kv_tokens", {"deployment": b}, steps(kv, kv * 0.95, 2)),
        *upgraded_info(info, b, 2),
        series("logparse_launch_ready", {"deployment": b}, ready),
        series("logparse_kv_tokens", {"deployment": c}, steps(kv, kv, 0)),
        # C's unit is named differently from 1h30 on (a short journal rendering names the syslog
        # identifier): a new info series, the same release
        series("logparse_launch_info", {**info, "deployment": c, "unit": "sglang.service"}, [1.0] * at(1.5) + [None]),
        series("logparse_launch_info", {**info, "deployment": c, "unit": "python3"}, [1.0] * (N - at(1.5)), at(1.5)),
        series("logparse_launch_ready", {"deployment": c}, steps(1.0, 0.0, 1)),
    ]
    failed_labels = {k: v for k, v in info.items() if v and k != "unit"} | {"deployment": c}
    assert "unit" not in failed_labels  # the rules join host, model, engine and release, never the unit
    alerts = [
        # before the upgrades: nothing; just after: B lost 5 % in the restart that upgraded it
        {"eval_time": "1h", "alertname": "KVCacheShrank", "exp_alerts": []},
        {"eval_time": "2h5m", "alertname": "KVCacheShrank", "exp_alerts": [kv_alert(info, b, "0.5.12", kv * 0.95)]},
        # A upgraded with its pool unchanged (no alert), then lost 10 % at 4h
        {"eval_time": "3h55m", "alertname": "KVCacheShrank", "exp_alerts": [kv_alert(info, b, "0.5.12", kv * 0.95)]},
        {
            "eval_time": "4h5m",
            "alertname": "KVCacheShrank",
            "exp_alerts": [kv_alert(info, a, "0.5.12", kv * 0.9), kv_alert(info, b, "0.5.12", kv * 0.95)],
        },
        # C's start failed at 1h: pending for 10 minutes, then firing
        {"eval_time": "1h5m", "alertname": "StartFailed", "exp_alerts": []},
        {
            "eval_time": "1h15m",
            "alertname": "StartFailed",
            "exp_alerts": [
                {
                    "exp_labels": failed_labels,
                    "exp_annotations": {
                        "summary": f"{info['model']} on {info['host']}: the latest start did not become ready"
                    },
                }
            ],
        },
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
    a = exposed["info"]["deployment"]
    exprs = [
        {"expr": expr, "eval_time": "1h", "exp_samples": []},
        {
            "expr": expr,
            "eval_time": "3h",
            "exp_samples": [{"labels": f"{{deployment={json.dumps(d)}}}", "value": 2} for d in (a, a + "-b")],
        },
    ]
    tests = one_test(inputs, [])
    tests["tests"][0]["promql_expr_test"] = exprs
    res = run_promtool(tmp_path, readme_rules(), tests)
    assert res.returncode == 0, res.stdout + res.stderr


def test_promtool_fails_a_rule_that_does_not_fire(tmp_path, exposed):
    """The test can fail: the same expectations over a rule that never fires are refused by promtool."""
    inputs, alerts = upgrade_cases(exposed)
    silent = readme_rules().replace("< 0.99 *", "< 0.5 *")
    res = run_promtool(tmp_path, silent, one_test(inputs, alerts))
    assert res.returncode != 0 and "KVCacheShrank" in res.stdout + res.stderr


def test_the_old_rule_missed_a_drop_at_an_upgrade(tmp_path, exposed):
    """Why the release left the gauge: with ``engine_version`` on ``logparse_kv_tokens`` the upgrade starts
    a new series, whose 7-day maximum is its own first value, so a drop in that restart never fires."""
    kv, deployment = exposed["kv"], exposed["info"]["deployment"]
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
