"""One set of input conventions for every command (issue 22 item 3): values checked at the door,
one deployment rule, ``--limit``, ``--since`` and undated launches, ``-V``, ``NO_COLOR``, shell
completion of values, one meaning of negative launch references, times with their zone."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest
from helpers import CORPUS, ROOT, SAMPLES, cli, needs_corpus
from store_fixture import launch_lines

from logparse.launches.release_check import UnknownRelease, check_release, close_releases, release_list

MODEL = ROOT / "samples" / "models" / "Qwen3-32B"
SGLANG_LOG = sorted((SAMPLES / "sglang-0.5").glob("*.log"))[0]


# ---------------------------------------------------------------------------- releases


@pytest.mark.parametrize(
    ("engine", "given", "release"),
    [
        ("sglang", "0.5.10", "0.5.10"),
        ("sglang", "v0.5.10-post1", "0.5.10.post1"),
        ("sglang", "0.5.10post1", "0.5.10.post1"),
        ("sglang", "0.5.0-rc2", "0.5.0rc2"),
        ("sglang", " 0.4.10.POST2 ", "0.4.10.post2"),
        ("sglang", "0.5.11.dev3+gabc123", "0.5.11.dev3+gabc123"),  # a dev build between releases
        ("vllm", "0.9.0.1", "0.9.0.1"),
        ("vllm", "0.18.2rc1.dev73+gdb7a17ecc", "0.18.2rc1.dev73+gdb7a17ecc"),
    ],
)
def test_release_names_pip_reads_the_same_are_one_release(engine, given, release):
    assert check_release(engine, given) == release


@pytest.mark.parametrize(
    ("engine", "given", "why", "close"),
    [
        ("sglang", "banana", "not a version number", None),
        ("sglang", "0.5.1rc1", "not an SGLang release", ["0.5.0rc2", "0.5.1", "0.5.1.post1"]),
        ("sglang", "0.5.10.post9", "not an SGLang release", ["0.5.10.post1", "0.5.11", "0.5.12"]),
        ("sglang", "0.9.0", "newer than every SGLang release", None),
        ("sglang", "0.0.1", "older than every SGLang release", ["0.1.3", "0.1.4"]),
        ("sglang", "0.6.0.dev1", "newer than every SGLang release", None),
        ("vllm", "0.5.23", "not a vLLM release", ["0.5.5", "0.6.0", "0.6.1"]),
    ],
)
def test_unknown_releases_are_refused_with_the_closest(engine, given, why, close):
    with pytest.raises(UnknownRelease) as exc:
        check_release(engine, given)
    msg = str(exc.value)
    assert msg.startswith(f"{given}: {why}") and "\n" not in msg
    names = release_list(engine)
    assert f"{names[0]} – {names[-1]}" in msg
    if close is not None:
        assert close_releases(given, names) == close and ", ".join(close) in msg


def test_a_release_the_sizing_replays_is_not_a_dev_build():
    with pytest.raises(UnknownRelease):
        check_release("sglang", "0.5.11.dev3", builds=False)


@pytest.mark.parametrize("command", ["parse", "ingest", "watch"])
def test_sglang_version_is_checked_before_any_work(command, tmp_path):
    db = tmp_path / "h.duckdb"
    args = [command, str(SGLANG_LOG), "--sglang-version", "banana", "--db", db]
    if command == "parse":
        args = args[:-2]
    if command == "watch":
        args.append("--once")
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "logparse: --sglang-version banana: not a version number (known SGLang releases: "
        f"{release_list('sglang')[0]} – {release_list('sglang')[-1]}; newest: "
        + ", ".join(release_list("sglang")[-3:])
        + ")"
    ]
    assert not db.exists()


def test_sglang_version_spelled_as_pip_does_is_the_release():
    code, out, err = cli("parse", str(SGLANG_LOG), "--sglang-version", "v0.5.10-post1", "--json", "-q")
    assert code == 0, err
    assert {la["sglang_version"] for la in json.loads(out)["launches"]} == {"0.5.10.post1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--release", "banana"], "--release banana: not a version number"),
        (["--release", "0.5.24"], "--release 0.5.24: newer than every SGLang release"),
        (["--engine", "vllm", "--release", "0.5.23"], "--release 0.5.23: not a vLLM release"),
        (["--engine", "both", "--release", "0.5.23"], "--release 0.5.23: not a vLLM release"),
        (["--release", "0.5.11.dev2"], "--release 0.5.11.dev2: not an SGLang release"),
    ],
)
def test_plan_release_is_checked_for_its_engine(args, message):
    code, out, err = cli("plan", MODEL, "--gpu", "H100", *args)
    assert code == 2 and out == "" and err.startswith(f"logparse: {message}"), err
    assert "closest:" in err or "newest:" in err


def test_plan_release_spelled_as_pip_does():
    code, out, err = cli("plan", MODEL, "--gpu", "H100", "--engine", "vllm", "--release", "v0.20.2", "--json")
    assert code == 0, err
    assert json.loads(out)["release"] == "0.20.2"


# ---------------------------------------------------------------------------- the store's filters


def _store_of(tmp_path, launches: dict[str, list[str]]) -> str:
    """A store holding each log under its deployment label."""
    db = str(tmp_path / "h.duckdb")
    for i, (deployment, lines) in enumerate(launches.items()):
        log = tmp_path / f"{i}.log"
        log.write_text("\n".join(lines) + "\n")
        code, _, err = cli("ingest", log, "--label", f"deployment={deployment}", "--db", db, "-q")
        assert code == 0, err
    return db


def _undated(lines: list[str]) -> list[str]:
    """The same lines as a pasted excerpt without SGLang's time stamps."""
    return [re.sub(r"^\[[0-9-]+ [0-9:]+\] ", "", line) for line in lines]


