"""Secrets out of every line before anything reads it: API keys, passwords, tokens, URL credentials.

SGLang prints every ``ServerArgs`` field at start, ``api_key`` and ``admin_api_key`` among them
(``api_key='sk-…'`` in the dataclass form, ``'api_key': 'sk-…'`` in the dict form,
``ssl_keyfile_password`` since 0.5); vLLM prints its non-default arguments as a dict
(``'api_key': …``, ``'hf_token': …``) and older releases a ``Namespace(api_key=…)``; a command line
in a log has ``--api-key VALUE``; a URL may carry ``user:password@``.  A store keeps server arguments
and log lines, so the value is replaced where the line enters the parser, and every later stage
(fields, events, unrecognized lines, the store, exports, reports) sees only the replacement:

    api_key='sk-live-1234'   ->   api_key='<redacted:5f0a1c2e>'

The replacement keeps a fingerprint (the first 8 hex digits of the value's SHA-256), so that a key
that changed between two launches still shows as a change; the value itself cannot be read back.
A value that is already a mask (``'***'``, empty, ``None``) is left as it is.
"""

from __future__ import annotations

import hashlib
import re

#: Argument names whose value is a secret (SGLang's and vLLM's ServerArgs / CLI, and the usual kinds).
NAMES = r"(?:[a-z0-9]+_)*(?:api_key|password|passwd|secret|secret_key|access_key|access_token|auth_token|hf_token)"
#: ``name='value'`` / ``name="value"`` (a dataclass or Namespace repr) and ``'name': 'value'`` (a dict).
_ASSIGNED = re.compile(
    rf"""(?<![A-Za-z0-9_])(?P<q>['"]?)(?P<name>{NAMES})(?P=q)\s*[:=]\s*(?P<val>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
)
#: ``--api-key VALUE``, ``--api-key=VALUE`` (a command line printed in a log).
_FLAG = re.compile(
    r"(?P<pre>(?<![\w-])--(?:[a-z0-9]+-)*(?:api-key|password|secret|secret-key|access-key|hf-token|auth-token)"
    r"(?:=|\s+))(?P<val>[^\s'\",)\]]+)"
)
#: ``scheme://user:password@host``.
_URL = re.compile(r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'\"]*:)(?P<val>[^\s/@'\"]+)(?=@)")
#: Cheap tests that a line may hold a secret (nearly every line holds none).
HINTS = ("key", "passw", "passwd", "secret", "_token", "-token", "://")
#: Values that are already masks or empty.
_MASKS = {"", "***", "None", "null"}
REDACTED = "<redacted:"


def fingerprint(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _mask(value: str) -> str:
    if value in _MASKS or set(value) <= {"*"} or value.startswith(REDACTED):
        return value
    return f"{REDACTED}{fingerprint(value)}>"


def _assigned(m: re.Match) -> str:
    val = m.group("val")
    quote, inner = val[0], val[1:-1]
    return m.group(0)[: m.start("val") - m.start(0)] + quote + _mask(inner) + quote


def _plain(m: re.Match) -> str:
    return m.group("pre") + _mask(m.group("val"))


def secret_name(name: str) -> bool:
    """Does an argument of this name hold a secret (``api_key``, ``ssl_keyfile_password``, …)?"""
    return re.fullmatch(NAMES, name.split(".")[-1]) is not None


def redact_value(name: str, value_json: str | None) -> str | None:
    """A stored argument's value (JSON text) with a secret replaced by its fingerprint."""
    if value_json is None or not secret_name(name) or not value_json.startswith('"'):
        return value_json
    import json

    try:
        value = json.loads(value_json)
    except ValueError:
        return json.dumps(_mask(value_json))
    return json.dumps(_mask(value)) if isinstance(value, str) else value_json


def redact(text: str) -> str:
    """``text`` with every secret value replaced by its fingerprint (see the module doc)."""
    if not any(h in text for h in HINTS):
        return text
    text = _ASSIGNED.sub(_assigned, text)
    text = _FLAG.sub(_plain, text)
    return _URL.sub(_plain, text)
