"""The fleet path with a real distributed engine: ``logparse export``'s partitioned Parquet read by
Spark (pyspark in local mode on a headless JRE) agrees with the store, read by DuckDB, on every
launch, its host and its KV tokens (issue 22).

``.ci/run`` installs the JRE (Debian's ``default-jre-headless``) and the ``spark`` extra and sets
``LOGPARSE_CI=1``: there a missing Java or pyspark fails the test.  Elsewhere it skips, saying what
is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import duckdb
import pytest
from helpers import IN_CI, ROOT, SAMPLES, cli


def _missing() -> str | None:
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install -e '.[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and (Path(java_home) / "bin" / "java").exists()):
        return "no Java runtime (Debian: apt-get install default-jre-headless)"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None and not IN_CI, reason=f"Spark: {MISSING}")


def readme_fleet_sql() -> str:
    """The documented fleet query (the first ``sql`` block of docs/store.md's section on the export):
    the same text runs in Spark over the Parquet, in DuckDB over the Parquet and in DuckDB over the store."""
    text = (ROOT / "docs" / "store.md").read_text()
    section = text.split("## The fleet: the export in Spark or DuckDB", 1)[1]
    return section.split("```sql\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A store of launches from three hosts (one of them none: a plain file without ``--host``)
    and its export."""
    tmp = tmp_path_factory.mktemp("spark")
    db, out = tmp / "fleet.duckdb", tmp / "export"
    for args in (
        (SAMPLES / "sglang-0.5", "--host", "gpu-a"),
        (SAMPLES / "kimi-k25", "--host", "gpu-b"),
        (SAMPLES / "vllm",),
        (SAMPLES / "sglang-0.4" / "dp-attention-0.4.9.log",),
    ):
        res = cli("ingest", "-q", "--db", db, *args)
        assert res.code == 0, res.err
    res = cli("export", out, "--db", db)
    assert res.code == 0, res.err
    return db, out, tmp


@pytest.fixture(scope="module")
def spark(fleet):
    if MISSING is not None:  # only in CI (elsewhere the module skips)
        pytest.fail(f"Spark is part of CI: {MISSING}")
    from pyspark.sql import SparkSession

    tmp = fleet[2]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local mode: no other interface needed
    session = (
        SparkSession.builder.master("local[1]")
        .appName("logparse-export")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", str(tmp / "spark-local"))
        .config("spark.sql.warehouse.dir", str(tmp / "spark-warehouse"))
        # host=10.0.0.7 or month=2026-05 stay strings, as the store has them
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _store_rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.sql(sql).fetchall()


def test_spark_reads_the_partitioned_export_as_the_store_has_it(fleet, spark):
    db, out, _ = fleet
    launches = spark.read.parquet(str(out / "launches"))
    budget = spark.read.parquet(str(out / "launch_budget"))
    assert {"host", "month"} <= set(launches.columns)  # the partition columns, from the directory names

    # every launch once, on its host (the partition's), null where the store has none
    store_hosts = dict(_store_rows(db, "SELECT launch_id, host FROM launches"))
    spark_hosts = {r["launch_id"]: r["host"] for r in launches.select("launch_id", "host").collect()}
    assert len(store_hosts) >= 15 and launches.count() == len(store_hosts)
    assert spark_hosts == store_hosts
    assert {"gpu-a", "gpu-b", None} <= set(store_hosts.values())

    # the launch count per host
    per_host = {r["host"]: r["count"] for r in launches.groupBy("host").count().collect()}
    assert per_host == dict(_store_rows(db, "SELECT host, count(*) FROM launches GROUP BY host"))

    # each launch's KV tokens (the budget's one figure, what every surface reads)
    store_kv = dict(_store_rows(db, "SELECT launch_id, kv_tokens FROM launch_summary"))
    spark_kv = {r["launch_id"]: r["kv_tokens"] for r in budget.select("launch_id", "kv_tokens").collect()}
    assert spark_kv == store_kv  # every launch has its budget row
    assert sum(v is not None for v in spark_kv.values()) >= 10

    # a budget row is filed under its launch's host and month
    joined = launches.alias("l").join(budget.alias("b"), "launch_id")
    mismatched = joined.where("NOT (l.host <=> b.host) OR NOT (l.month <=> b.month)").count()
    assert mismatched == 0 and joined.count() == budget.count()


def test_the_readme_fleet_query_gives_the_same_answer_in_spark_and_duckdb(fleet, spark):
    db, out, _ = fleet
    sql = readme_fleet_sql()
    assert "kv_tokens" in sql and "GROUP BY" in sql
    for table in ("launches", "launch_budget"):
        spark.read.parquet(str(out / table)).createOrReplaceTempView(table)
    got = [tuple(r) for r in spark.sql(sql).collect()]
    want = _store_rows(db, sql)
    assert sorted(got, key=repr) == sorted(want, key=repr) and len(want) >= 10
    assert sum(r[2] for r in got) == _store_rows(db, "SELECT count(*) FROM launches")[0][0]
    # DuckDB over the export, as the README shows it
    with duckdb.connect() as con:
        for table in ("launches", "launch_budget"):
            glob = out / table / "**" / "*.parquet"
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true)")
        assert sorted(con.sql(sql).fetchall(), key=repr) == sorted(want, key=repr)