@pytest.fixture
def deployments(tmp_path):
    now = datetime.now().replace(microsecond=0)
    return _store_of(
        tmp_path,
        {
            "prod": launch_lines(now - timedelta(days=1), random_seed=1, pid=11),
            "prod-canary": launch_lines(now - timedelta(days=2), random_seed=2, pid=12),
            "Kimi-K2.5-prod": launch_lines(now - timedelta(hours=3), random_seed=3, pid=13),
            "kimi_old": _undated(launch_lines(datetime(2024, 3, 1, 9), random_seed=4, pid=14)),
        },
    )


def _deployments_of(*args, db) -> set[str]:
    code, out, err = cli(*args, "--json", db=db)
    assert code == 0, err
    return {r["deployment"] for r in json.loads(out)}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("prod", {"prod"}),  # a whole name: that deployment only
        ("Kimi", {"Kimi-K2.5-prod", "kimi_old"}),  # else a part of the name, case ignored
        ("K2.5", {"Kimi-K2.5-prod"}),
        ("canary", {"prod-canary"}),
        ("_", {"kimi_old"}),  # SQL's wildcards are plain characters
        ("%", set()),
    ],
)
def test_one_deployment_rule_for_every_command(deployments, text, want):
    assert _deployments_of("launches", "--deployment", text, db=deployments) == want
    assert _deployments_of("history", "--deployment", text, db=deployments) == want


def test_limit_zero_lists_none_and_a_negative_limit_is_a_usage_error(deployments):
    code, out, err = cli("launches", "--limit", "0", "--json", db=deployments)
    assert code == 0 and json.loads(out) == []
    code, out, _ = cli("launches", "--limit", "2", "--json", db=deployments)
    assert len(json.loads(out)) == 2
    for bad in ("-1", "-5"):
        code, out, err = cli("launches", "--limit", bad, db=deployments)
        assert code == 2 and out == ""
        assert err.strip() == f"logparse: --limit {bad}: give a number of launches, 0 or more (0 lists none)"


