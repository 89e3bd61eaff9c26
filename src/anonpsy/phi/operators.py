"""Operators that replace detected identifiers, and the masking error codes.

An operator turns each detected span of a document into its replacement text. Each validates its own
parameters when built (a bad parameter is an :class:`~anonpsy.errors.AnonpsyError` with code ``M106``):

* ``mask`` — ``[PERSON]`` (template ``"[{type}]"``);
* ``redact`` — removes the value;
* ``hash`` — keyed hash, ``[PERSON:1f3a…]``: HMAC-SHA256 of the type and normalized value under a secret key
  (the same value always gives the same token; without the key the token cannot be reversed or recomputed);
* ``generalize`` — ages over 89 become "90 or older" (others kept, or banded when ``age_band`` is set), dates
  become their year, ZIP codes their first three digits; other types are masked;
* ``dateshift`` — dates move by the patient's keyed offset (:mod:`anonpsy.phi.dateshift`); other types are
  masked;
* ``surrogate`` — realistic, consistent replacements from a surrogate vault (:mod:`anonpsy.phi.relex`).

The key for ``hash``, ``dateshift`` and ``surrogate`` comes from ``ANONPSY_HMAC_KEY`` or a key file
(``ANONPSY_HMAC_KEY_FILE`` or an explicit path); there is no default key.

Error codes of the masking commands (M1xx)::

    M100  no HMAC key                     M105  an LLM chunk could not be checked (fail closed)
    M101  vault key mismatch              M106  bad operator parameter
    M102  vault unreadable                M107  unknown record schema / bad record schema
    M103  record field not in its schema  M108  record invalid against its schema
    M104  bad evaluation input
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from anonpsy.errors import AnonpsyError
from anonpsy.phi import dateshift
from anonpsy.phi.spans import Span
from anonpsy.phi.types import DATE_TYPES, EntityType

if TYPE_CHECKING:
    from anonpsy.phi.relex import Relexicalizer
    from anonpsy.phi.vault import SurrogateVault

M100_MISSING_KEY = "M100"
M101_VAULT_KEY_MISMATCH = "M101"
M102_VAULT_UNREADABLE = "M102"
M103_UNDESCRIBED_FIELD = "M103"
M104_BAD_EVAL_INPUT = "M104"
M105_LLM_CHUNK_FAILED = "M105"
M106_BAD_OPERATOR_PARAM = "M106"
M107_UNKNOWN_SCHEMA = "M107"
M108_RECORD_INVALID = "M108"

KEY_ENV = "ANONPSY_HMAC_KEY"
KEY_FILE_ENV = "ANONPSY_HMAC_KEY_FILE"
MIN_KEY_BYTES = 16

OPERATOR_NAMES: tuple[str, ...] = ("mask", "redact", "hash", "generalize", "dateshift", "surrogate")

AGE_TYPE = EntityType.AGE
ZIP_TYPE = EntityType.ZIP_CODE
_PHONE_TYPES = frozenset({EntityType.TELEPHONE_NUMBER, EntityType.FAX_NUMBER})
_FREE_TEXT_TYPES = frozenset(
    {
        EntityType.PERSON,
        EntityType.ORGANIZATION,
        EntityType.PHARMACY,
        EntityType.DIAGNOSTIC_LABS,
        EntityType.LOCATION,
        EntityType.ADDRESS,
        EntityType.OCCUPATION,
        EntityType.MARITAL_STATUS,
        EntityType.PARENTHOOD,
        EntityType.RACE,
        EntityType.ETHNICITY,
        EntityType.AGE,
        EntityType.EMAIL,
        EntityType.URL,
    }
)


def _param_error(message: str) -> AnonpsyError:
    return AnonpsyError(M106_BAD_OPERATOR_PARAM, message, location="operator")


def load_key(
    env: Mapping[str, str] | None = None, key_file: str | Path | None = None, *, purpose: str = "hash"
) -> bytes:
    """The HMAC secret: ``key_file``, else ``$ANONPSY_HMAC_KEY``, else the file ``$ANONPSY_HMAC_KEY_FILE``.

    Raises ``M100`` when there is none and ``M106`` when it is shorter than 16 bytes.
    """
    environ = os.environ if env is None else env
    raw: bytes | None = None
    path = key_file or environ.get(KEY_FILE_ENV) or None
    if key_file is None and environ.get(KEY_ENV):
        raw = environ[KEY_ENV].encode("utf-8")
    elif path:
        try:
            raw = Path(path).read_bytes().strip()
        except OSError:
            raise AnonpsyError(
                M100_MISSING_KEY,
                "the HMAC key file cannot be read; check the path and its permissions",
                "key",
            ) from None
    if not raw:
        raise AnonpsyError(
            M100_MISSING_KEY,
            f"no HMAC key for {purpose}: set {KEY_ENV} or {KEY_FILE_ENV} (a secret of at least "
            f"{MIN_KEY_BYTES} bytes); refusing to continue without one",
            location="key",
        )
    if len(raw) < MIN_KEY_BYTES:
        raise _param_error(f"the HMAC key is shorter than {MIN_KEY_BYTES} bytes; use a longer secret")
    return raw


def normalize_value(entity_type: str, value: str) -> str:
    """Canonical form of a value for keying: NFKC, case-folded, whitespace collapsed; digits only for phones,
    alphanumerics only for identifiers."""
    v = unicodedata.normalize("NFKC", value).casefold().strip()
    if entity_type in _PHONE_TYPES:
        digits = re.sub(r"\D", "", v)
        return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits
    if entity_type not in _FREE_TEXT_TYPES and entity_type not in DATE_TYPES:
        return re.sub(r"[^0-9a-z]", "", v)
    v = re.sub(r"\s+", " ", v)
    return v.strip(" .,;:")


@dataclass(frozen=True)
class MaskContext:
    """Per-document context an operator may need."""

    patient_id: str | None = None
    document_id: str | None = None


class Operator(ABC):
    """Replaces the detected spans of one document."""

    name: ClassVar[str]

    def replacements(self, text: str, spans: Sequence[Span], ctx: MaskContext) -> list[str]:
        """One replacement string per span (spans are sorted and disjoint)."""
        return [self.replace(text[s.start : s.end], s.type, ctx) for s in spans]

    @abstractmethod
    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        """The replacement of one value of ``entity_type``."""


class MaskOperator(Operator):
    """Replace a value by a placeholder naming its type, ``[PERSON]``."""

    name = "mask"

    def __init__(self, template: str = "[{type}]") -> None:
        if not isinstance(template, str) or "{type}" not in template:
            raise _param_error("mask template must contain {type}")
        try:
            template.format(type="X")
        except (KeyError, IndexError, ValueError):
            raise _param_error("mask template may use only the {type} placeholder") from None
        self.template = template

    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        return self.template.format(type=entity_type)


class RedactOperator(Operator):
    """Remove the value."""

    name = "redact"

    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        return ""


class HashOperator(Operator):
    """Keyed hash token ``[TYPE:hex]`` from HMAC-SHA256(key, type + normalized value)."""

    name = "hash"

    def __init__(self, key: bytes, length: int = 16, template: str = "[{type}:{digest}]") -> None:
        if not key:
            raise AnonpsyError(M100_MISSING_KEY, f"no HMAC key for hash: set {KEY_ENV}", location="key")
        if not isinstance(length, int) or not 8 <= length <= 64:
            raise _param_error("hash length must be an integer from 8 to 64 hex digits")
        if "{digest}" not in template:
            raise _param_error("hash template must contain {digest}")
        self._key = key
        self.length = length
        self.template = template

    def digest(self, value: str, entity_type: str) -> str:
        """Hex digest (``length`` digits) of one value."""
        msg = entity_type.encode("utf-8") + b"\x1f" + normalize_value(entity_type, value).encode("utf-8")
        return hmac.new(self._key, msg, hashlib.sha256).hexdigest()[: self.length]

    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        return self.template.format(type=entity_type, digest=self.digest(value, entity_type))


_AGE_NUMBER = re.compile(r"\d{1,3}")


class GeneralizeOperator(Operator):
    """Coarsen values: ages over ``max_age`` → "90 or older" (or banded), dates → year, ZIP → 3 digits."""

    name = "generalize"

    def __init__(
        self, age_band: int | None = None, max_age: int = 89, top_label: str = "90 or older"
    ) -> None:
        if age_band is not None and (not isinstance(age_band, int) or not 2 <= age_band <= 50):
            raise _param_error("age_band must be an integer from 2 to 50 years, or unset to keep ages")
        if not isinstance(max_age, int) or not 1 <= max_age <= 120:
            raise _param_error("max_age must be an integer from 1 to 120")
        self.age_band = age_band
        self.max_age = max_age
        self.top_label = top_label
        self._mask = MaskOperator()

    def generalize_age(self, value: str) -> str | None:
        """The generalized age, or None when ``value`` holds no age number."""
        m = _AGE_NUMBER.search(value)
        if m is None:
            return None
        age = int(m.group(0))
        if age > self.max_age:
            return self.top_label
        if self.age_band is None:
            return value
        low = age - age % self.age_band
        high = min(low + self.age_band - 1, self.max_age)
        return f"{low}-{high}"

    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        if entity_type == AGE_TYPE:
            out = self.generalize_age(value)
            if out is not None:
                return out
        elif entity_type in DATE_TYPES:
            year = dateshift.date_to_year(value)
            if year is not None:
                return year
        elif entity_type == ZIP_TYPE:
            digits = re.sub(r"\D", "", value)
            if len(digits) >= 5:
                return digits[:3]
        return self._mask.replace(value, entity_type, ctx)


class DateShiftOperator(Operator):
    """Shift dates by the patient's keyed offset, keeping their format; other types are masked.

    Dates that cannot be parsed are masked rather than kept.
    """

    name = "dateshift"

    def __init__(
        self, key: bytes, low: int = dateshift.DEFAULT_RANGE[0], high: int = dateshift.DEFAULT_RANGE[1]
    ):
        if not key:
            raise AnonpsyError(M100_MISSING_KEY, f"no HMAC key for dateshift: set {KEY_ENV}", location="key")
        try:
            dateshift.validate_range(low, high)
        except ValueError as exc:
            raise _param_error(str(exc)) from None
        self._key = key
        self.low = low
        self.high = high
        self._mask = MaskOperator()

    def offset(self, patient_id: str | None) -> int:
        """Day offset of a patient (documents without a patient id share the id "")."""
        return dateshift.patient_offset(self._key, patient_id or "", self.low, self.high)

    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        if entity_type in DATE_TYPES:
            shifted = dateshift.shift_date_text(value, self.offset(ctx.patient_id))
            if shifted is not None:
                return shifted
        return self._mask.replace(value, entity_type, ctx)


class SurrogateOperator(Operator):
    """Realistic replacements, consistent within and across documents through a surrogate vault."""

    name = "surrogate"

    def __init__(
        self,
        key: bytes,
        vault: SurrogateVault | None = None,
        low: int = dateshift.DEFAULT_RANGE[0],
        high: int = dateshift.DEFAULT_RANGE[1],
    ) -> None:
        from anonpsy.phi.relex import Relexicalizer
        from anonpsy.phi.vault import SurrogateVault

        if not key:
            raise AnonpsyError(M100_MISSING_KEY, f"no HMAC key for surrogates: set {KEY_ENV}", location="key")
        self.dates = DateShiftOperator(key, low, high)
        self.vault = vault if vault is not None else SurrogateVault(key)
        self.relex: Relexicalizer = Relexicalizer(self.vault)
        self.ages = GeneralizeOperator()

    def replacements(self, text: str, spans: Sequence[Span], ctx: MaskContext) -> list[str]:
        out = self.relex.relexicalize(text, spans, document_id=ctx.document_id)
        for i, s in enumerate(spans):
            if s.type in DATE_TYPES:
                out[i] = self.dates.replace(text[s.start : s.end], s.type, ctx)
            elif s.type == AGE_TYPE:
                out[i] = self.ages.replace(text[s.start : s.end], s.type, ctx)
        return out

    def replace(self, value: str, entity_type: str, ctx: MaskContext) -> str:
        return self.replacements(value, [Span(0, len(value), entity_type)], ctx)[0]


def build_operator(
    name: str,
    *,
    key: bytes | None = None,
    vault: SurrogateVault | None = None,
    params: Mapping[str, object] | None = None,
) -> Operator:
    """Build an operator by name. Keyed operators need ``key`` (``M100`` without it)."""
    p = dict(params or {})
    try:
        if name == "mask":
            return MaskOperator(**p)  # type: ignore[arg-type]
        if name == "redact":
            if p:
                raise _param_error("redact takes no parameters")
            return RedactOperator()
        if name == "generalize":
            return GeneralizeOperator(**p)  # type: ignore[arg-type]
        if name in ("hash", "dateshift", "surrogate"):
            if not key:
                raise AnonpsyError(
                    M100_MISSING_KEY,
                    f"operator {name} needs an HMAC key: set {KEY_ENV} or {KEY_FILE_ENV}; "
                    "refusing to continue",
                    location="key",
                )
            if name == "hash":
                return HashOperator(key, **p)  # type: ignore[arg-type]
            if name == "dateshift":
                return DateShiftOperator(key, **p)  # type: ignore[arg-type]
            return SurrogateOperator(key, vault, **p)  # type: ignore[arg-type]
    except TypeError:
        raise _param_error(f"unknown parameter for operator {name}") from None
    raise _param_error(f"unknown operator {name!r}; choose one of {', '.join(OPERATOR_NAMES)}")
