# Shortcuts for contributors (CONTRIBUTING.md); CI runs the same commands through .ci/run.
PY ?= .venv/bin/python

.PHONY: check test test-fast test-slow fuzz bench

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

# Exploration, not the gate (which runs the fixed cases only): the fuzz and property tests with a fresh
# random seed, printed first; LOGPARSE_FUZZ_SEED=N make fuzz replays a run. Add what it finds to the fixed set.
fuzz:
	seed=$${LOGPARSE_FUZZ_SEED:-$$($(PY) -c 'import random; print(random.SystemRandom().randrange(2**32))')}; \
	echo "fuzz seed: $$seed (replay: LOGPARSE_FUZZ_SEED=$$seed make fuzz)"; \
	LOGPARSE_FUZZ_SEED=$$seed $(PY) -m pytest -n auto --dist loadfile -m "fuzz or hypothesis" --hypothesis-seed=$$seed

bench:
	bench/run
