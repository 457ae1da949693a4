"""What changed since a deployment's previous launch, as the history table shows it: the release, the
meaning of ``kv_tokens``, the arguments given, what the engine derived, release defaults that moved
and release fields, each as a (text, style) piece.
"""

from __future__ import annotations

from logparse import engines

#: The ``history`` columns :func:`what_changed_pieces` reads, in its arguments' order.
WHAT_CHANGED_COLUMNS = (
    "engine",
    "version_changed",
    "version_change",
    "kv_tokens_definition_change",
    "args_changed",
    "arg_changes",
    "derived_changes",
    "defaults_moved",
    "release_fields_change",
    "prev_launch_id",
)


def _short_changes(text: str | None, limit: int = 60) -> str:
    """``a: x -> y; b: ...`` with each change cut to ``limit`` characters (a whole config dict is noise here)."""
    if text is not None and len(text) <= limit:
        return text
    parts = [p if len(p) <= limit else p[: limit - 1] + "…" for p in (text or "").split("; ")]
    return "; ".join(parts)


def what_changed_pieces(
    engine: str | None,
    version_changed: bool | None,
    version_change: str | None,
    kv_tokens_definition_change: str | None,
    args_changed: bool | None,
    arg_changes: str | None,
    derived_changes: str | None,
    defaults_moved: str | None,
    release_fields_change: str | None,
    prev_launch_id: str | None,
) -> list[tuple[str, str]]:
    """What changed since the previous launch, as (text, style) pieces, joined by ``; ``."""
    pieces: list[tuple[str, str]] = []
    eng = engines.get(engine)
    if version_changed:
        pieces.append((f"{eng.label} {version_change}", "bold magenta"))
    if kv_tokens_definition_change:
        pieces.append((kv_tokens_definition_change, "bold yellow"))
    if args_changed:
        pieces.append((_short_changes(arg_changes), "cyan"))
    if derived_changes:
        pieces.append((f"derived by {eng.label}: " + _short_changes(derived_changes), "dim"))
    if defaults_moved:
        pieces.append(("release default moved: " + _short_changes(defaults_moved), "dim"))
    if release_fields_change:
        pieces.append((release_fields_change, "dim"))
    if args_changed is None and prev_launch_id and eng.args_unknown_note:
        pieces.append((eng.args_unknown_note, "dim"))
    if len(pieces) < 2:
        return pieces
    out = [pieces[0]]
    said = bool(pieces[0][0])
    for text, style in pieces[1:]:
        if said and style == "cyan":  # the separator before the argument changes is unstyled
            out.append(("; ", ""))
        elif said:
            text = "; " + text
        out.append((text, style))
        said = said or bool(text)
    return out


def pieces_text(pieces: list[tuple[str, str]]) -> str:
    """The pieces as plain text."""
    return "".join(t for t, _ in pieces)
