"""Shared test helpers (no fixtures with side effects here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
#: The genuine SGLang logs shared with the team; tests that use them skip when absent.
SHARED = Path(os.environ.get("LOGPARSE_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"genuine corpus not available at {CORPUS}")
