"""``logparse metrics`` (Prometheus text format, read back with prometheus_client's parser) and
``logparse systemd-units``.

The metric values are compared with the store's own figures (``launch_budget``, ``launches`` and
the ``launch_sequence`` order), converted to the base units the exposition uses: GiB × 2^30 bytes,
rounded to whole bytes.  Every series carries ``deployment`` and its parts (``engine``, ``host``,
``model``, ``tp``, ``dp``, ``pp``, ``ep``), read from the launch's fields; the unit and the release are
in ``logparse_launch_info``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC

import duckdb
import pytest
from helpers import LOGPARSE, SAMPLES, ci_tool, cli_env, cli_process
from prometheus_client.parser import text_string_to_metric_families

GIB = 1 << 30
SERIES_LABELS = {"deployment", "engine", "host", "model", "tp", "dp", "pp", "ep"}
INFO_LABELS = SERIES_LABELS | {"unit", "engine_version"}
GAUGES = {  # name: (column, scale, whole numbers)
    "logparse_kv_tokens": ("kv_tokens", 1, True),
    "logparse_kv_pool_bytes": ("kv_pool_gb", GIB, True),
    "logparse_headroom_bytes": ("headroom_gb", GIB, True),
    "logparse_weights_bytes": ("weights_gb", GIB, True),
    "logparse_startup_seconds": ("startup_s", 1, False),
}


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory):
    """Every sample log in one store: restarts, failed starts, many deployments."""
    db = tmp_path_factory.mktemp("metrics") / "history.duckdb"
    res = cli_process("ingest", *sorted(SAMPLES.glob("*/*.log")), "--db", db, "-q")
    assert res.returncode == 0, res.stderr
    return db


def store_latest(db) -> dict[str, dict]:
    """Per deployment: its latest launch's stored budget and outcome, and its launch counts."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute(
            """
            SELECT q.deployment, q.launch_no, l.outcome, l.started_at, l.max_running_requests_effective,
                   l.host, l.unit, l.model_path, l.engine, l.tp_size, l.dp_size, l.pp_size, l.ep_size, b.*
            FROM launch_sequence q JOIN launches l USING (launch_id) JOIN launch_budget b USING (launch_id)
            ORDER BY q.deployment, q.launch_no
            """
        )
        cols = [d[0] for d in cur.description]
        out: dict[str, dict] = {}
        for row in cur.fetchall():
            r = dict(zip(cols, row))
            prev = out.get(r["deployment"], {"launches": 0, "failed": 0})
            r["launches"] = prev["launches"] + 1
            r["failed"] = prev["failed"] + (r["outcome"] == "failed")
            out[r["deployment"]] = r  # the last one (launch_no order) stays
        return out
    finally:
        con.close()


