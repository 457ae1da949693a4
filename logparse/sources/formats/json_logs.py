"""``docker-json`` and ``json-log``: one JSON object per line, written by something other than journalctl.

``docker-json``: docker's ``json-file`` logging driver (``/var/lib/docker/containers/<id>/<id>-json.log``,
what ``docker logs`` reads from).  ``log`` is the line with its newline; a line longer than 16 KiB is
split over several objects, and only the last piece ends with ``\\n`` (so does a progress bar's
``\\r`` update)::

    {"log":"[2026-09-22 06:49:56 TP0] Load weight begin. avail mem=78.62 GB\\n","stream":"stderr","time":"2026-09-22T06:49:56.336833841Z"}

``json-log``: Python's logging through a JSON formatter, e.g. vLLM 0.32+ with
``--logging-config.formatter json`` (python-json-logger, keys from ``%(asctime)s %(levelname)s
%(name)s %(processName)s %(process)d %(message)s``)::

    {"asctime": "2026-11-20 10:01:40,001", "levelname": "INFO", "name": "vllm.v1.worker.gpu_worker", "processName": "EngineCore_DP0", "process": 4301, "message": "Available KV cache memory: 61.3 GiB"}

Record fields: docker-json: ``ts`` from ``time`` (UTC), the text read through the inner layers as
any line (a Ray prefix, SGLang's own line ...); the pieces of a split line give one record with
the whole line (the earlier pieces are noise records, so that every object is counted).
json-log: ``ts`` from ``asctime`` (local time read as UTC, with a note, as :mod:`.pylogging`);
a record of an engine's logger (``vllm.*``) gets the process tag the engine's own text format prints
(vLLM's ``(EngineCore_DP0 pid=4301)``), which is how the vLLM grammar tells its processes and workers apart
(the pid stays in the tag, not in the record: the processes of one server are one stream); other
records are read through the inner layers as any line; one record per line of a multi-line ``message``.
"""

from __future__ import annotations

import re
from typing import Any

from logparse import engines
from logparse.sources.formats.pylogging import NOTE_PYLOG_TIME
from logparse.sources.timestamps import offset_seconds, stamp_epoch

FORMATS = ("docker-json", "json-log")
ALIASES = {"json-file": "docker-json", "python-json": "json-log"}

_RFC_RE = re.compile(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(\.\d{1,9})?(Z|[+-]\d\d:?\d\d)\Z")
_ASCTIME_RE = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:[,.](\d{1,6}))?")
#: A line docker split into pieces (longer than 16 KiB, or a progress bar without a newline) is
#: joined up to this size (memory bound); the rest of it starts a new line.
MAX_JOINED = 64 << 20


def format_of(obj: Any) -> str | None:
    """Which of the two an object is (None: a journal entry, or something else)."""
    if not isinstance(obj, dict) or "MESSAGE" in obj or "__CURSOR" in obj:
        return None
    if isinstance(obj.get("log"), str) and ("time" in obj or "stream" in obj):
        return "docker-json"
    if isinstance(obj.get("message"), str) and ("levelname" in obj or "asctime" in obj):
        return "json-log"
    return None


def docker_time(obj: dict) -> float | None:
    """``time`` as epoch seconds (UTC), None when absent or not RFC 3339."""
    m = _RFC_RE.match(str(obj.get("time") or ""))
    if m is None:
        return None
    date, hms, frac, tz = (g.encode() if g else None for g in m.groups())
    assert date is not None and hms is not None and tz is not None
    return stamp_epoch(date, hms, frac, offset_seconds(tz))


def asctime(obj: dict) -> float | None:
    """``asctime`` (logging's default ``YYYY-mm-dd HH:MM:SS,mmm``) as epoch seconds, local time read as UTC."""
    m = _ASCTIME_RE.match(str(obj.get("asctime") or ""))
    if m is None:
        return None
    ms = m.group(3)
    return stamp_epoch(m.group(1).encode(), m.group(2).encode(), ("." + ms).encode() if ms else None)


def log_lines(obj: dict) -> tuple[list[str], bool]:
    """The lines of a json-log record, and whether they are an engine's own (a record of one of its
    loggers, :attr:`~logparse.engines.base.Engine.logger_names`: they then carry the process tag the
    engine prints, :meth:`~logparse.engines.base.Engine.json_line_tag`)."""
    lines = obj["message"].rstrip("\n").split("\n")
    name = str(obj.get("name") or "")
    engine = next((e for e in engines.all() if any(_of_logger(name, n) for n in e.logger_names)), None)
    tag = engine.json_line_tag(obj.get("processName"), obj.get("process")) if engine is not None else None
    if tag is not None:
        return [tag + ln for ln in lines], True
    return lines, False


def _of_logger(name: str, logger: str) -> bool:
    """Is ``name`` the Python logger ``logger`` or one of its children (``vllm.engine`` of ``vllm``)?"""
    return name == logger or name.startswith(logger + ".")


NOTE_TIME = NOTE_PYLOG_TIME
