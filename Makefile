# Shortcuts for contributors (CONTRIBUTING.md); CI runs the same commands through .ci/run.
PY ?= .venv/bin/python

.PHONY: check test test-fast test-slow bench

check:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# Everything but the slow and fuzz tests, on every core.
test-fast:
	$(PY) -m pytest -n auto --dist loadfile -m "not slow and not fuzz"

# The README's test command.
test:
	$(PY) -m pytest -n auto --dist loadfile

test-slow:
	$(PY) -m pytest -m slow

bench:
	bench/run