def families(text: str) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_metrics_parse_and_equal_the_store(sample_store, tmp_path):
    out = tmp_path / "textfile" / "logparse.prom"
    out.parent.mkdir()
    res = cli_process("metrics", "--db", sample_store, "--output", out)
    assert res.returncode == 0, res.stderr
    assert [p.name for p in out.parent.iterdir()] == ["logparse.prom"]  # no temporary file left
    text = out.read_text()
    fams = families(text)
    expected = store_latest(sample_store)
    assert len(expected) >= 8  # the samples hold many deployments
    for name, fam in fams.items():
        assert fam.documentation, name
        assert fam.type in ("gauge", "counter"), name
        exposed = name + "_total" if fam.type == "counter" else name
        assert f"# HELP {exposed} " in text and f"# TYPE {exposed} {fam.type}\n" in text
        for s in fam.samples:
            assert s.timestamp is None
            assert set(s.labels) == (INFO_LABELS if name == "logparse_launch_info" else SERIES_LABELS), name
    assert {n for n, f in fams.items() if f.type == "counter"} == {"logparse_launches", "logparse_failed_launches"}
    for name, (column, scale, whole) in GAUGES.items():
        got = {s.labels["deployment"]: s.value for s in fams[name].samples}
        want = {d: r[column] * scale for d, r in expected.items() if r[column] is not None}
        assert got.keys() == want.keys(), name
        for d, v in want.items():
            assert got[d] == (round(v) if whole else pytest.approx(v, rel=1e-12)), (name, d)
    assert any(not float(r["kv_pool_gb"] * GIB).is_integer() for r in expected.values() if r["kv_pool_gb"])
    info = {s.labels["deployment"]: s for s in fams["logparse_launch_info"].samples}
    assert info.keys() == expected.keys() and all(s.value == 1 for s in info.values())
    for d, r in expected.items():
        labels = info[d].labels
        assert (labels["host"], labels["unit"], labels["model"]) == (
            r["host"] or "?",
            r["unit"] or "",
            r["model_path"].rstrip("/") if r["model_path"] else "?",
        )
        assert labels["engine"] == r["engine"] and labels["engine_version"] not in ("", "unknown")
        sizes = [r[f"{k}_size"] or 1 for k in ("tp", "dp", "pp", "ep")]
        assert [labels[k] for k in ("tp", "dp", "pp", "ep")] == [str(n) for n in sizes]
        assert "–" not in labels["engine_version"]  # a release, never a range
    mrr = {s.labels["deployment"]: s.value for s in fams["logparse_max_running_requests"].samples}
    assert mrr == {
        d: r["max_running_requests_effective"]
        for d, r in expected.items()
        if r["max_running_requests_effective"] is not None
    }
    ready = {s.labels["deployment"]: s.value for s in fams["logparse_launch_ready"].samples}
    assert ready == {d: float(r["outcome"] == "ready") for d, r in expected.items()}
    assert 0.0 in ready.values() and 1.0 in ready.values()  # a failed start is the latest of some
    start = {s.labels["deployment"]: s.value for s in fams["logparse_launch_start_time_seconds"].samples}
    for d, r in expected.items():
        if r["started_at"] is not None:
            assert start[d] == r["started_at"].replace(tzinfo=UTC).timestamp()
    launches = {s.labels["deployment"]: s.value for s in fams["logparse_launches"].samples}
    failed = {s.labels["deployment"]: s.value for s in fams["logparse_failed_launches"].samples}
    assert launches == {d: r["launches"] for d, r in expected.items()}
    assert failed == {d: r["failed"] for d, r in expected.items()}
    assert max(launches.values()) == 3  # the restarts sample


def test_metrics_output_dash_is_stdout_and_a_file_is_readable_by_all(sample_store, tmp_path):
    res = cli_process("metrics", "--db", sample_store, "--output", "-", cwd=tmp_path)
    assert res.returncode == 0 and not (tmp_path / "-").exists()
    assert res.stdout.decode() == cli_process("metrics", "--db", sample_store).stdout.decode()
    out = tmp_path / "m.prom"
    res = subprocess.run(
        ["sh", "-c", 'umask 077 && exec "$@"', "sh", *LOGPARSE, "metrics", "--db", str(sample_store), "-o", str(out)],
        env=cli_env(),
    )
    assert res.returncode == 0 and out.stat().st_mode & 0o777 == 0o644


def test_metrics_of_a_missing_store_is_empty_but_valid(tmp_path):
    res = cli_process("metrics", "--db", tmp_path / "none.duckdb")
    assert res.returncode == 0, res.stderr
    fams = families(res.stdout.decode())
    from logparse.reports.metrics import FAMILIES

    assert len(fams) == len(FAMILIES) == 17 and all(not f.samples and f.documentation for f in fams.values())
    assert not (tmp_path / "none.duckdb").exists()


def test_metrics_escape_label_values(tmp_path):
    log = tmp_path / 'odd "model".log'
    text = (SAMPLES / "sglang-0.5" / "llama-0.5.9-dataclass.log").read_bytes()
    log.write_bytes(text)
    db = tmp_path / "h.duckdb"
    res = cli_process("ingest", log, "--db", db, "--host", 'gpu\\"7', "-q")
    assert res.returncode == 0, res.stderr
    out = cli_process("metrics", "--db", db)
    fams = families(out.stdout.decode())
    assert {s.labels["host"] for s in fams["logparse_launch_info"].samples} == {'gpu\\"7'}
    (kv,) = fams["logparse_kv_tokens"].samples  # the value series too, escaped the same way
    assert kv.labels["host"] == 'gpu\\"7' and kv.labels["deployment"].split("|")[1] == 'gpu\\"7'
    assert 'host="gpu\\\\\\"7"' in out.stdout.decode()  # a backslash and a quote, each escaped


