"""The one error the source layer raises."""

from __future__ import annotations


class InputError(Exception):
    """A problem with an input the user named (missing path, unreadable file, a directory
    without files, an unknown format name, journalctl missing or failing); exit code 2."""
