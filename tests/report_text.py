"""Test reports valid UTF-8 whatever the tests feed: the hooks ``conftest.py`` installs.

The fuzz and text-safety tests feed lone surrogates on purpose (a file name that is not UTF-8,
as ``os.fsdecode`` gives it; ``st.text`` over every code point; ``\\ud800`` escapes): a failure's
message, its captured output or log, a hypothesis note, a user property or a warning may carry
one raw.  pytest-xdist sends each report from its worker through execnet, which encodes str as
strict UTF-8: one such report killed the whole run with INTERNALERROR (``UnicodeEncodeError``).
Each str of a report, and each warning's message, is made valid UTF-8 first: a lone surrogate
becomes its backslash escape (``\\udce9``), as logparse itself shows one.
"""

from __future__ import annotations

import pytest


def valid_utf8(value):
    """``value`` with every str (dict keys too) valid UTF-8: a lone surrogate as its backslash escape."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {valid_utf8(k): valid_utf8(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(valid_utf8(v) for v in value)
    return value


@pytest.hookimpl(hookwrapper=True)
def pytest_report_to_serializable(config, report):
    """A report as pytest-xdist sends it from a worker, valid UTF-8.  The fuzz and text-safety tests
    feed lone surrogates on purpose (a file name that is not UTF-8, ``st.text`` over every code
    point); a failure's message, captured output or log, a hypothesis note or a user property may
    carry one raw, which execnet cannot encode: the whole run died with INTERNALERROR."""
    outcome = yield
    data = outcome.get_result()
    if data is not None:
        outcome.force_result(valid_utf8(data))


@pytest.hookimpl(tryfirst=True)
def pytest_warning_recorded(warning_message, when, nodeid, location):
    """A warning's message, valid UTF-8 before pytest-xdist's worker sends it (see above)."""
    message = warning_message.message
    if isinstance(message, Warning):
        text = str(message)
        if valid_utf8(text) != text:
            warning_message.message = type(message)(valid_utf8(text))
    elif isinstance(message, str):
        warning_message.message = valid_utf8(message)