def test_release_label_is_stable_until_the_evidence_rules_it_out():
    from logparse.reports.metrics import ReleaseEvidence, release_labels

    sg = lambda lo, hi: ReleaseEvidence("sglang", None, lo, hi)
    # the same release dated more or less narrowly (a failed start prints fewer lines): one name
    assert (
        release_labels([sg("0.5.10", "0.5.10.post1"), sg("0.5.9", "0.5.10.post1"), sg("0.5.10", "0.5.10.post1")])
        == ["0.5.10"] * 3
    )
    # a first launch dated widely, a later one more narrowly from below: the guess is ruled out, once
    assert release_labels([sg("0.5.9", "0.5.10.post1"), sg("0.5.10", "0.5.10.post1")]) == ["0.5.9", "0.5.10"]
    # an upgrade the log shows: a new name (the lowest release of the new range)
    assert release_labels([sg("0.5.10", "0.5.10.post1"), sg("0.5.12", "0.5.12.post1")]) == ["0.5.10", "0.5.12"]
    # post releases and an rc are releases like any other (PEP 440 order: 0.4.10 < 0.4.10.post2 < 0.5.0rc2)
    assert release_labels([sg("0.4.10.post2", "0.5.0rc2"), sg("0.5.0rc2", "0.5.0rc2")]) == ["0.4.10.post2", "0.5.0rc2"]
    assert release_labels([sg("0.4.10", "0.4.10.post2"), sg("0.4.10.post1", "0.4.10.post2")]) == [
        "0.4.10",
        "0.4.10.post1",
    ]
    assert release_labels([sg("0.4.10.post1", "0.4.10.post2"), sg("0.4.10", "0.5.0rc2")]) == ["0.4.10.post1"] * 2
    # an exact version (given, or printed by vLLM) is kept while later ranges allow it; no evidence keeps it
    exact = ReleaseEvidence("sglang", "0.5.10.post1")
    assert release_labels([exact, sg("0.5.10", "0.5.10.post1"), ReleaseEvidence("sglang")]) == ["0.5.10.post1"] * 3
    vl = [ReleaseEvidence("vllm", "0.6.6.post1", "0.6.6.post1", "0.6.6.post1"), ReleaseEvidence("vllm", "0.20.2")]
    assert release_labels(vl) == ["0.6.6.post1", "0.20.2"]
    assert release_labels([ReleaseEvidence("sglang"), sg("0.4.7", "0.4.7")]) == ["unknown", "0.4.7"]


def test_metrics_keep_a_release_name_the_next_launch_still_allows(tmp_path):
    """Kimi's first launch said to be 0.5.10.post1 (``--sglang-version``); the restart's log alone dates it
    0.5.10–0.5.10.post1, which allows that release: the name stays (the range's lowest would be 0.5.10)."""
    db = tmp_path / "h.duckdb"
    first, second = sorted((SAMPLES / "kimi-k25").glob("launch-*.log"))
    for log, extra in ((first, ["--sglang-version", "0.5.10.post1"]), (second, [])):
        res = cli_process("ingest", log, "--db", db, "-q", *extra)
        assert res.returncode == 0, res.stderr
    fams = families(cli_process("metrics", "--db", db).stdout.decode())
    (info,) = fams["logparse_launch_info"].samples
    assert info.labels["engine_version"] == "0.5.10.post1"
    assert fams["logparse_launches"].samples[0].value == 2  # one deployment, both launches


def test_metrics_name_the_kimi_release_range_by_its_lowest_release(sample_store):
    fams = families(cli_process("metrics", "--db", sample_store).stdout.decode())
    info = {s.labels["model"]: s.labels for s in fams["logparse_launch_info"].samples}
    assert info["/models/Kimi-K2.5-INT4"]["engine_version"] == "0.5.10"  # the log dates it 0.5.10–0.5.10.post1
    kv = {s.labels["deployment"]: s.value for s in fams["logparse_kv_pool_bytes"].samples}
    assert kv[info["/models/Kimi-K2.5-INT4"]["deployment"]] == 11188389806  # 10.42 GiB, to the byte


