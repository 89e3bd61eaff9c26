"""Numbered error codes and the user-facing error type.

Messages name the problem, why it matters and how to fix it, with a code and a location. They never contain
narrative text or identifiers from a case.
"""

from __future__ import annotations


class AnonpsyError(Exception):
    """An error to show the user as one line: ``CODE location: message``. Exit status 2 on the CLI."""

    def __init__(self, code: str, message: str, location: str | None = None) -> None:
        self.code = code
        self.message = message
        self.location = location
        super().__init__(self.one_line())

    def one_line(self) -> str:
        loc = f" {self.location}:" if self.location else ""
        return f"{self.code}{loc} {self.message}"


# Input errors (E1xx)
E100_MISSING_FILE = "E100"
E101_EMPTY_INPUT = "E101"
E102_MALFORMED_YAML = "E102"
E103_SCHEMA = "E103"
E104_UNKNOWN_DIAGNOSIS = "E104"
E105_NOT_UTF8 = "E105"
E106_BINARY = "E106"
E107_TOO_LARGE = "E107"
E108_MALFORMED_JSON = "E108"
E109_BAD_OPTION = "E109"
# Outputs refused (E13x): the de-identified text is not written (only to --quarantine DIR)
E130_LEAK_AUDIT = "E130"
E131_INVARIANT = "E131"
# Rules errors (R1xx)
R100_RULE_SCHEMA = "R100"
R101_RULE_YAML = "R101"
R102_CASE_FAILED = "R102"
R103_MISSING_CASES = "R103"
R104_DUPLICATE_ID = "R104"
R105_BAD_ID = "R105"
R106_MISSING_SOURCE = "R106"
R107_COVERAGE = "R107"
R108_UNKNOWN_KIND = "R108"
R109_UNKNOWN_RULE = "R109"
# Audio errors (A1xx)
A100_NOT_AUDIO = "A100"
A101_UNSUPPORTED_RATE = "A101"
A102_AUDIO_EXTRA_MISSING = "A102"
A103_TRANSCRIPTION = "A103"
A104_AUDIO_FORMAT = "A104"
# Synthetic questionnaire tables (T1xx)
T100_SCHEMA_MISMATCH = "T100"
T101_BAD_TABLE = "T101"
T102_BAD_RECODE = "T102"
T103_TOO_FEW_ROWS = "T103"
T104_LLM_ANSWER = "T104"
T105_NO_ADMISSIBLE = "T105"
