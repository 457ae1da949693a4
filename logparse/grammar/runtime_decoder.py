"""The fast stage's decoder of runtime lines, generated from each engine's spec of them.

Each engine writes the shapes of its runtime lines (SGLang's ``Decode batch``/``Prefill batch``,
vLLM's ``Avg prompt throughput: … GPU KV cache usage: …``) as data in
``grammars/<engine>/runtime.toml``: per shape its head, its fields in order (name, label text,
type, unit), the separator between them and its tail.  This module is the one place that turns a
shape into code:

* :meth:`Shape.pattern`: the regexp of the whole message (no capture group, ASCII only, Rust's
  regex crate and Python's ``re`` alike), which polars runs as a DFA to *prove* a line;
* :func:`field_exprs`: the polars expressions that read the fields of proven lines by splitting
  them at the separator and cutting each piece's label and unit (measured: several times faster
  than capture groups, ``str.extract_groups``), and :func:`holds_expr`, whether every figure is
  within its bound (:func:`logparse.grammar.bounds.bound_of`);
* :meth:`Shape.render`: a message of the shape from values (the property tests draw them);
* for the other stages, what they need of the lines' words: :func:`readers` (the regexps an
  engine's Transformer finds each field's value with, in a message of any wording),
  :func:`family_word` and :func:`family_start` (what a line of a family starts with: a cheap
  pre-filter, a bare message's start), :func:`label`.

A line no shape proves, or whose figures are out of their bounds, is the grammar's to read
(``grammars/<engine>/line.lark``): the grammar reads every wording, the decoder only the common
ones, and ``tests/test_runtime_decoder.py`` checks that both agree on random lines of every shape
and on near misses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from logparse.data import tables
from logparse.grammar import bounds

#: The value of each field type, as a regexp.  Integers and the integer part of decimals have at
#: most 12 digits (below every bound's upper limit but the narrow ones, checked by value).
VALUE = {
    "int": "[0-9]{1,12}",
    "float": r"[0-9]{1,12}\.[0-9]{1,12}",
    "percent": r"[0-9]{1,12}\.[0-9]{1,12}%",
    "bool": "(?:True|False)",
}
#: What the value regexps above guarantee of a number: ``0 <= value < LIMIT``.
LIMIT = 10**12
#: The value of each field type as the grammar reads it (:func:`readers`), captured: looser than
#: :data:`VALUE` (any digits, any length: the grammar reads every line, and the bounds of
#: :mod:`logparse.grammar.bounds` then set an odd figure aside).
READ = {"int": r"(\d+)", "float": r"([\d.]+)", "percent": r"([\d.]+)%", "bool": "(True|False)"}


@dataclass(frozen=True)
class Field:
    """One field of a shape: ``label`` + value (+ ``unit``)."""

    name: str
    label: str
    type: str
    unit: str = ""
    #: the label as every wording prints it, a regexp (the grammar's reading), where wordings differ
    #: in a word the fast stage does not prove (``[A-Z]+ KV cache usage: ``: the device, vLLM 0.30.0+)
    reads: str = ""

    def pattern(self) -> str:
        return re.escape(self.label) + VALUE[self.type] + re.escape(self.unit)

    def read_label(self) -> str:
        """The regexp of the label the grammar reads (:attr:`reads`, else the label itself)."""
        return self.reads or re.escape(self.label)

    def bound(self) -> bounds.Bound | None:
        """The bound a value must be checked against (None: the value's regexp implies it)."""
        if self.type == "bool":
            return None
        b = bounds.bound_of(self.name)
        if b.lo <= 0 and b.hi >= LIMIT - 1 and not (b.whole and self.type != "int"):
            return None
        return b


@dataclass(frozen=True)
class Shape:
    """One wording of a runtime line (an entry of ``grammars/<engine>/runtime.toml``)."""

    engine: str
    family: str
    name: str
    head: str
    fields: tuple[Field, ...]
    sep: str = ", "
    tail: str = ""
    lead: str = ""
    sample: str = ""
    since: str = ""
    until: str = ""

    def pattern(self) -> str:
        """The regexp of the whole message of this shape (no anchors, no capture group)."""
        body = re.escape(self.sep).join(f.pattern() for f in self.fields)
        return self.lead + re.escape(self.head) + body + re.escape(self.tail)

    def render(self, values: dict[str, Any], lead: str = "") -> str:
        """The message of this shape with ``values`` (text as given, numbers as Python writes them)."""
        parts = []
        for f in self.fields:
            v = values[f.name]
            text = v if isinstance(v, str) else (str(v) if f.type != "percent" else f"{v}%")
            parts.append(f"{f.label}{text}{f.unit}")
        return lead + self.head + self.sep.join(parts) + self.tail

    def field(self, name: str) -> Field:
        """The field called ``name``."""
        return next(f for f in self.fields if f.name == name)

    def literal(self) -> str:
        """The longest text every line of the shape holds at a fixed place after its lead: a cheap
        pre-filter (``str.contains(literal=True)``) before the regexp."""
        return self.head + self.fields[0].label


def _shape(engine: str, entry: dict[str, Any]) -> Shape:
    fields = tuple(
        Field(f["name"], f["label"], f["type"], f.get("unit", ""), f.get("reads", "")) for f in entry["fields"]
    )
    shape = Shape(
        engine,
        entry["family"],
        entry["name"],
        entry["head"],
        fields,
        entry.get("sep", ", "),
        entry.get("tail", ""),
        entry.get("lead", ""),
        entry.get("sample", ""),
        entry.get("since", ""),
        entry.get("until", ""),
    )
    texts = [f.label for f in fields] + [f.unit for f in fields] + [shape.head.removesuffix(shape.sep)]
    if any(shape.sep in t for t in texts) or any(f.type not in VALUE for f in fields):
        raise ValueError(f"runtime shape {engine}/{shape.name}: a label holds the separator, or an unknown type")
    return shape


@cache
def shapes(engine: str) -> tuple[Shape, ...]:
    """The runtime shapes of an engine (``grammars/<engine>/runtime.toml``), in the file's order
    (none for an engine without the file: it has no runtime lines, or none the stages read)."""
    filename = f"{engine}/runtime.toml"
    if not tables.has(filename):
        return ()
    return tuple(_shape(engine, e) for e in tables.entries(filename, "shape"))


def shape(engine: str, name: str) -> Shape:
    """The shape called ``name`` of an engine."""
    return next(s for s in shapes(engine) if s.name == name)


def families(engine: str) -> dict[str, tuple[Shape, ...]]:
    """The shapes of each family (event kind) of an engine."""
    out: dict[str, list[Shape]] = {}
    for s in shapes(engine):
        out.setdefault(s.family, []).append(s)
    return {k: tuple(v) for k, v in out.items()}


def family_pattern(family: tuple[Shape, ...]) -> str:
    """One regexp of the messages of every shape of a family (no capture group)."""
    return "(?:" + "|".join(s.pattern() for s in family) + ")"


def field_exprs(text, shape: Shape, names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The values of the fields of ``shape`` (``names``: only those) in ``text``, a polars
    expression of lines that :meth:`Shape.pattern` proved (whatever comes before the message holds
    neither the separator nor the shape's first label): ``{name: expr}``, ints as Int64, decimals and
    percents as Float64, bools as Boolean."""
    import polars as pl

    wanted = [(k, f) for k, f in enumerate(shape.fields) if names is None or f.name in names]
    if not wanted:
        return {}
    offset = 1 if shape.head.endswith(shape.sep) else 0
    last = max(k for k, _ in wanted) + offset
    body = text.str.strip_suffix(shape.tail) if shape.tail else text
    pieces = body.str.split_exact(shape.sep, last)
    out = {}
    for k, f in wanted:
        piece = pieces.struct.field(f"field_{k + offset}")
        if k + offset == 0:
            cut = piece.str.find(shape.literal(), literal=True) + len(shape.literal())
        else:
            cut = pl.lit(len(f.label))
        value = piece.str.slice(cut)
        unit = f.unit + ("%" if f.type == "percent" else "")
        if unit:
            value = value.str.strip_suffix(unit)
        if f.type == "bool":
            out[f.name] = value == "True"
        else:
            out[f.name] = value.cast(pl.Int64 if f.type == "int" else pl.Float64, strict=False)
    return out


def holds_expr(values: dict[str, Any], shape: Shape):
    """Whether every figure of ``values`` (:func:`field_exprs`) is within its bound (a polars
    expression; True where no field needs a check)."""
    import polars as pl

    ok = pl.lit(True)
    for f in shape.fields:
        b = f.bound()
        if b is None or f.name not in values:
            continue
        if b.whole and f.type != "int":
            return pl.lit(False)
        ok = ok & values[f.name].is_between(b.lo, b.hi).fill_null(False)
    return ok


def _common_start(family: tuple[Shape, ...]) -> str:
    """The common start of a family's shapes' heads and first labels (after their leads)."""
    starts = [s.head + s.fields[0].label for s in family]
    common = starts[0]
    for s in starts[1:]:
        while not s.startswith(common):
            common = common[:-1]
    return common


def family_word(engine: str, family: str) -> str:
    """What every line of a family holds first after its lead (the common start of its shapes'
    heads and first labels, to the end of a word): ``Decode batch``, ``Avg prompt throughput:``."""
    return _common_start(families(engine)[family]).rstrip(" ,.")


def family_start(engine: str, family: str) -> str:
    """The regexp of what a message of a family starts with: one of its shapes' leads (optional
    where a shape has none), then the common start of its heads and first labels
    (``(?:Engine [0-9]{3}: )?Avg\\ prompt\\ throughput:\\ ``; no capture group)."""
    shapes_ = families(engine)[family]
    leads = sorted({s.lead for s in shapes_ if s.lead})
    lead = ""
    if leads:
        lead = "(?:" + "|".join(leads) + ")" + ("?" if any(not s.lead for s in shapes_) else "")
    return lead + re.escape(_common_start(shapes_))


def family_starts(engine: str) -> tuple[str, ...]:
    """:func:`family_start` of each family of an engine, in the spec's order."""
    return tuple(family_start(engine, f) for f in families(engine))


@cache
def readers(engine: str, family: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """How the grammar reads the fields of a family's lines, whatever their wording: per field name
    (in the order the shapes first give it), a regexp that finds its value anywhere in a message
    (any label the shapes give the name, :data:`READ`'s value, the unit), group 1 the value's text.
    A field a line does not hold is not found: each wording holds its own subset."""
    labels: dict[str, list[str]] = {}
    first: dict[str, Field] = {}
    for s in families(engine)[family]:
        for f in s.fields:
            known = first.setdefault(f.name, f)
            if (known.type, known.unit) != (f.type, f.unit):
                raise ValueError(f"runtime field {engine}/{f.name}: two types or units in {family}")
            found = labels.setdefault(f.name, [])
            if f.read_label() not in found:
                found.append(f.read_label())
    value = {name: READ[f.type] + re.escape(f.unit) for name, f in first.items()}
    return tuple((name, re.compile("(?:" + "|".join(alts) + ")" + value[name])) for name, alts in labels.items())


def label(engine: str, name: str) -> str:
    """The label of field ``name`` in an engine's shapes (``running_req`` -> ``#running-req: ``);
    every shape that has the field gives it the same label."""
    found = {f.label for s in shapes(engine) for f in s.fields if f.name == name}
    if len(found) != 1:
        raise KeyError(f"runtime field {engine}/{name}: labels {sorted(found)}")
    return found.pop()