def test_metrics_text_survives_an_undecodable_byte_in_a_label():
    from logparse.cli.metrics_text import exposition
    from logparse.reports.metrics import FAMILIES, Metrics, Sample

    info = next(f for f in FAMILIES if f.kind == "info")
    kv = FAMILIES[0]
    series = {"deployment": "d\udcff", "engine": "sglang", "host": "h", "model": "/m/\udcfe"}
    series |= {"tp": "1", "dp": "1", "pp": "1", "ep": "1"}
    labels = series | {"unit": "", "engine_version": "0.5.10"}
    m = Metrics([(kv, [Sample(series, 5.0)]), (info, [Sample(labels, 1.0)])])
    fams = families(exposition(m))
    (got,) = fams["logparse_kv_tokens"].samples
    assert got.labels["deployment"] == "d\ufffd" and got.labels["model"] == "/m/\ufffd"
    assert fams["logparse_launch_info"].samples[0].labels["model"] == "/m/\ufffd"


def test_metrics_labels_are_the_parts_of_the_deployment_key(sample_store, tmp_path):
    """Every series' separate labels spell its deployment key, part by part (the samples' keys are the
    default ones); a ``deployment`` label given at ingest keeps the launch's parts beside it."""
    for fam in families(cli_process("metrics", "--db", sample_store).stdout.decode()).values():
        for s in fam.samples:
            lab = s.labels
            sizes = [f"{k}={lab[k]}" for k in ("tp", "dp", "pp", "ep")]
            assert "|".join([lab["engine"], lab["host"], lab["model"], *sizes]) == lab["deployment"], fam.name
    db = tmp_path / "h.duckdb"
    logs = {"replica-a": SAMPLES / "sglang-0.5" / "llama-0.5.9-dataclass.log", "replica-b": SAMPLES / "kimi-k25"}
    for replica, log in logs.items():
        res = cli_process("ingest", log, "--db", db, "--host", "gpu-node-3", "--label", f"deployment={replica}", "-q")
        assert res.returncode == 0, res.stderr
    fams = families(cli_process("metrics", "--db", db).stdout.decode())
    kv = {s.labels["deployment"]: s.labels for s in fams["logparse_kv_tokens"].samples}
    assert kv.keys() == logs.keys()
    assert kv["replica-b"]["model"] == "/models/Kimi-K2.5-INT4" and kv["replica-b"]["tp"] == "8"
    assert {lab["host"] for lab in kv.values()} == {"gpu-node-3"} and {lab["engine"] for lab in kv.values()} == {
        "sglang"
    }


def test_metrics_pass_promtool_check_metrics(sample_store):
    """Prometheus' own linter accepts the exposition (names, units, HELP and TYPE, label syntax)."""
    text = cli_process("metrics", "--db", sample_store).stdout
    res = subprocess.run([promtool(), "check", "metrics"], input=text, capture_output=True)
    assert res.returncode == 0, res.stdout + res.stderr


def promtool() -> str:
    return ci_tool("promtool", "prometheus", "check the metrics' exposition")


def _units(tmp_path, *args: str) -> dict[str, str]:
    d = tmp_path / "units"
    res = cli_process("systemd-units", *args, "--install", "--dir", d)
    assert res.returncode == 0, res.stderr
    assert "enable --now logparse-watch.service" in res.stdout.decode()
    return {p.name: p.read_text() for p in d.iterdir()}


def systemd_analyze() -> str:
    return ci_tool("systemd-analyze", "systemd", "verify the units")


