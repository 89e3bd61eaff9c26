"""Error codes of the RecordTwin commands (T1xx). Messages name files, options, ids and counts, never text."""

from __future__ import annotations

from anonpsy.errors import AnonpsyError

T100_MISSING_EXTRA = "T100"
T101_BAD_CORPUS = "T101"
T102_BAD_TABLE = "T102"
T103_BAD_OPTION = "T103"
T104_K_IMPOSSIBLE = "T104"
T105_VERIFY_FAILED = "T105"
T106_STALE_RUN = "T106"
T107_LEAK = "T107"
T108_LLM_REPLY = "T108"
T109_BAD_SYNTH = "T109"

TWIN_EXTRA_HINT = 'pip install "anonpsy[twin]"'


def missing_extra(what: str) -> AnonpsyError:
    """The one-line error for a step whose optional dependency is not installed."""
    return AnonpsyError(T100_MISSING_EXTRA,
                        f"{what} is not installed; this step needs the twin extra: {TWIN_EXTRA_HINT}")
