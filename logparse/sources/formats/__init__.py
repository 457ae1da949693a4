"""One module per outer format, each with its format, sample lines and the record fields
it yields in its docstring (as jc keeps one parser per format).

==============================  ==============================================
``plain``, ``raw``              :mod:`.plain` (also: free text before SGLang's prefix)
``journal-cat``                 :mod:`.journal_cat` (and every rendering's markers)
``journal-short(-precise)``     :mod:`.journal_short`
``journal-short-iso(-precise)`` :mod:`.journal_short_iso`
``journal-short-full``,         :mod:`.journal_short_full`
``journal-with-unit``
``journal-short-unix``          :mod:`.journal_short_unix`
``journal-short-monotonic``,    :mod:`.journal_short_monotonic`
``journal-short-delta``
``journal-json*`` (4 framings)  :mod:`.journal_json`
``journal-export``              :mod:`.journal_export`
``journal-verbose``             :mod:`.journal_verbose`
``docker``                      :mod:`.docker`
``docker-json``, ``json-log``   :mod:`.json_logs` (docker's json-file driver; Python's JSON logging)
``compose``                     :mod:`.compose`
``kubectl``                     :mod:`.kubectl`
``ray``                         :mod:`.ray`
``pylogging``                   :mod:`.pylogging`
``docker-desktop``              :mod:`.docker_desktop`
==============================  ==============================================

Layers that are no input format of their own, peeled on any input (CI gutters, terminal-UI
borders, FastChat's and loguru's logging): :mod:`.wrappers`, one table of specs.

Shared by several: :mod:`.journal_headers` (which short* header a line starts with),
:mod:`.systemd_units` (the unit of a short* process), :mod:`.journal_entry` (a structured
entry's fields to records).  :mod:`logparse.sources.lines` applies the line formats in
their order; the structured ones (json, export, verbose) read whole entries.
"""

from __future__ import annotations

from logparse.sources.formats import (
    compose,
    docker,
    docker_desktop,
    journal_cat,
    journal_export,
    journal_json,
    journal_short,
    journal_short_full,
    journal_short_iso,
    journal_short_monotonic,
    journal_short_unix,
    journal_verbose,
    json_logs,
    kubectl,
    plain,
    pylogging,
    ray,
)

#: The format modules, in the order their names are listed to the user.
MODULES = (
    plain,
    journal_cat,
    journal_short,
    journal_short_iso,
    journal_short_full,
    journal_short_unix,
    journal_short_monotonic,
    journal_json,
    journal_export,
    journal_verbose,
    docker,
    json_logs,
    compose,
    kubectl,
    ray,
    pylogging,
    docker_desktop,
)
#: Every ``input_format`` name.
FORMATS: tuple[str, ...] = tuple(name for module in MODULES for name in module.FORMATS)
#: Other accepted names (journalctl's own mode names, ...) -> the format name.
ALIASES: dict[str, str] = {alias: name for module in MODULES for alias, name in module.ALIASES.items()}
