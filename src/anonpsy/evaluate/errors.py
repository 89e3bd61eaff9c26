"""Error codes of the evaluation harness (V1xx). Messages never contain narrative text."""

from __future__ import annotations

from anonpsy.errors import AnonpsyError

V100_MISSING_EXTRA = "V100"
V101_UNKNOWN_MODEL = "V101"
V102_MODEL_PARTS_MISSING = "V102"
V103_CHECKSUM = "V103"
V104_BAD_RESULTS = "V104"
V105_BAD_ARCHIVE = "V105"

EVAL_EXTRA_HINT = 'pip install "anonpsy[eval]"'


def missing_extra(what: str) -> AnonpsyError:
    """The one-line error for an evaluation feature whose optional dependency is not installed."""
    return AnonpsyError(
        V100_MISSING_EXTRA,
        f"{what} is not installed; the evaluation harness needs the eval extra: {EVAL_EXTRA_HINT}",
    )
