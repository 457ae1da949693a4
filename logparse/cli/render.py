"""Human-readable output (rich) for parse results and launches."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logparse import engines
from logparse.cli.cells import FAST_TABLE_ROWS, for_terminal, plain_table_text, terminal_text
from logparse.cli.cells import fmt as _fmt
from logparse.cli.whole_tables import cell_text as _plain
from logparse.cli.whole_tables import console_width, print_whole
from logparse.figures import names as figure_names
from logparse.launches.figures import out_of_range_mark
from logparse.launches.model import Launch, ParseResult
from logparse.launches.times import iso_time
from logparse.text import console_style

OUTCOME_STYLE = {"ready": "bold green", "failed": "bold red", "incomplete": "bold yellow"}


from logparse.launches.model import rank_label  # noqa: E402  (re-exported for the CLI modules)


def terminal_launch(launch: Launch) -> Launch:
    """A copy of a launch to print: every text field (the ranks' too) through
    :func:`~logparse.cli.cells.terminal_text`.  Its events are left as they are: the timeline
    passes the cells it shows through it."""
    from copy import copy
    from dataclasses import fields

    shown = copy(launch)
    for f in fields(launch):
        if f.name != "events":
            setattr(shown, f.name, for_terminal(getattr(launch, f.name)))
    ranks = []
    for r in launch.ranks:
        rank = copy(r)
        rank.worker, rank.kv_dtype, rank.extra = for_terminal((r.worker, r.kv_dtype, r.extra))
        ranks.append(rank)
    shown.ranks = ranks
    return shown


def launch_header(launch: Launch) -> Text:
    t = Text()
    t.append(f"launch {launch.launch_id}  ", style="bold")
    t.append(launch.outcome, style=OUTCOME_STYLE.get(launch.outcome, ""))
    t.append(f"  {engines.of(launch).version_text(launch)}")
    if launch.model_path:
        t.append(f"  {launch.model_path}")
    sizes = [
        f"{k}={v}"
        for k, v in (("tp", launch.tp_size), ("dp", launch.dp_size), ("pp", launch.pp_size), ("ep", launch.ep_size))
        if v is not None
    ]
    if sizes:
        t.append("  " + " ".join(sizes))
    if launch.role:
        t.append(f"  {launch.role} server")
    where = [x for x in (launch.host, launch.unit, f"pid {launch.pid}" if launch.pid else None) if x]
    if where:
        t.append("  [" + " ".join(where) + "]", style="dim")
    return t


def fmt_value(v: Any, nd: int = 2) -> str:
    """A report cell: ``—`` for absent, thousands separators, ``nd`` decimals for floats."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return str(v)


def make_console() -> Console:
    """A console on stdout fitted to the terminal or ``$COLUMNS``; on a pipe unbounded and
    without trailing spaces (as :meth:`logparse.cli.output.Output.console` makes it)."""
    import sys

    from logparse.cli.layout import UNBOUNDED, StripTrailing, output_width

    width = output_width() or UNBOUNDED
    if sys.stdout.isatty():
        return report_console(width=width)
    return report_console(file=StripTrailing(sys.stdout), width=width)


def print_fitted(
    console: Console,
    title: str | None,
    columns: list,
    rows: list[list[str]],
    *,
    styled: Any = None,
    sections: list[bool] | None = None,
) -> None:
    """A table of plain cells fitted to the console's width (:func:`logparse.cli.layout.fit`);
    ``styled(i, cells)`` gives row ``i``'s cells (a dict by header) their styles; ``sections``:
    whether a row ends a section.  A large table is printed as plain aligned text."""
    from logparse.cli.layout import PLAIN_GAP, RICH_GAP, fit, shorten

    big = len(rows) > FAST_TABLE_ROWS
    fitted = fit(columns, rows, console_width(console), PLAIN_GAP if big else RICH_GAP)
    heads = [c.header for c in fitted.columns]
    if big:
        cells = [
            [shorten(v, w, "end") if c.wrap else v for v, w, c in zip(r, fitted.widths, fitted.columns)]
            for r in fitted.rows
        ]
        console.file.write(plain_table_text(title, heads, [c.right for c in fitted.columns], cells))
    else:
        table = Table(show_edge=False, pad_edge=False)
        for c in fitted.columns:
            table.add_column(c.header, justify="right" if c.right else "left", no_wrap=not c.wrap, overflow="fold")
        for i, r in enumerate(fitted.rows):
            shown = dict(zip(heads, r)) if styled is None else styled(i, dict(zip(heads, r)))
            table.add_row(*(shown[h] for h in heads), end_section=bool(sections and sections[i]))
        if title:
            console.print(Text(title, style="table.title"))
        print_rich_table(console, table)
    if fitted.note():
        console.print(Text(fitted.note() or "", style="dim"))


class _ReportConsole(Console):
    def on_broken_pipe(self) -> None:
        """Rich ends with exit 1 when the reader closes the pipe; the CLI ends such a command as a
        Unix filter does (:func:`logparse.cli.main`), so the closed pipe is passed on as it is."""
        with contextlib.suppress(OSError, ValueError, AttributeError):  # the rest goes nowhere, silently
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise BrokenPipeError(errno.EPIPE, "the reader closed the pipe")


def report_console(**options: Any) -> Console:
    """A rich console for reports: no highlighting, and no markup or emoji codes (a ``[bold]`` or a
    ``:smile:`` in a model path is text: see :mod:`logparse.cli.cells`)."""
    return _ReportConsole(highlight=False, markup=False, emoji=False, **(console_style() | options))


#: The header of each per-rank figure in the rank table (the engine says which it prints:
#: :attr:`~logparse.engines.base.Engine.rank_figures`); those not listed here are right-aligned figures.
RANK_HEADERS = {
    "worker": "worker",
    "avail_before_load_gb": "before load",
    "weights_gb": "weights",
    "avail_after_load_gb": "after load",
    "load_s": "load s",
    "activation_gb": "activation",
    "non_torch_gb": "non-torch",
    "kv_dtype": "KV dtype",
    "kv_tokens": "KV tokens",
    "kv_size_gb": "KV GiB",
    "avail_after_pool_gb": "after pool",
    "graph_gb": "graphs",
    "avail_after_graph_gb": "after graphs",
    "graph_s": "graph s",
}
#: Per-rank fields that are text, left-aligned (the rest are figures).
_RANK_TEXT = ("worker", "kv_dtype")


def rank_table(launch: Launch) -> Table:
    """The launch's per-rank memory: the figures its engine prints, one row per rank."""
    names = engines.of(launch).rank_figures
    mem = "CPU" if (launch.available_mem_kind == "cpu" or launch.device == "cpu") else "GPU"
    table = Table(title=f"per-rank {mem} memory (GiB)", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("rank", justify="left")
    for name in names:
        table.add_column(RANK_HEADERS.get(name, name), justify="left" if name in _RANK_TEXT else "right")
    for r in launch.ranks:
        table.add_row(rank_label(r), *(_rank_text(r, name) for name in names))
    return table


def _rank_text(rank: Any, name: str) -> Any:
    """One cell of the rank table: the worker as it is, the KV dtype without ``torch.``, else the figure."""
    if name == "worker":
        return rank.worker
    if name == "kv_dtype":
        return (rank.kv_dtype or "—").replace("torch.", "")
    return _rank_cell(rank, name)


def _rank_cell(rank: Any, name: str) -> str:
    """A rank's figure, or "out of range" where the log printed one that is (see the warnings)."""
    return "out of range" if out_of_range_mark(rank, name) else _fmt(getattr(rank, name))


def budget_line(budget: dict[str, Any]) -> Text:
    """The launch budget's headline, worded as every command words it."""
    unknown = budget.get("unknown") or {}

    def say(name: str, unit: str = "") -> str:
        v = budget.get(name)
        if v is None:
            return "not known (" + unknown.get(name, "not in this launch") + ")"
        return (f"{v:,}" if isinstance(v, int) else f"{v:.2f}") + unit

    t = Text("  budget: ", style="bold")
    t.append(f"KV tokens {say('kv_tokens')}, KV pool {say('kv_pool_gb', ' GiB')}, ")
    t.append(f"headroom {say('headroom_gb', ' GiB')}")
    if budget.get("binding_rank"):
        t.append(f" (binding rank {budget['binding_rank']})")
    if budget.get("headroom_gb") is None and budget.get("lowest_free_gb") is not None:
        t.append(f"; {budget['lowest_free_gb']:.2f} GiB free at the end")
    return t


#: Launch fields shown on the line under a launch's header when set (SGLang's arguments, vLLM's
#: figures): the ``show`` surface of :mod:`logparse.figures`.
LAUNCH_LINE_FIELDS = figure_names("show")


def lines_where(launch: Launch) -> str:
    """Where the launch's lines are: ``lines 12-69 of a.log``; a launch the store holds in several
    inputs says where it is in each (``lines 12-27 of a.log, 8-47 of b.log``: its ``launch_sources``,
    the input it names first, whose range its ``first_line`` / ``last_line`` are)."""
    if len(launch.line_ranges) <= 1:
        return f"lines {launch.first_line}-{launch.last_line} of {launch.source}"
    return "lines " + ", ".join(f"{lo}-{hi} of {src}" for src, lo, hi in launch.line_ranges)


def print_launch(console: Console, launch: Launch, budget: dict[str, Any] | None = None) -> None:
    console.print(launch_header(launch))
    when = f"started {iso_time(launch.started_at, launch.time_zone) or '?'}"
    if launch.ready_at:
        when += f", ready {iso_time(launch.ready_at, launch.time_zone)}"
    console.print(f"  {when}; {lines_where(launch)}", style="dim")
    if launch.outcome_evidence:
        console.print(f"  {launch.outcome} by {launch.outcome_evidence}", style="dim")
    if launch.sglang_version_range and not launch.sglang_version:
        console.print(f"  version range from the log: {launch.sglang_version_range}", style="dim")
    args = [f"{k}={getattr(launch, k)}" for k in LAUNCH_LINE_FIELDS if getattr(launch, k) not in (None, False)]
    if args:
        console.print("  " + ", ".join(args))
    if launch.ranks:
        print_rich_table(console, rank_table(launch))
    if budget is not None:
        console.print(budget_line(budget))
    if launch.max_total_num_tokens is not None:
        mem = (
            f", available_{launch.available_mem_kind or 'gpu'}_mem={_fmt(launch.available_mem_gb)} GiB"
            if launch.available_mem_gb is not None
            else ""
        )
        console.print(
            f"  max_total_num_tokens={_fmt(launch.max_total_num_tokens)}, max_prefill_tokens="
            f"{_fmt(launch.max_prefill_tokens)}, max_running_requests={_fmt(launch.max_running_requests_effective)}, "
            f"context_len={_fmt(launch.context_len)}{mem}"
        )
    if launch.hicache_host_gb is not None:
        console.print(
            f"  HiCache host pool: {launch.hicache_host_gb:.2f} GB (decimal) per rank"
            + (f", {launch.hicache_host_tokens:,} tokens" if launch.hicache_host_tokens else "")
        )
    rt = launch.runtime
    if rt.get("batch_lines"):
        words = engines.of(launch).runtime_terms
        console.print(
            f"  runtime: peak {words.running} {_fmt(rt.get('peak_running_req'))}, peak {words.usage} "
            f"{_fmt(rt.get('peak_token_usage'))}, peak {words.queue} {_fmt(rt.get('peak_queue_req'))}, "
            f"{words.retraction}s {rt.get('retractions', 0)}"
        )
    if launch.error:
        console.print(Text("  error: " + launch.error, style="red"))
    for w in launch.warnings:
        console.print(Text("  warning: " + w, style="yellow"))
    console.print()


def print_parse_result(
    result: ParseResult, budgets: list[dict[str, Any]], show_unrecognized: int = 10, console: Console | None = None
) -> None:
    console = console or make_console()
    for launch, budget in zip(result.launches, budgets):
        print_launch(console, terminal_launch(launch), for_terminal(budget))
    lc = result.lines
    console.print(
        f"{len(result.launches)} launch(es); {lc.total} lines: {lc.parsed} parsed, {lc.noise} noise, "
        f"{lc.unrecognized} unrecognized" + (f", {lc.other_units} of other units" if lc.other_units else "")
    )
    if result.unrecognized and show_unrecognized:
        console.print("unrecognized lines:", style="yellow")
        for u in result.unrecognized[:show_unrecognized]:
            console.print(Text(terminal_text(f"  {u.source}:{u.line_no}: {u.reason}: {u.text[:160]}")))
        if len(result.unrecognized) > show_unrecognized:
            console.print(f"  … and {len(result.unrecognized) - show_unrecognized} more (--show-unrecognized N)")
    for w in result.warnings:
        console.print(Text("warning: " + terminal_text(w), style="yellow"))


def print_table(console: Console, table: Table) -> None:
    """Print a rich table; large ones as plain aligned columns (same content, no styles)."""
    if table.row_count <= FAST_TABLE_ROWS:
        print_rich_table(console, table)
        return
    cols = table.columns
    cells = [[_plain(c) for c in col._cells] for col in cols]
    rows = [[cells[c][i] for c in range(len(cols))] for i in range(table.row_count)]
    title = _plain(table.title) if table.title else None
    print_plain_table(
        console, title, [_plain(col.header) for col in cols], [col.justify == "right" for col in cols], rows
    )


def print_plain_table(console, title: str | None, headers: list[str], right: list[bool], rows: list[list[str]]) -> None:
    """A large table as plain aligned columns (what :func:`print_table` prints above
    :data:`FAST_TABLE_ROWS` rows), from plain strings: no rich objects to build."""
    console.file.write(plain_table_text(title, headers, right, rows))


def print_rich_table(console: Console, table: Table) -> None:
    """``console.print(table)``, the same text laid out without rich where that can be done
    (:func:`rich_layout_without_colour`).  The title of one of ours (no edges) is a line of its own:
    a title wider than the table is neither wrapped into the table's width nor widens it."""
    if isinstance(table.title, (str, Text)) and table.title and not table.show_edge:
        from copy import copy

        title = table.title.copy() if isinstance(table.title, Text) else Text(table.title)
        if not title.style:
            title.stylize("table.title")
        console.print(title)
        table = copy(table)  # the caller's table keeps its title
        table.title = None
    groups = _column_groups(console, table)
    if groups == []:  # too wide, with text in it: its text wraps rather than being cut short
        table = _text_wraps(table)
    elif groups:
        for n, group in enumerate(groups):
            if n:
                console.print()
            print_rich_table(console, _columns_of(table, group))
        return
    for c in table.columns:  # a column of figures never wraps nor ends in "…": whole, or a wider table
        if c.justify == "right" and not any(" " in _plain(x) for x in c._cells):
            c.no_wrap = True
    text = rich_layout_without_colour(console, table)
    if text is None:
        print_whole(console, table)
    else:
        console.file.write(text)


def _column_groups(console: Console, table: Table) -> list[list[int]] | None:
    """A table of ours too wide for the console, whose cells are short (figures, names): its
    columns in groups that each fit, every group led by the first column (the row's key), as a
    wide data frame prints.  None when it fits, may wrap already, or the width is unbounded;
    [] when it is too wide but holds text (a cell wider than :data:`GROUPED_CELL`)."""
    from logparse.cli.layout import RICH_GAP, cell_width

    width = console_width(console)
    cols = table.columns
    if width is None or table.show_edge or len(cols) < 3 or any(c.overflow == "fold" for c in cols):
        return None
    widths = [max([cell_width(_plain(c.header))] + [cell_width(_plain(x)) for x in c._cells]) for c in cols]
    if sum(widths) + RICH_GAP * (len(cols) - 1) <= width:
        return None
    if max(widths[1:]) > GROUPED_CELL:
        return []
    groups, current, used = [], [0], widths[0]
    for i in range(1, len(cols)):
        if used + RICH_GAP + widths[i] > width and len(current) > 1:
            groups.append(current)
            current, used = [0], widths[0]
        current.append(i)
        used += RICH_GAP + widths[i]
    groups.append(current)
    return groups if len(groups) > 1 else None


#: A table whose cells (past its first column) are at most this wide is split into column groups
#: when it does not fit; a wider one holds text, which wraps instead.
GROUPED_CELL = 24


def _text_wraps(table: Table) -> Table:
    """A copy of ``table`` whose left-justified columns wrap their text (numbers stay whole)."""
    part = _columns_of(table, list(range(len(table.columns))))
    for c in part.columns:
        if c.justify == "left":
            c.overflow, c.no_wrap = "fold", False
    return part


def _columns_of(table: Table, group: list[int]) -> Table:
    """A table of some of ``table``'s columns (same rows, same look)."""
    part = Table(show_edge=False, pad_edge=False, box=table.box, show_header=table.show_header)
    for i in group:
        c = table.columns[i]
        part.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap, overflow=c.overflow, style=c.style)
    for r, row in enumerate(table.rows):
        part.add_row(*(table.columns[i]._cells[r] for i in group), end_section=row.end_section)
    return part


def rich_layout_without_colour(console: Console, table: Table) -> str | None:
    """The text ``console.print(table)`` prints, laid out here when the console has no colours (a
    pipe, a file, NO_COLOR) and the table is one of ours that fits the width: rich measures and
    renders every cell through its general machinery, most of a small read command's own time.
    None for anything else (rich prints it)."""
    from rich.box import HEAVY_HEAD

    if (
        console.color_system is not None
        or console.legacy_windows
        or not console.encoding.lower().startswith("utf")
        or table.box is not HEAVY_HEAD
        or table.show_edge
        or table.pad_edge
        or not table.show_header
        or table.show_footer
        or table.show_lines
        or table.leading
        or table.caption
        or table.expand
        or table.width is not None
        or table.min_width is not None
        or tuple(table.padding) != (0, 1, 0, 1)
        or table.collapse_padding
        or any(row.end_section for row in table.rows)
    ):
        return None
    columns = _plain_columns(console, table)
    if columns is None:
        return None
    return _laid_out(console, table, columns)


def _plain_columns(console: Console, table: Table) -> list[tuple[bool, list[str]]] | None:
    """Per column: whether it is right-justified, and its header and cells as the text rich shows."""
    out = []
    for col in table.columns:
        if col.justify not in ("left", "right") or col.width is not None or col.min_width is not None:
            return None
        if col.max_width is not None or col.ratio is not None:
            return None
        texts = []
        for renderable in [col.header, *col._cells]:
            text = _shown_text(console, renderable)
            if text is None:
                return None
            texts.append(text)
        out.append((col.justify == "right", texts))
    return out


def _shown_text(console: Console, renderable: Any) -> str | None:
    """A cell's text as rich shows it (markup and emoji codes in plain strings applied), or None."""
    if isinstance(renderable, Text):
        if renderable.justify is not None:
            return None
        text = renderable.plain
    elif isinstance(renderable, str):
        text = console.render_str(renderable).plain if ("[" in renderable or ":" in renderable) else renderable
    else:
        return None
    return text if text.isprintable() else None


def _laid_out(console: Console, table: Table, columns: list[tuple[bool, list[str]]]) -> str | None:
    """Title, header, rule and rows laid out as rich lays out a table that fits (None when it does not)."""
    from rich.cells import cell_len

    last = len(columns) - 1
    lens = [[cell_len(t) for t in texts] for _, texts in columns]
    widths = [(max(ls) + (c > 0) + (c < last)) or 1 for c, ls in enumerate(lens)]
    table_width = sum(widths) + last
    title = None if not table.title else _shown_text(console, table.title)
    if table_width > console.width or (table.title and (title is None or cell_len(title) > table_width)):
        return None
    box = table.box
    assert box is not None

    def line(i: int, divider: str) -> str:
        cells = []
        for c, (right, texts) in enumerate(columns):
            pad = " " * (widths[c] - (c > 0) - (c < last) - lens[c][i])
            body = pad + texts[i] if right else texts[i] + pad
            cells.append((" " if c > 0 else "") + body + (" " if c < last else ""))
        return divider.join(cells)

    n = len(columns[0][1]) if columns else 0
    out = [] if title is None else [title + " " * (table_width - cell_len(title))]
    out.append(line(0, box.head_vertical))
    out.append(box.get_row(widths, "head", edge=False))
    out += [line(i, box.foot_vertical if i == n - 1 else box.mid_vertical) for i in range(1, n)]
    return "\n".join(out) + "\n"
