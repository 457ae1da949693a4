"""The engine interface: what logparse asks of an inference engine, whatever the engine.

An engine is one folder, ``logparse/engines/<name>/``, whose package defines ``ENGINE``, an instance of
a subclass of :class:`Engine`; :mod:`logparse.engines` finds the folders and registers them.  Every
other module asks the registry (``engines.of(launch)``, ``engines.get(name)``, iterating
``engines.all()``) and calls the methods below; none tests an engine's name.

The interface follows the stages data flows through (``ARCHITECTURE.md``):

* **naming and releases** (rank −1): ``name``, ``label``, the releases the engine has had and their
  order (:meth:`Engine.releases`, :meth:`Engine.release_line`), its flags' names;
* **lines** (the grammar stage): a per-stream :class:`Classifier` that claims the lines carrying the
  engine's own layers, and the event kinds the engine's grammar emits (:meth:`Engine.event_kinds`);
* **launches**: an :class:`Assembler` per stream and launch, turning events into a
  :class:`~logparse.launches.model.Launch`;
* **budget**: the engine's sizing formula per era (:meth:`Engine.budget`) and its own reserve;
* **reports**: explain, advice levers, plan, what-ifs.

A method an engine does not implement keeps the default here: a neutral answer ("not known", no
levers, no refusal), never a guess, so a small engine (the toy engine of the tests) is a few lines.

The parts are imported by the engine's package lazily, inside its methods, as the root package's API
facade does: importing the registry costs a few class definitions, not the engines' grammars.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from logparse.budget.model import Budget
    from logparse.grammar.events import Event
    from logparse.launches.model import Launch


@dataclass(slots=True)
class Claim:
    """A reading of one line: ``status`` parsed | noise | unrecognized, ``reason`` (the event kind, the
    noise category or why unrecognized), ``parsed`` (``(prefix, gpu, (kind, fields, form))`` when
    parsed), the cleaned ``text``; ``strength``: how sure the engine is that a line without any engine's
    layers is its own (:data:`STRENGTH`), when several engines read one line; ``engine``: the engine
    whose grammar read it (None: the stream's classifier itself); ``opens``: the record the line opens
    on its stream (``traceback``, or ``continuation``: a wrapped line of the engine's goes on)."""

    status: str
    reason: str
    parsed: Any = None
    text: str = ""
    strength: int = 0
    engine: str | None = None
    opens: str | None = None


@dataclass(frozen=True, slots=True)
class RuntimeTerms:
    """What an engine's runtime lines call the figures every engine's runtime aggregate has
    (:class:`logparse.launches.runtime.RuntimeAgg`), for the reports: a launch's runtime reads in its
    own engine's words (SGLang's ``#running-req``, vLLM's preemptions).  The defaults are plain words."""

    #: one runtime line (``batch line``); a count says ``{line}(s)``, a heading ``{line}s``
    line: str = "runtime line"
    running: str = "running requests"
    queue: str = "waiting requests"
    #: the share of the KV cache in use
    usage: str = "KV cache usage"
    #: the tokens in the pool
    tokens: str = "tokens"
    #: a request the engine took back for want of KV cache, and the verb
    retraction: str = "retraction"
    retracted: str = "retracted"


#: How sure an engine is that a bare line (no engine's layers in front) is its own, strongest last:
#: a near miss, a near miss of a line that starts with the engine's own first words, a parse into a
#: kind any Python program prints (an exception), a parse of a line that starts with the engine's first
#: words, and a parse into one of the engine's own kinds of a line holding one of its anchors.
STRENGTH = {"near_miss": 0, "near_miss_own_words": 1, "generic": 2, "own_words": 3, "own_kind": 4}


class Classifier(Protocol):
    """The engine's part of classifying one stream's lines (its state per stream: a wrapped line going on).

    The stream's classifier (:mod:`logparse.grammar.classify`) owns what every Python program prints
    (tracebacks, warnings, known noise) and asks each engine, in the registry's order, at each step;
    a step returns a :class:`Claim`, or None when the line is not the engine's at that step.  ``m`` is
    the match of the engine's own prefix at the start of the line (:meth:`has_prefix`), or None."""

    #: the engine's name (:attr:`Engine.name`): the claims it makes carry it
    engine: str

    @property
    def continuing(self) -> bool:
        """A wrapped line of the engine's is open on this stream."""
        ...

    def line_start(self, text: str, exact: bool) -> int | None:
        """Where one of the engine's lines begins inside ``text`` (something glued in front of it);
        ``exact``: the engine's whole prefix must read there, else the start of its stamp is enough."""
        ...

    def reset(self) -> None:
        """A line of another record arrived: no wrapped line goes on."""
        ...

    def layered(self, text: str) -> Claim | None:
        """A line that carries the engine's own layers in front of its message, read without any state
        of the stream (the layers say whose line it is)."""
        ...

    def has_prefix(self, text: str) -> Any:
        """The engine's own prefix at the start of the line (a match), or None."""
        ...

    def starts_line(self, text: str) -> bool:
        """Does one of the engine's lines begin here (its prefix, its first words)?"""
        ...

    def continuation(self, text: str) -> Claim | None:
        """The next piece of a line of the engine's that a terminal or a paste wrapped (asked only while
        :attr:`continuing`, for a line that is no line of its own); None: the wrapped line ended."""
        ...

    def prefixed(self, text: str, m: Any) -> Claim | None:
        """A line with the engine's own prefix that the engine reads quickly (its runtime lines)."""
        ...

    def bare(self, text: str) -> Claim | None:
        """A line with no engine's layers that the engine reads as its own by its first words."""
        ...

    def contest(self, text: str) -> Claim | None:
        """The engine's reading of a bare line another engine claims by its words (by its anchors)."""
        ...

    def anchored(self, text: str) -> bool:
        """The line names one of the engine's anchors (a figure or an outcome the engine prints)."""
        ...

    def tracked(self, text: str, m: Any) -> Claim | None:
        """A line that names one of the engine's anchors: parsed, or a near miss (or known noise)."""
        ...

    def message(self, msg: str) -> Any:
        """A Python warning's message read by the engine's grammar (``(prefix, gpu, event)``), or None."""
        ...

    def exception(self, text: str) -> Claim | None:
        """An exception line (``SomeError: …``) the engine's grammar reads, with a strength."""
        ...

    def untracked(self, text: str, m: Any) -> Claim | None:
        """A line with the engine's prefix that names nothing tracked: its own noise."""
        ...


class Assembler(Protocol):
    """The events of one launch of one stream, assembled into a :class:`Launch`."""

    source: str
    stream: tuple
    events: list[Event]
    #: the launch's place among the launches of its input (the parse loop numbers them)
    order: int

    def starts_new_launch(self, ev: Event) -> bool:
        """Does this event begin another launch (a restart on the same stream)?"""
        ...

    def add(self, ev: Event) -> None: ...

    def is_launch(self) -> bool:
        """Do the events make a launch (else a piece of one that began before the input)?"""
        ...

    def only_generic(self) -> bool:
        """Only lines any program prints (a traceback, uvicorn's), no runtime line: they may belong to a
        launch of another engine that opens on the stream next (:meth:`Assembly.adopts_head`)."""
        ...

    def continue_wrapped(self, piece: str) -> None:
        """The next piece of the last line, which a terminal or a paste wrapped."""
        ...

    def merge_runtime(self, agg: dict[str, Any]) -> None:
        """Add a runtime aggregate the fast path decoded in bulk."""
        ...

    def finish(self, version: str | None = None, ordinal: int | None = None) -> Launch:
        """The launch; ``version``: the release the user says it is; ``ordinal``: its place in the input."""
        ...


class Assembly(Protocol):
    """How the engine's events become launches on a stream: the parse loop's questions to the engine
    (one object per parse, so no per-event import)."""

    def new(self, source: str, stream: tuple) -> Assembler:
        """A new assembler of one launch of the engine on ``stream``."""
        ...

    def opens(self, ev: Event) -> bool:
        """Can this event open a launch of the engine (on a stream where none is open)?"""
        ...

    def holds(self, ev: Event) -> bool:
        """Keep this event back while no launch of the engine is open on its stream (a launch that
        opens later takes it), rather than dropping it."""
        ...

    def marks_stream(self, ev: Event) -> bool:
        """Does this event make the stream the engine's (generic lines after it are its lines)?"""
        ...

    def adopts_head(self, ev: Event) -> bool:
        """When a launch of the engine opens with ``ev``, does it take the generic lines the stream
        printed before (an input that begins inside the launch)?"""
        ...

    def owns_generic(self, prefix: dict[str, Any]) -> bool:
        """A generic event (an exception, uvicorn's line) whose line carries these layers is the
        engine's; without them it goes to the engine the stream printed last."""
        ...

    def place(
        self, ev: Event, prefix: dict[str, Any], gpu: int | None, own: bool, outer: str | None, mtime: float | None
    ) -> None:
        """Put the line's layers on the event (ranks, process, its own stamp); ``own``: the engine's
        grammar read the line (the layers are the engine's); ``outer``: the record's time (UTC ISO
        text), ``mtime``: the input's modification time (for a stamp without its year)."""
        ...

    def date(self, ev: Event, outer: str | None) -> None:
        """Complete the event's time from the record's (``outer``, UTC), after its own was checked."""
        ...

    def is_batch(self, ev: Event) -> bool:
        """Is the event one of the engine's runtime batch lines (counted per second by the store)?"""
        ...


class Engine:
    """One inference engine (see the module documentation).  Subclasses set the class attributes and
    override what they know."""

    #: The engine's name in data (``launches.engine``, ``--engine``): lower case, one word.
    name: ClassVar[str] = ""
    #: The engine's name as a person writes it (``vLLM``).
    label: ClassVar[str] = ""
    #: The article before the label ("an SGLang release", "a vLLM release").
    article: ClassVar[str] = "a"
    #: The order in which engines are asked about a line: lower first (an engine whose layers are
    #: unmistakable goes before one that reads bare lines by their words).
    claim_order: ClassVar[int] = 100
    #: Launches that name no engine are this engine's (stores and outputs written before a second
    #: engine existed): exactly one engine says so.
    names_unnamed: ClassVar[bool] = False
    #: The flag that sets the share of memory the engine sizes its KV pool from.
    fraction_flag: ClassVar[str | None] = None
    #: What that fraction is a share of, in words.
    fraction_share_of: ClassVar[str] = ""
    #: The flag of the longest request (context) the engine serves.
    context_flag: ClassVar[str] = "context_length"
    #: The 8-bit KV cache dtype the engine's ``--kv-cache-dtype`` names.
    fp8_kv_dtype: ClassVar[str | None] = None
    #: What the engine calls its launch arguments.
    args_name: ClassVar[str] = "argument"
    #: The kinds of the engine's runtime lines (they repeat; not part of a launch's identity).
    runtime_kinds: ClassVar[frozenset[str]] = frozenset()
    #: What its runtime lines call their figures, for the reports.
    runtime_terms: ClassVar[RuntimeTerms] = RuntimeTerms()
    #: The kinds of line a start of the engine begins with: a stored piece of lines holding none of them
    #: continues a launch that began before it.
    opening_kinds: ClassVar[frozenset[str]] = frozenset()
    #: The kinds of line a start prints its whole arguments on, once per start: two starts whose lines
    #: differ there are different launches, whatever other lines they share.
    start_args_kinds: ClassVar[frozenset[str]] = frozenset()
    #: The Python logger names of the engine's own lines (JSON logging records: ``vllm.engine``).
    logger_names: ClassVar[tuple[str, ...]] = ()

    def __repr__(self) -> str:
        return f"<engine {self.name}>"

    # ----------------------------------------------------------------- naming and releases
    def event_kinds(self) -> Any:
        """The event kinds the engine's grammar emits (its ``Kind``, a ``StrEnum``), or None."""
        return None

    def releases(self) -> tuple[str, ...]:
        """The engine's releases logparse knows, oldest first."""
        return ()

    def release_line(self) -> Any:
        """The releases as an ordered line (``index``, ``in_range``, ``is_release``), or None."""
        return None

    def version_text(self, launch: Launch) -> str:
        """The launch's release as its header names it (``vLLM 0.8.5 (V1)``)."""
        version = launch.engine_version or launch.engine_version_range or "unknown version"
        return f"{self.label} {version}"

    def version_cell(self, version: str | None) -> str:
        """The release as a table cell shows it: prefixed with the engine's label (an engine whose
        launches may name no engine shows the bare release, as every table did before)."""
        return version or "?" if self.names_unnamed else f"{self.label} {version or '?'}"

    def fraction_of(self, launch: Launch) -> float | None:
        """The launch's value of :attr:`fraction_flag`."""
        return getattr(launch, self.fraction_flag, None) if self.fraction_flag else None

    def context_of(self, launch: Launch) -> int | None:
        """The longest request the launch serves, as the engine derived it at start."""
        return launch.context_len

    def refuses_kv_below_one_request(self) -> bool:
        """Does the engine refuse to start when its KV cache holds no request of the longest length?"""
        return False

    def arg_default(self, field: str, release: str) -> Any:
        """The default of launch argument ``field`` in ``release``: a value, or one of the markers of
        :mod:`logparse.grammar.releases` (``DERIVED``, ``MISSING``, ``REQUIRED``); ``ValueError`` when the
        engine's defaults for that release are not known."""
        raise ValueError(f"{self.label}: no argument defaults known")

    def json_line_tag(self, proc: Any, pid: Any) -> str | None:
        """The layer the engine prints in front of a line a JSON logging record carries (its process
        tag), or None when the record's fields do not name one."""
        return None

    # ----------------------------------------------------------------- its lines, as the sources see them
    def line_start_patterns(self) -> tuple[str, ...]:
        """Regular expressions (Python ``re`` sources) of where the engine's text starts: its prefixes
        and its bare messages' first words (a wrapper layer is peeled only when one follows it)."""
        return ()

    def glued_start(self) -> tuple[bytes, Any] | None:
        """Text glued in front of the engine's prefix is cut by the sources (a ``node3: `` label): the
        prefix's first byte and its compiled bytes pattern, or None when the engine cuts it itself."""
        return None

    def owns_process_tag(self, name: str) -> bool:
        """Is a ``(NAME pid=N)`` tag in front of a line the engine's own process tag (not a Ray actor's
        layer to peel)?"""
        return False

    # ----------------------------------------------------------------- lines and launches
    def classifier(self) -> Classifier:
        """A new classifier of this engine's lines for one stream."""
        raise NotImplementedError(f"{self.name}: no classifier")

    def assembly(self) -> Assembly:
        """How the engine's events become launches (one per parse)."""
        raise NotImplementedError(f"{self.name}: no assembly")

    def fast_reader(self, src: Any, **options: Any) -> Any:
        """The engine's fast stage over ``src`` (its ``.items()``: records and the items of
        :mod:`logparse.grammar.fast`, in input order, for :func:`logparse.pipeline.parse`), or None
        when it has none for this input's format.  Options: ``block_bytes``, ``stamps`` (keep the
        stamp of each batch line); its lines are numbered from 1 (the loop shifts a window's)."""
        return None

    def owns_events(self, events: list[Event]) -> bool:
        """Are these stored events (a launch's lines) this engine's?"""
        return False

    # ----------------------------------------------------------------- budget and reports
    def budget(self, launch: Launch) -> Budget:
        """The launch's memory budget: the engine's own sizing formula of its era, replayed."""
        raise NotImplementedError(f"{self.name}: no budget")

    def reserve(self, launch: Launch, budget: Budget) -> Any:
        """What the engine's own default logic holds back for this launch (an ``EngineReserve``), or None."""
        return None

    # ----------------------------------------------------------------- reports (plan, advice, explain, diff, check, metrics)
    #: The place of the engine's plan among every engine's (``plan --engine both``), lower first; None:
    #: the engine does not plan.
    plan_order: ClassVar[int | None] = None
    #: The plan's flags (fields of :class:`~logparse.reports.plan_types.PlanFlags`) that only this
    #: engine takes; a plan of another engine names them as not its own.
    plan_flags: ClassVar[tuple[str, ...]] = ()
    #: The engine's plan sizes the KV pool from (a share of) the free memory before the weights, which
    #: each launch's log measures: the plan may take that memory from the deployment's stored launches.
    plan_sized_from_free_memory: ClassVar[bool] = False

    def plan(self, cfg: Any, flags: Any, mem: Any, launch: Launch | None, budget: Budget | None) -> Any:
        """The engine's plan (an :class:`~logparse.reports.plan_types.EnginePlan`) of a model config for
        the flags, on a GPU (``mem``), calibrated on one of its launches and its budget when given."""
        raise NotImplementedError(f"{self.name}: no plan")

    def plan_flag_instead(self, flag: str) -> str:
        """What the engine's plan uses in place of another engine's own plan flag (in words)."""
        return "its own settings"

    def compare_plans(self, own: Any, other: Any) -> list[str]:
        """Why the engine's plan (``own``) gives another pool than ``other``, a plan of another engine
        for the same model and GPU, term by term; [] when the engine does not say."""
        return []

    def gpu_total_gb(self, launch: Launch) -> float | None:
        """The GPU's total memory (GiB per rank) as the launch's log prints it; None when it prints none."""
        return None

    def levers(self, ctx: Any) -> list[Any]:
        """The engine's recommendations for one launch (:class:`~logparse.reports.advice_core.Ctx`), in
        the engine's order, before the advice ranks them; [] when the engine advises nothing."""
        return []

    def fp8_kv_to_start(self, launch: Launch) -> str | None:
        """The 8-bit KV dtype the advice adds on top of each option that starts a failed launch (every
        release the launch may be accepts it); None when the engine's advice adds none."""
        return None

    def kv_bound_words(self, launch: Launch, budget: Budget) -> str | None:
        """What sets the launch's KV tokens (memory, in the engine's terms), in words; None: not known."""
        return None

    def reserve_line(self, ctx: Any) -> str | None:
        """The advice's line on the engine's own reserve (``ctx.reserve``, known) against what the
        launch holds back; None when the engine says nothing of it."""
        return None

    def draft_line(self, ctx: Any) -> str | None:
        """The advice's line on a draft model that does not fit the engine's reserve for it, or None."""
        return None

    def explain(self, launch: Launch, budget: Budget, margin_gb: float | None, cfg: Any) -> Any:
        """The engine's explanation of a launch (an :class:`~logparse.reports.explain.Explanation`);
        None: the plain one (the budget, the ranks and the advice, no engine's own questions)."""
        return None

    def attribution(self, a: Launch, b: Launch, budget_a: Budget, budget_b: Budget) -> dict[str, Any] | None:
        """The attribution of the KV change between two launches of the engine (``diff``'s
        ``attribution``); None: the engine does not attribute one."""
        return None

    def likely_cause(self, attribution: dict[str, Any]) -> str | None:
        """The likely cause of a KV change between two of its launches when the engine words it from
        their attribution itself (``check``); None: the attribution's steps say it."""
        return None

    def fraction_side(self, launch: Launch, budget: Budget) -> dict[str, Any]:
        """The launch's fraction as a diff of two engines shows it: its flag (``name``), ``value``,
        ``source``, ``default`` and ``default_text``, what it is a share of (``share_of``, in words, and
        ``share_of_gb``)."""
        return {
            "name": self.fraction_flag,
            "value": self.fraction_of(launch),
            "source": None,
            "default": None,
            "default_text": "not known",
            "share_of": self.fraction_share_of or "not known",
            "share_of_gb": None,
        }

    def kv_tokens_are_slots(self, launch: Launch) -> bool:
        """Does the launch's KV token count count the pool's token slots (not requests that fit)?"""
        return launch.kv_tokens_definition is None

    def kv_tokens_count(self, launch: Launch) -> str:
        """What the launch's KV token count counts, in words."""
        definition = launch.kv_tokens_definition
        return "the token slots of the pool" if definition is None else definition

    def unquantized_load_line(self, launch: Launch) -> str | None:
        """Why the launch's weight-load line, naming no quantization, shows an unquantized checkpoint
        (the engine's load line of that release names a checkpoint's quantization), in words; None
        when the load line does not say."""
        return None

    # ----------------------------------------------------------------- end of reports

    # ----------------------------------------------------------------- cli, budget checks, launches, sources, store

    #: The per-rank memory figures the engine prints (:class:`~logparse.launches.model.RankMemory`
    #: fields), in the order the rank table of ``show`` and ``parse`` lists them after the rank.
    rank_figures: ClassVar[tuple[str, ...]] = ()
    #: What the memory waterfall of ``explain`` is, in the engine's own terms (after its title), or "".
    waterfall_note: ClassVar[str] = ""
    #: What ``history`` says of a launch whose arguments are not known, though a launch came before it
    #: (an engine that prints every argument at each start: their absence is worth saying); None: nothing.
    args_unknown_note: ClassVar[str | None] = None

    def explain_version_text(self, report: dict[str, Any]) -> str:
        """The release as the head of ``explain`` names it, from the explain report's document."""
        return f"{self.label} {report.get('engine_version') or 'unknown'}"

    def reassemble(self, events: list[Event], stream: tuple, version: str | None, ordinal: int | None) -> Launch:
        """The launch a parse of these stored lines (the union of every input's copy of it) assembles
        on ``stream``; ``version``: the release the user gave at ingest."""
        source = next((e.source for e in events if e.source), "")
        asm = self.assembly().new(source, tuple(stream))
        for ev in events:
            asm.add(ev)
        return asm.finish(ordinal=ordinal, version=version)

    def config_cell(self, cfg: Any, launch: Launch, budget: Budget, kv_dtype: str) -> Any:
        """A model config's bytes per token per rank (a :class:`logparse.budget.model_kv.Cell`) as the
        engine sizes its KV pool for this launch (its release, parallel sizes, ``kv_dtype``), or None
        when logparse does not know how the engine sizes it."""
        return None

    def implied_bytes_per_token(
        self, launch: Launch, budget: Budget
    ) -> tuple[float | None, float | None, float | None, str]:
        """(best, lo, hi) bytes per token per rank the launch's logged KV pool allows, and how they were
        read (all None, and why, when the log has no such figure)."""
        return None, None, None, "no KV pool figure logparse reads for this engine"

    # ----------------------------------------------------------------- end of cli, budget checks, launches, sources, store

    # ----------------------------------------------------------------- lines and launches (the parse loop)

    # ----------------------------------------------------------------- end of lines and launches