def test_since_leaves_out_launches_without_a_start_time_and_says_so(deployments):
    code, out, err = cli("launches", "--since", "7d", "--json", db=deployments)
    assert code == 0
    rows = json.loads(out)
    assert {r["deployment"] for r in rows} == {"prod", "prod-canary", "Kimi-K2.5-prod"}
    assert all(r["started_at"] for r in rows)
    assert "note: 1 launch(es) without a start time left out by --since/--until" in err
    # an explicit instant before the dated Kimi launch: "today" would move across midnight with the clock
    before_kimi = (datetime.now() - timedelta(hours=4)).replace(microsecond=0).isoformat()
    code, out, err = cli("launches", "--until", before_kimi, "--deployment", "kimi", "--json", db=deployments)
    assert code == 0 and json.loads(out) == [] and "1 launch(es) without a start time" in err
    code, out, err = cli("launches", "--since", "7d", "--deployment", "prod", "--json", db=deployments)
    assert len(json.loads(out)) == 1 and "without a start time" not in err  # none of prod's is undated
    code, out, err = cli("launches", "--json", db=deployments)
    assert len(json.loads(out)) == 4 and "without a start time" not in err


# ---------------------------------------------------------------------------- -V, usage, NO_COLOR


def test_dash_v_is_version():
    from logparse import __version__

    for flag in ("-V", "--version"):
        code, out, _ = cli(flag)
        assert code == 0 and out == f"logparse {__version__}\n"


@pytest.mark.parametrize("command", ["parse", "ingest"])
def test_usage_says_several_paths_work(command):
    code, out, _ = cli(command, "--help")
    assert code == 0 and f"Usage: logparse {command} [OPTIONS] [PATH]...\n" in out


def _styled(env: dict[str, str], *args) -> str:
    """Run ``logparse ARGS`` as rich would on a terminal (FORCE_COLOR), with ``env``."""
    from helpers import cli_env, cli_process

    proc = cli_process(*args, env=cli_env(FORCE_COLOR="1", TERM="xterm-256color", **env), text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["parse", str(SGLANG_LOG), "-q"],
        ["explain", str(SGLANG_LOG)],
        ["plan", str(MODEL), "--gpu", "H100", "--engine", "both"],
    ],
)
def test_no_color_means_no_styles_at_all(args):
    styled = _styled({"NO_COLOR": ""}, *args)  # empty: not set (no-color.org)
    assert "\x1b[1m" in styled or "\x1b[1;" in styled, "the report has bold text on a terminal"
    plain = _styled({"NO_COLOR": "1"}, *args)
    assert "\x1b" not in plain

    def lines(text: str) -> list[str]:  # rich pads a styled table's lines; the plain layout does not
        return [line.rstrip() for line in text.splitlines()]

    assert lines(re.sub(r"\x1b\[[0-9;]*m", "", styled)) == lines(plain)  # the same report, without styles


# ---------------------------------------------------------------------------- completion