def verify(files: list[str], *args: str, env: dict | None = None) -> None:
    """``systemd-analyze verify``: exit 0 and no complaint about our files (it warns and goes on)."""
    res = subprocess.run([systemd_analyze(), *args, "verify", *files], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert not any(os.path.basename(f) in res.stderr for f in files), res.stderr


def test_systemd_units_system(tmp_path):
    units = _units(tmp_path, "--interval", "1h 30min")
    assert set(units) == {"logparse-watch.service", "logparse-ingest.service", "logparse-ingest.timer"}
    watch, ingest, timer = (
        units["logparse-watch.service"],
        units["logparse-ingest.service"],
        units["logparse-ingest.timer"],
    )
    want = (
        "watch --journal -u sglang.service --db /var/lib/logparse/history.duckdb --metrics /run/logparse/logparse.prom"
    )
    assert want in watch and "WantedBy=multi-user.target" in watch
    for service in (watch, ingest):  # a dynamic user in the journal's group, never root
        lines = service.splitlines()
        assert {"DynamicUser=yes", "User=logparse", "SupplementaryGroups=systemd-journal"} <= set(lines)
        assert {"StateDirectory=logparse", "RuntimeDirectory=logparse", "RuntimeDirectoryMode=0755"} <= set(lines)
        assert "User=root" not in lines
    assert "ingest --journal -u sglang.service" in ingest and "--output /run/logparse/logparse.prom" in ingest
    # a monotonic timer as systemd.timer(5) documents it: OnBootSec= first, Persistent= is for OnCalendar= only
    assert "OnUnitActiveSec=1h 30min" in timer and "OnBootSec=" in timer and "Persistent" not in timer
    printed = cli_process("systemd-units")
    assert printed.returncode == 0 and "# ---- logparse-watch.service" in printed.stdout.decode()
    verify([str(tmp_path / "units" / n) for n in sorted(units)])


def test_systemd_units_write_odd_paths_as_systemd_reads_them(tmp_path):
    """A store path with a space, a quote, ``%`` and ``$``: one double-quoted word, nothing expanded."""
    home = tmp_path / "it's my data%h$HOME"
    d = tmp_path / "units"
    res = cli_process("systemd-units", "--user", "--install", "--dir", d, env=cli_env(XDG_DATA_HOME=str(home)))
    assert res.returncode == 0, res.stderr
    watch = (d / "logparse-watch.service").read_text()
    db = str(home / "logparse" / "history.duckdb").replace("%", "%%").replace("$", "$$")
    assert f' --db "{db}" ' in watch
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    verify([str(p) for p in sorted(d.iterdir())], "--user", env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})


def test_systemd_units_refuse_a_bad_unit_name(tmp_path):
    for bad in ("a b.service", "x;rm -rf /", "sglang\nExecStart=/bin/sh", "sglang@%i.service", ""):
        res = cli_process("systemd-units", "-u", bad)
        err = res.stderr.decode()
        assert res.returncode == 2 and len(err.strip().splitlines()) == 1 and "not a systemd unit name" in err, err
    assert cli_process("systemd-units", "-u", "sglang@gpu0.service").returncode == 0
    assert cli_process("systemd-units", "-u", "sglang-*.service").returncode == 0  # a journalctl -u pattern


def test_systemd_units_refuse_a_bad_interval(tmp_path):
    for bad in ("banana", "5 parsecs", "0", "-5min", ""):
        res = cli_process("systemd-units", "--interval", bad, "--install", "--dir", tmp_path / "u")
        err = res.stderr.decode()
        assert res.returncode == 2 and len(err.strip().splitlines()) == 1 and "--interval" in err, (bad, err)
    assert not (tmp_path / "u").exists()


@pytest.mark.parametrize(
    "span",
    [
        "5min",
        "90",
        "1h 30min",
        "1.5h",
        "2weeks",
        "1M",
        "1y",
        "500ms",
        "5min30s",
        "5 min 30",
        "1µs",
        "3d 4h",
        ".5min",
        "1 .5h",
        "5m5",
        "1hr",
    ],
)
def test_timespan_parser_reads_as_systemd_does(span):
    from logparse.cli.systemd_cmd import parse_timespan, timespan_seconds

    seconds = parse_timespan(span)
    assert seconds > 0
    if shutil.which("systemd-analyze"):
        assert timespan_seconds(span) == pytest.approx(seconds, abs=1e-6)


@pytest.mark.parametrize(
    "span", ["banana", "3ns", "", "5 parsecs", "1h banana", "-5s", "5.min", "5.", "1.5.5h", "1e3s"]
)
def test_timespan_parser_refuses_what_systemd_refuses(span):
    from logparse.cli.systemd_cmd import parse_timespan, timespan_seconds

    with pytest.raises(ValueError):
        parse_timespan(span)
    if shutil.which("systemd-analyze"):
        with pytest.raises(ValueError):
            timespan_seconds(span)


def test_systemd_units_user(tmp_path):
    units = _units(tmp_path, "--user", "-u", "my-sglang.service", "--interval", "15min")
    watch = units["logparse-watch.service"]
    assert "watch --journal -u my-sglang.service" in watch and "WantedBy=default.target" in watch
    assert "StateDirectory" not in watch and "User=" not in watch and "DynamicUser" not in watch
    assert "/logparse/history.duckdb" in watch and "/var/lib" not in watch
    assert "OnUnitActiveSec=15min" in units["logparse-ingest.timer"]
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}  # a user manager's runtime folder
    verify([str(tmp_path / "units" / n) for n in sorted(units)], "--user", env=env)
