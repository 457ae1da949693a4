"""What a run of ingests did to the store, counted as the store sees it.

Each merge reports, for every launch it writes or leaves as it was, the stored launches it
replaces and whether its content changed (``Result.lineage``).  Followed through a run in order,
that says what the store gained, whatever the inputs did on the way: a launch one input added and
a later input united with another launch is one launch added; a launch two inputs hold and leave
as they found it is one launch unchanged; two launches already stored that a piece of the run
shows to be one are counted as ``united`` (the store holds one fewer).  So after a run the store
holds ``added - united`` launches more than before it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

#: One launch written (or found unchanged) by a merge: its id, the stored ids it replaces (its own
#: among them when it was stored), and whether its content changed.
Step = tuple[str, tuple[str, ...], bool]


@dataclass
class RunTally:
    """The launches a run wrote: each with the launches stored before the run it stands for."""

    before: dict[str, frozenset[str]] = field(default_factory=dict)  # launch id -> stored ids before the run
    changed: dict[str, bool] = field(default_factory=dict)

    def follow(self, steps: Iterable[Step]) -> RunTally:
        for final, replaced, changed in steps:
            was: set[str] = set()
            for lid in replaced:
                if lid in self.before:  # written earlier in the run: stands for what it stood for
                    was |= self.before.pop(lid)
                    changed = self.changed.pop(lid) or changed
                else:  # stored before the run
                    was.add(lid)
            self.before[final] = frozenset(was)
            self.changed[final] = changed
        return self

    @property
    def added(self) -> int:
        """Launches the store did not hold before the run, in any form."""
        return sum(1 for was in self.before.values() if not was)

    @property
    def updated(self) -> int:
        """Launches the store held that the run changed (or united with another)."""
        return sum(1 for lid, was in self.before.items() if was and self.changed[lid])

    @property
    def unchanged(self) -> int:
        return sum(1 for lid, was in self.before.items() if was and not self.changed[lid])

    @property
    def united(self) -> int:
        """Launches stored before the run that are now part of another one."""
        return sum(len(was) - 1 for was in self.before.values() if was)
