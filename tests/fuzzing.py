"""The fuzz harness: a fixed regression set on every run; random exploration only when asked for.

Every ``@fuzz`` test runs:

* ``[fixed]``: hypothesis derandomized, plus the test's explicit examples: the same examples on
  every run. This is all the README's test command (and ``.ci/run``) runs: the gate draws no seed,
  so it fails on a change, never on a draw. What exploration finds goes into the examples;
* ``[seeded]``, only when ``LOGPARSE_FUZZ_SEED`` names a seed (``make fuzz`` draws a fresh one):
  new examples from that seed. The pytest header prints it and every failure says how to replay it
  (``LOGPARSE_FUZZ_SEED=N make fuzz``).

Every other hypothesis test of the suite follows the same rule through the settings profile loaded
here: derandomized in the gate, drawing from the run's seed under ``make fuzz`` (which passes it
to hypothesis as ``--hypothesis-seed``).

Budgets are CI-sized (all the fuzz tests together stay within about a minute on two cores).
``LOGPARSE_FUZZ_EXAMPLES=N`` runs N examples in each seeded run of the cheap tests, and N/10 in
each seeded run of the read-back tests (one example there is several files through every
command); the fixed set keeps its size.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, seed, settings

SEED_ENV = "LOGPARSE_FUZZ_SEED"
EXAMPLES_ENV = "LOGPARSE_FUZZ_EXAMPLES"
#: The examples of a cheap test's seeded run that LOGPARSE_FUZZ_EXAMPLES replaces.
CHEAP_EXAMPLES = 150


def _run_seed() -> int | None:
    raw = os.environ.get(SEED_ENV, "").strip()
    return int(raw) if raw else None


#: The seed ``make fuzz`` (or a replay) asked for; None in the gate, which draws none.
SEED = _run_seed()
RUNS = ("fixed",) if SEED is None else ("fixed", "seeded")

# Loaded before any test module builds its settings (conftest imports this module first), so every
# hypothesis test inherits it. The database is off in both: a run replays nothing of earlier runs.
settings.register_profile("gate", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile("gate" if SEED is None else "explore")


class Tally:
    """What this run's fuzz tests did (the pytest summary prints it): fuzzed inputs parsed by the
    library, fuzzed inputs ingested and read back by every command, stored launches read back."""

    def __init__(self) -> None:
        self.tests = self.parsed = self.inputs = self.launches = 0

    def line(self) -> str:
        return (
            f"fuzz: {self.parsed} mutated real input(s) parsed; {self.inputs} ingested and read back, "
            f"{self.launches} stored launch(es) read back through every command; {seed_line()}"
        )


TALLY = Tally()


def seed_line() -> str:
    if SEED is None:
        return "fuzz: the fixed regression set only, no seed drawn (`make fuzz` explores with a fresh seed)"
    return f"fuzz seed: {SEED} (replay with {SEED_ENV}={SEED} make fuzz)"


def replay_hint(run: str) -> str:
    if run == "fixed":
        return "fuzz: the fixed (derandomized) regression set: this fails on every run"
    return f"fuzz: replay this run with {SEED_ENV}={SEED} make fuzz (examples: ${EXAMPLES_ENV} or the CI budget)"


def examples_for(run: str, fixed: int, seeded: int, cost: int = 1) -> int:
    """How many examples a run draws: ``fixed`` for the regression set, ``seeded`` (or
    $LOGPARSE_FUZZ_EXAMPLES / ``cost``) for the seeded run."""
    if run == "fixed":
        return fixed
    asked = os.environ.get(EXAMPLES_ENV, "").strip()
    return max(1, int(asked) // cost) if asked else seeded


def fuzz(
    *strategies: Any,
    fixed: int = CHEAP_EXAMPLES,
    seeded: int = CHEAP_EXAMPLES,
    cost: int = 1,
    examples: tuple[tuple, ...] = (),
) -> Callable[[Callable], Callable]:
    """``@given(*strategies)`` as a pytest test run once per entry of :data:`RUNS`.

    ``examples`` are explicit examples run in both runs; ``cost`` scales $LOGPARSE_FUZZ_EXAMPLES
    down for tests whose examples are expensive, and such tests (cost > 1) report the failing
    example as drawn: shrinking a plan of a few mutations of a real log through every command
    takes minutes and the plan is already short and replayable."""
    phases = tuple(Phase) if cost == 1 else tuple(p for p in Phase if p is not Phase.shrink)

    def decorate(body: Callable) -> Callable:
        def test(fuzz_run: str) -> None:
            run = given(*strategies)(body)
            for args in examples:
                run = example(*args)(run)
            run = settings(
                max_examples=examples_for(fuzz_run, fixed, seeded, cost),
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=fuzz_run == "fixed",
                database=None,  # a run is its seed: nothing replayed from earlier runs
                print_blob=False,
                phases=phases,
            )(run)
            if fuzz_run == "seeded":
                run = seed(SEED)(run)
            TALLY.tests += 1
            try:
                run()
            except BaseException as exc:
                exc.add_note(replay_hint(fuzz_run))
                raise

        # Not functools.wraps: pytest would read the body's parameters through __wrapped__.
        test.__name__, test.__qualname__ = body.__name__, body.__qualname__
        test.__doc__, test.__module__ = body.__doc__, body.__module__
        return pytest.mark.fuzz(pytest.mark.parametrize("fuzz_run", RUNS)(test))

    return decorate


def seeded_random(name: str) -> random.Random:
    """A ``random.Random`` for a non-hypothesis fuzz loop: from the run's seed and the loop's name."""
    return random.Random(f"{SEED}:{name}")