def _complete(words: str, db: str | None = None) -> list[str]:
    """What bash completion offers for the command line ``words`` (click's completion protocol)."""
    from helpers import cli_env, cli_process

    parts = words.split()
    cword = len(parts) if words.endswith(" ") else len(parts) - 1
    env = cli_env(COMP_WORDS=words, COMP_CWORD=str(cword), _LOGPARSE_COMPLETE="complete_bash")
    if db is not None:
        env["LOGPARSE_DB"] = db
    proc = cli_process(env=env, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_values_complete_in_the_shell(deployments):
    from logparse.cli.output import TABLE_FORMATS

    assert _complete("logparse launches --format ") == list(TABLE_FORMATS)
    assert _complete("logparse explain x --format n") == ["ndjson"]
    assert _complete("logparse launches --outcome f") == ["failed"]
    assert _complete("logparse plan m --engine vllm --release 0.20.") == ["0.20.2", "0.20.1", "0.20.0"]
    assert _complete("logparse parse --sglang-version 0.5.2") == ["0.5.23", "0.5.22", "0.5.21", "0.5.20", "0.5.2"]
    assert _complete("logparse history --metric headroom") == ["headroom_gb"]
    assert "journal-short-iso" in _complete("logparse parse --input-format journal-")
    assert _complete("logparse history --deployment ", db=deployments) == sorted(
        ["prod", "prod-canary", "Kimi-K2.5-prod", "kimi_old"]
    )
    assert _complete("logparse show @", db=deployments)[:2] == ["@latest", "@-1"]
    assert _complete("logparse diff @latest @-", db=deployments) == ["@-1", "@-2", "@-3"]
    assert _complete("logparse show ./sam", db=deployments) == []  # a file: the shell completes it


def test_completion_without_a_store_completes_nothing_and_never_fails(tmp_path):
    assert _complete("logparse launches --deployment ", db=str(tmp_path / "none.duckdb")) == []
    assert not (tmp_path / "none.duckdb").exists()


# ---------------------------------------------------------------------------- launch references


def _launch_id(ref: str, db: str) -> tuple[str, str]:
    code, out, err = cli("show", ref, "--json", "--events", "none", db=db)
    assert code == 0, err
    return json.loads(out)["launch_id"], err


def test_negative_references_count_from_the_last_in_the_store_as_in_a_file(db, three):
    assert cli("ingest", three, "-q", db=db).code == 0
    for n in (1, 2, 3):
        stored, note = _launch_id(f"@-{n}", db)
        in_file, no_note = _launch_id(f"{three}#-{n}", db)
        assert stored == in_file
        assert f"note: @-{n}: @-N counts from the newest launch as FILE#-N does" in note and no_note == ""
        assert _launch_id(f"@{4 - n}", db)[0] == _launch_id(f"{three}#{4 - n}", db)[0]  # @1: the oldest
    assert _launch_id("@-1", db)[0] == _launch_id("@latest", db)[0]
    assert _launch_id("@latest", db)[1] == ""  # no note where nothing changed
    code, _, err = cli("show", "@0", db=db)
    assert code == 2 and "there is no @0" in err
    code, _, err = cli("show", "@-4", db=db)
    assert code == 2 and "@-4: only 3 launch(es) in the store (@-1 the newest, @-3 the oldest)" in err


def test_diff_of_the_last_two_launches_reads_as_in_python(db, three):
    assert cli("ingest", three, "-q", db=db).code == 0
    code, out, err = cli("diff", "@-2", "@-1", "--json", db=db)
    assert code == 0, err
    d = json.loads(out)
    assert err.count("note:") == 1 and "@-2, @-1" in err  # one note per command
    code, out2, _ = cli("diff", f"{three}#-2", f"{three}#-1", "--json", db=db)
    assert json.loads(out2)["budget"] == d["budget"]


# ---------------------------------------------------------------------------- times with their zone


def _journal(lines: list[str], *, hours_ahead: int = 0, minutes_ahead: int = 0) -> str:
    """``lines`` as ``journalctl -o short-iso`` prints them, the journal's time (UTC) behind SGLang's
    own stamps by the server's offset (a container at +02:00 stamps 11:00 at 09:00 UTC)."""
    from store_fixture import journal_short_iso

    shift = timedelta(hours=hours_ahead, minutes=minutes_ahead)
    shifted = []
    for line in lines:
        stamp = datetime.fromisoformat(line[1:20]) - shift
        shifted.append((line, stamp.strftime("%Y-%m-%dT%H:%M:%S+0000")))
    out = journal_short_iso(lines, unit_started=False)
    return "\n".join(f"{utc} {j.split(' ', 1)[1]}" for (_, utc), j in zip(shifted, out)) + "\n"


def _parsed(tmp_path, text: str, name: str = "j.log") -> dict:
    path = tmp_path / name
    path.write_text(text)
    code, out, err = cli("parse", path, "--json", "-q")
    assert code == 0, err
    (launch,) = json.loads(out)["launches"]
    return launch


@pytest.mark.parametrize(
    ("hours", "minutes", "zone"), [(0, 0, "+00:00"), (2, 0, "+02:00"), (5, 30, "+05:30"), (-7, 0, "-07:00")]
)
def test_a_journal_time_with_its_zone_gives_the_launch_its_zone(tmp_path, hours, minutes, zone):
    lines = launch_lines(datetime(2026, 5, 18, 9, 0, 1))
    launch = _parsed(tmp_path, _journal(lines, hours_ahead=hours, minutes_ahead=minutes if hours >= 0 else -minutes))
    assert launch["time_zone"] == zone
    assert launch["started_at"] == "2026-05-18T09:00:01"  # SGLang's own stamp, as printed
    text = cli("parse", tmp_path / "j.log", "-q").out
    assert f"started 2026-05-18T09:00:01{zone}, ready 2026-05-18T09:00:25{zone};" in text


def test_a_log_without_a_zone_says_so(tmp_path):
    lines = launch_lines(datetime(2026, 5, 18, 9, 0, 1))
    launch = _parsed(tmp_path, "\n".join(lines) + "\n", "plain.log")
    assert launch["time_zone"] is None and launch["started_at"] == "2026-05-18T09:00:01"
    text = cli("parse", tmp_path / "plain.log", "-q").out
    assert "started 2026-05-18T09:00:01 (no zone), ready 2026-05-18T09:00:25 (no zone);" in text


def test_a_zone_less_journal_rendering_is_no_zone(tmp_path):
    """``journalctl -o short`` prints local time without a zone: read as UTC, but not known to be."""
    lines = launch_lines(datetime(2026, 5, 18, 9, 0, 1))
    short = [f"May 18 {ln[12:20]} gpu-1 python3[20817]: {ln}" for ln in lines]
    assert _parsed(tmp_path, "\n".join(short) + "\n")["time_zone"] is None


def test_stored_launches_show_their_zone(db, tmp_path):
    j = tmp_path / "j.log"
    j.write_text(_journal(launch_lines(datetime(2026, 5, 18, 9, 0, 1), pid=7)))
    p = tmp_path / "p.log"
    p.write_text("\n".join(launch_lines(datetime(2026, 5, 19, 9, 0, 1), pid=8, random_seed=9)) + "\n")
    assert cli("ingest", j, p, "-q", db=db).code == 0
    rows = json.loads(cli("launches", "--json", db=db).out)
    assert [(r["started_at"], r["time_zone"]) for r in rows] == [
        ("2026-05-18T09:00:01", "+00:00"),
        ("2026-05-19T09:00:01", None),
    ]
    table = cli("launches", db=db).out
    assert "2026-05-18T09:00:01+00:00" in table and "2026-05-19T09:00:01 " in table
    assert "2026-05-18T09:00:01+00:00" in cli("history", db=db).out
    assert "started 2026-05-18T09:00:01+00:00" in cli("show", "@1", db=db).out
    d = json.loads(cli("diff", "@1", "@2", "--json", db=db).out)
    assert (d["a"]["time_zone"], d["b"]["time_zone"]) == ("+00:00", None)


def test_migration_12_gives_stored_journal_launches_their_zone(tmp_path):
    import duckdb

    from logparse.store import Store, schema

    path = tmp_path / "old.duckdb"
    j = tmp_path / "j.log"
    j.write_text(_journal(launch_lines(datetime(2026, 5, 18, 9, 0, 1), pid=7)))
    p = tmp_path / "p.log"
    p.write_text("\n".join(launch_lines(datetime(2026, 5, 19, 9, 0, 1), pid=8, random_seed=9)) + "\n")
    Store(path).ingest_paths([j, p], progress=False)
    con = duckdb.connect(str(path))  # the store as migration 11 left it
    con.execute("DROP VIEW history")
    con.execute("DROP VIEW launch_summary")
    con.execute("ALTER TABLE launches DROP COLUMN time_zone")
    con.execute("DELETE FROM schema_version WHERE version >= 12")
    con.close()
    store = Store(path)
    rows = store.launches(as_rows=True, columns=["started_at", "time_zone"]).rows
    assert [z for _, z in rows] == ["+00:00", None]
    assert store.query("SELECT max(version) AS v FROM schema_version")["v"][0] == schema.SCHEMA_VERSION


@needs_corpus
@pytest.mark.parametrize(
    "order", [("short.txt", "short-iso.txt"), ("short-iso.txt", "short.txt"), ("cat.txt", "export.txt")]
)
def test_a_launch_keeps_the_zone_any_rendering_of_it_printed(tmp_path, order):
    """Two renderings of one journal, one with the zone and one without: one launch each, with the
    zone, whichever came first."""
    from logparse.store import Store

    store = Store(tmp_path / "h.duckdb")
    for name in order:
        store.ingest_paths([CORPUS / "journal" / "0.5.23-restart" / name], progress=False)
    rows = store.launches(as_rows=True, columns=["started_at", "time_zone"]).rows
    assert len(rows) == 2 and {z for _, z in rows} == {"+00:00"}
