"""Context cues of spoken identifiers (``rules/audio/cues.yaml``, kind ``audio_cues``).

A recogniser that does not know a name writes nothing, or writes ordinary words in its place ("Okonkwo" becomes
"ah i go"). What is said *around* an identifier is more reliable: "my name is …", "doctor …", "call me at …",
"I live in …". A cue rule names phrases that come just **before** a region (or just **after** it, "… street")
and the identifier type the region then holds. It is used twice:

* :meth:`CueSet.classify_gap`: a voiced region no word accounts for, with the words around it;
* :meth:`CueSet.spans`: recognised words right after a ``before`` phrase (or right before an ``after``
  phrase), up to ``reach_words`` words or ``reach_seconds``, ending earlier at a pause of
  ``stop_at_pause_ms``, at the end of a written sentence followed by a pause of :data:`SENTENCE_PAUSE_S`, or at
  one of ``stop_words`` (which is not
  included); words the recogniser put in an identifier's place are muted with it. A stop word right beside
  the cue that the recogniser was unsure of (a confidence under :data:`UNSURE_BELOW`) is the name heard as a
  short word ("by doctor, who, in the clinic" for "by Doctor Vu in the clinic") and does not stop the region,
  unless it opens another cue ("spoke with her sister, ..."); before an ``after`` phrase, read backwards, no
  unsure stop word within the reach ends the region ("by, as me, angek, nurse practitioner"). A ``before`` phrase that
  closes its sentence (a full stop, not an abbreviation's as in "Dr.", and a pause of
  :data:`SENTENCE_PAUSE_S`) opens no region: "… her case manager. Police found her …". A rule's ``heads``
  (a relative's noun alone, its possessive misheard) open a region only where the recogniser wrote a comma
  after them and a capitalised word follows mid-sentence: "for a brother, Candela's, Vertaman.".

A rule with ``gaps_only`` judges gaps only: "in [gap]" is most likely a place the recogniser did not know, while
"in" before recognised words says nothing. A rule with ``numbers_only`` reaches over number words only ("medical
record number four eight …"). A rule with ``digits_at_least`` instead matches spoken numbers: a number said in at
least ``min_words`` words with at least that many digits ("two five three five …", "nineteen eighty two") is an
identifier, unless one of the rule's ``not_after`` words comes up to ``not_after_words`` words before it in its
sentence ("her score on the PHQ nine was eighteen" heard as "nine, one, eighteen").

Fillers ("uh", "um") between a cue and its region are skipped. Matching is on lower-case words without
punctuation. This module is pure (no audio libraries), so ``anonpsy rules check`` runs its cases anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anonpsy.errors import R100_RULE_SCHEMA, AnonpsyError
from anonpsy.paths import rules_dir
from anonpsy.phi.types import EntityType
from anonpsy.yamlio import load_yaml

KIND = "audio_cues"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CueRuleModel(_Model):
    """One cue rule as written in the YAML file."""

    id: str = Field(pattern=r"^audio\.[a-z0-9_.-]+$")
    type: EntityType
    source: str | None = None
    description: str = ""
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    reach_words: int = Field(default=3, ge=1, le=30)
    phrase_reach_words: int = Field(default=0, ge=0, le=10)
    year_after_day_words: int = Field(default=0, ge=0, le=6)
    closed_by: tuple[str, ...] = ()
    heads: tuple[str, ...] = ()
    reach_seconds: float = Field(default=2.0, gt=0, le=15)
    stop_at_pause_ms: int = Field(default=400, ge=50, le=5000)
    stop_words: tuple[str, ...] = ()
    digits_at_least: int | None = Field(default=None, ge=3, le=30)
    min_words: int = Field(default=2, ge=1, le=30)
    numbers_only: bool = False
    gaps_only: bool = False
    not_after: tuple[str, ...] = ()
    not_after_words: int = Field(default=0, ge=0, le=10)


class CueFile(_Model):
    """The whole file."""

    kind: str = Field(pattern=f"^{KIND}$")
    version: int = Field(ge=1)
    source: str | None = None
    description: str = ""
    fillers: tuple[str, ...] = ()
    rules: tuple[CueRuleModel, ...]


class TimedWord(Protocol):
    """What cue spans need of a word."""

    @property
    def text(self) -> str: ...
    @property
    def start(self) -> float: ...
    @property
    def end(self) -> float: ...


_PUNCT = ".,;:!?\"'()[]{}"
_NUMBER = re.compile(r"[0-9][0-9-]*")
_SENTENCE_END = (".", "?", "!")
#: A full stop the recogniser wrote ends a cue's region only where the speaker paused: recognisers put full
#: stops inside addresses and names they mishear ("eight hundred seventeen. Love, Cliffs.").
SENTENCE_PAUSE_S = 0.25


#: Short function words a recogniser writes for a name's unstressed first syllable ("and Salvo" for "Ansaldo").
_NAME_SYLLABLES = frozenset({"and", "an", "in", "a", "on"})


#: Subjects and verbs of a clause: the words before a closing word past a cue's reach that hold one of them are
#: a clause, not a name.
_CLAUSE_SUBJECTS = frozenset({"i", "she", "he", "they", "we", "you", "it", "was", "is", "were", "are", "am", "be",
                              "been", "has", "had", "have"})


def is_number_word(c: str) -> bool:
    """A word that can be part of a spoken number (digits, number words, "oh", "double")."""
    from anonpsy.audio.spoken import REPEATS, SCALES, TEENS, TENS, UNITS

    if "-" in c and all(is_number_word(p) for p in c.split("-") if p):
        return True  # "twenty-three", "555-0127"
    return c.isdigit() or c in UNITS or c in TEENS or c in TENS or c in SCALES or c in REPEATS


#: Words a recogniser writes for digits it misheard ("free" for three, "aid" for eight, "no" for oh, "I" for nine:
#: "six, I, I know" for "six nine nine oh"); read as
#: digits only inside a number region a cue opened ("medical record number ...").
DIGIT_SOUNDALIKES = frozenset({"to", "too", "for", "fore", "won", "ate", "aid", "eat", "free", "tree", "fife",
                               "sex", "sick", "sicks", "nein", "nine's", "no", "owe", "know", "tin", "then", "a", "at",
                               "i"})


def is_numberish(c: str) -> bool:
    """A number word, or a word a recogniser writes for a misheard digit ("four-nine-eat" counts too)."""
    if "-" in c:
        return any(is_numberish(p) for p in c.split("-") if p)
    return is_number_word(c) or c in DIGIT_SOUNDALIKES or any(ch.isdigit() for ch in c)


#: A word the recogniser wrote with a confidence below this (its least likely token) is one it was unsure of:
#: Moonshine writes most ordinary words it heard clearly at 0.9 and above, and a name it never learnt as the
#: closest words it knows at under a half ("Nqobizitha" as "and cognizant, Ah").
UNSURE_BELOW = 0.5


def is_unsure(w: TimedWord, below: float = UNSURE_BELOW) -> bool:
    """Did the recogniser report ``w`` with a confidence under ``below``? Words without one never are."""
    p = getattr(w, "probability", None)
    return p is not None and p < below


def _core(word: str) -> str:
    return word.strip(_PUNCT).lower()


_YEAR_RANGE = re.compile(r"(19|20)[0-9]{2}-(19|20)[0-9]{2}")


def _said_words(word: str) -> int:
    """About how many words a word the recogniser wrote was said in: a number of five digits or more written in
    digits ("83311", or in groups "723-8112" as a phone number is written) one word per digit, else one. A range
    of years ("1990-2005") was said in years, not digits."""
    c = _core(word)
    digits = c.replace("-", "")
    if not digits.isdigit() or len(digits) < 5 or c.startswith("-") or _YEAR_RANGE.fullmatch(c):
        return 1
    return len(digits)


def _ends_sentence(text: str) -> bool:
    return text.rstrip().endswith(_SENTENCE_END)


#: Abbreviations a recogniser writes with a full stop inside a sentence ("Dr. Moreno", "Mrs. Pratt").
_ABBREVIATIONS = frozenset({"dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr"})


def _closes_sentence(words: Sequence[TimedWord], cores: Sequence[str], k: int) -> bool:
    """Does word ``k`` end a sentence: a full stop, question or exclamation mark that is not an abbreviation's
    ("Dr."), and a pause of :data:`SENTENCE_PAUSE_S` before the next word?"""
    if not _ends_sentence(words[k].text) or cores[k] in _ABBREVIATIONS or k + 1 >= len(words):
        return False
    return words[k + 1].start - words[k].end >= SENTENCE_PAUSE_S


def _phrase(p: str) -> tuple[str, ...]:
    return tuple(_core(w) for w in p.split() if _core(w))


@dataclass(frozen=True)
class CueRule:
    """A compiled rule."""

    id: str
    type: str
    before: tuple[tuple[str, ...], ...]
    after: tuple[tuple[str, ...], ...]
    reach_words: int
    reach_seconds: float
    stop_at_pause: float
    stop_words: frozenset[str]
    digits_at_least: int | None
    min_words: int
    numbers_only: bool = False
    gaps_only: bool = False
    phrase_reach_words: int = 0
    year_after_day_words: int = 0
    closed_by: frozenset[str] = frozenset()
    heads: frozenset[str] = frozenset()
    not_after: frozenset[str] = frozenset()
    not_after_words: int = 0


def _misheard_year_end(
    words: Sequence[TimedWord], cores: Sequence[str], rule: CueRule, first: int, last: int
) -> int:
    """The region's last word once it takes a year the recogniser wrote as ordinary words, or ``last``.

    A date of birth is said with its year. A region after "born on" that holds a month and ends on a day said
    as an ordinal and a comma, with no number after it, takes the one to ``year_after_day_words`` words up to
    the next pause ("born on March twenty fifth, and he noted | she ..."): a year never ends on an ordinal, so
    the year was heard as those words. A number word among them (the year heard) or a sentence end keeps the
    region as it was.
    """
    from anonpsy.audio.spoken import MONTHS, ORDINALS

    day = cores[last].split("-")[-1]
    if not (day in ORDINALS or re.fullmatch(r"\d{1,2}(st|nd|rd|th)", day)):
        return last
    if not words[last].text.rstrip().endswith(","):
        return last
    if not any(c in MONTHS for c in cores[first:last]):
        return last
    n = len(words)
    for k in range(last + 1, min(n, last + 1 + rule.year_after_day_words)):
        if is_number_word(cores[k]) or _ends_sentence(words[k].text):
            return last
        if k + 1 >= n or words[k + 1].start - words[k].end >= SENTENCE_PAUSE_S:
            return k
    return last


@dataclass(frozen=True)
class CueMatch:
    """Words ``[first, last]`` that a rule marks as an identifier (or, for a gap, the rule alone)."""

    rule: CueRule
    first: int
    last: int


@dataclass(frozen=True)
class CueSet:
    """All cue rules of a file, ready to match."""

    rules: tuple[CueRule, ...]
    fillers: frozenset[str]

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> CueSet:
        """Validate and compile a rule document (raises pydantic's ``ValidationError``)."""
        f = CueFile.model_validate(doc)
        rules = tuple(
            CueRule(
                r.id,
                r.type.value,
                tuple(sorted({_phrase(p) for p in r.before if _phrase(p)}, key=len, reverse=True)),
                tuple(sorted({_phrase(p) for p in r.after if _phrase(p)}, key=len, reverse=True)),
                r.reach_words,
                r.reach_seconds,
                r.stop_at_pause_ms / 1000.0,
                frozenset(_core(w) for w in r.stop_words),
                r.digits_at_least,
                r.min_words,
                r.numbers_only,
                r.gaps_only,
                r.phrase_reach_words,
                r.year_after_day_words,
                frozenset(_core(w) for w in r.closed_by),
                frozenset(_core(w) for w in r.heads),
                frozenset(_core(w) for w in r.not_after),
                r.not_after_words,
            )
            for r in f.rules
        )
        return cls(rules, frozenset(_core(w) for w in f.fillers))

    # -- matching ------------------------------------------------------------------------------------------

    def _skip_fillers_back(self, cores: Sequence[str], end: int) -> int:
        while end > 0 and cores[end - 1] in self.fillers:
            end -= 1
        return end

    def _skip_fillers_fwd(self, cores: Sequence[str], start: int) -> int:
        while start < len(cores) and cores[start] in self.fillers:
            start += 1
        return start

    def before_match(
        self, cores: Sequence[str], end: int, *, with_gap_rules: bool = True
    ) -> tuple[CueRule, int] | None:
        """The rule whose ``before`` phrase ends right before index ``end`` (fillers skipped), longest first.

        Returns the rule and the phrase length; ``gaps_only`` rules lose ties and are left out when
        ``with_gap_rules`` is false.
        """
        stop = self._skip_fillers_back(cores, end)
        best: tuple[CueRule, int] | None = None
        for rule in self.rules:
            if rule.gaps_only and not with_gap_rules:
                continue
            for phrase in rule.before:
                n = len(phrase)
                if n <= stop and tuple(cores[stop - n : stop]) == phrase:
                    if best is None or n > best[1] or (n == best[1] and best[0].gaps_only):
                        best = (rule, n)
                    break
        return best

    def after_match(self, cores: Sequence[str], start: int) -> tuple[CueRule, int] | None:
        """The rule whose ``after`` phrase starts at index ``start`` (fillers skipped), longest first."""
        begin = self._skip_fillers_fwd(cores, start)
        best: tuple[CueRule, int] | None = None
        for rule in self.rules:
            for phrase in rule.after:
                n = len(phrase)
                if tuple(cores[begin : begin + n]) == phrase:
                    if best is None or n > best[1]:
                        best = (rule, n)
                    break
        return best

    def classify_gap(self, before: Sequence[str], after: Sequence[str]) -> CueRule | None:
        """The rule that makes a gap between these words an identifier, or None."""
        b = [_core(w) for w in before]
        a = [_core(w) for w in after]
        hit_b = self.before_match(b, len(b))
        hit_a = self.after_match(a, 0)
        if hit_b and hit_a:
            if hit_b[0].gaps_only != hit_a[0].gaps_only:
                return hit_a[0] if hit_b[0].gaps_only else hit_b[0]
            return hit_b[0] if hit_b[1] >= hit_a[1] else hit_a[0]
        if hit_b:
            return hit_b[0]
        return hit_a[0] if hit_a else None

    def spans(self, words: Sequence[TimedWord]) -> list[CueMatch]:
        """Recognised words that follow a ``before`` cue (see the module docstring)."""
        cores = [_core(w.text) for w in words]
        out: list[CueMatch] = []
        for p in range(1, len(words) + 1):
            hit = self.before_match(cores, p, with_gap_rules=False) or self._head_match(words, cores, p)
            if hit is None:
                continue
            rule = hit[0]
            if rule.digits_at_least is not None or rule.gaps_only:
                continue
            first = p  # fillers right after the cue are muted with the region
            if first >= len(words):
                continue
            if _closes_sentence(words, cores, p - 1):
                continue  # the cue closes its sentence: the next sentence's first words are not its region
            last = first - 1
            t0 = words[first].start
            stray = 0  # consecutive words of a number region that are not numbers
            numbers = 0  # number words the region took
            end = min(len(words), first + rule.reach_words)
            reached = False  # the region took ``reach_words`` words and nothing else ended it
            for k in range(first, end):
                if k > first and words[k].start - words[k - 1].end >= rule.stop_at_pause:
                    break
                if k > first and _number_ended(words, cores, k, numbers):
                    break
                if cores[k] in rule.stop_words and not (
                    k == first and (self._name_syllable(words, cores, rule, k)
                                    or (is_unsure(words[k]) and not self._opens_cue(cores, k)))
                ):
                    break
                # A lower-case word the recogniser was unsure of right after the number's words, in its sentence,
                # is a digit it misheard ("four, four, eight, six, so dilate, or," for "... six oh nine eight oh");
                # a capitalised one starts the next sentence it did not close.
                misheard = (k > first and is_unsure(words[k]) and not _ends_sentence(words[k - 1].text)
                            and not words[k].text[:1].isupper())
                if rule.numbers_only and not is_numberish(cores[k]) and not misheard:
                    # One misheard word between numbers ("were | no free aid") stays inside the region.
                    if stray or k + 1 >= end or not is_numberish(cores[k + 1]) or _ends_sentence(words[k].text):
                        break
                    stray += 1
                    continue
                stray = 0
                numbers += is_number_word(cores[k])
                if words[k].end - t0 > rule.reach_seconds and k > first:
                    break
                if k > first and self.before_match(cores, k, with_gap_rules=False) is not None:
                    break  # the next cue starts its own region
                last = k
                if _ends_sentence(words[k].text) and (
                    k + 1 >= len(words) or words[k + 1].start - words[k].end >= SENTENCE_PAUSE_S
                ):
                    break
            else:
                reached = last == end - 1 and end - first == rule.reach_words
            if reached and rule.phrase_reach_words:
                last = self._to_phrase_end(words, cores, rule, last)
            if rule.closed_by:
                last = max(last, self._to_closing_word(words, cores, rule, first))
            if rule.year_after_day_words and last >= first:
                last = _misheard_year_end(words, cores, rule, first, last)
            if last >= first:
                out.append(CueMatch(rule, first, last))
        for q in range(len(words)):
            hit = self.after_match(cores, q)
            if hit is None or hit[0].digits_at_least is not None or hit[0].gaps_only:
                continue
            rule = hit[0]
            last = q - 1
            first = q
            t1 = words[last].end if last >= 0 else 0.0
            for k in range(last, max(-1, q - 1 - rule.reach_words), -1):
                if k < last and words[k + 1].start - words[k].end >= rule.stop_at_pause:
                    break
                if (cores[k] in rule.stop_words and not is_unsure(words[k])) \
                        or cores[k] in self.fillers:
                    break
                if t1 - words[k].start > rule.reach_seconds and k < last:
                    break
                if words[k].text.rstrip().endswith(_SENTENCE_END):
                    break
                first = k
            if first <= last:
                out.append(CueMatch(rule, first, last))
        return out

    def _opens_cue(self, cores: Sequence[str], k: int) -> bool:
        """Does a ``before`` phrase of more than one word start at word ``k`` ("her brother")?"""
        return any(len(ph) > 1 and tuple(cores[k : k + len(ph)]) == ph for r in self.rules for ph in r.before)

    def _head_match(self, words: Sequence[TimedWord], cores: Sequence[str], p: int) -> tuple[CueRule, int] | None:
        """The rule one of whose ``heads`` is word ``p - 1``, written with a comma and followed by a capitalised
        word mid-sentence, the way a recogniser sets off a name ("for a brother, Candela's, Vertaman." for "her
        brother, Candelas Virtanen"): the head's own words before it were misheard."""
        if p >= len(words) or not words[p - 1].text.rstrip().endswith(","):
            return None
        nxt = words[p].text.strip(_PUNCT)
        if not nxt or not nxt[0].isupper() or cores[p] in ("i", "i'm"):
            return None
        return next(((r, 1) for r in self.rules if cores[p - 1] in r.heads and cores[p] not in r.stop_words), None)

    @staticmethod
    def _name_syllable(words: Sequence[TimedWord], cores: Sequence[str], rule: CueRule, k: int) -> bool:
        """Is stop word ``k``, right after a person cue, a name's first syllable heard as a function word?

        "his partner and Salvo, who ..." for "his partner, Ansaldo, who ...": a short function word right after
        the cue and before a capitalised word the recogniser wrote mid-sentence starts the name.
        """
        if rule.type != "PERSON" or cores[k] not in _NAME_SYLLABLES or k + 1 >= len(words):
            return False
        if _ends_sentence(words[k].text) or words[k].text.rstrip().endswith(","):
            return False
        nxt = words[k + 1].text.strip(_PUNCT)
        return bool(nxt) and nxt[0].isupper() and cores[k + 1] not in ("i", "i'm")

    def _to_phrase_end(self, words: Sequence[TimedWord], cores: Sequence[str], rule: CueRule, last: int) -> int:
        """The region's last word once it runs on to the comma or full stop the recogniser wrote after it.

        A name heard as more words than ``reach_words`` ("her husband, Raffailey knows it alone, brought her")
        ends at the punctuation that closes it, when that comes within ``phrase_reach_words`` more words with
        no stop word, pause or cue between.
        """
        if words[last].text.rstrip().endswith((",", *_SENTENCE_END)):
            return last
        for k in range(last + 1, min(len(words), last + 1 + rule.phrase_reach_words)):
            if words[k].start - words[k - 1].end >= rule.stop_at_pause or cores[k] in rule.stop_words:
                return last
            if self.before_match(cores, k, with_gap_rules=False) is not None:
                return last
            if words[k].text.rstrip().endswith((",", ";", *_SENTENCE_END)):
                return k
        return last

    @staticmethod
    def _to_closing_word(words: Sequence[TimedWord], cores: Sequence[str], rule: CueRule, first: int) -> int:
        """The word before the first of ``rule.closed_by`` within ``reach_words`` + 2 words from ``first``, or
        ``first - 1``: "this is all after all calling about my appointment" names the caller with every word
        between, stop words too (past ``reach_words``, only where no subject or verb of a clause is among
        them). A sentence end or a pause before the closing word ends the search."""
        # The closing word may come up to two words past ``reach_words``: a name heard as several short words
        # ("this is Ignacy out with her and calling") is closed by it all the same.
        for k in range(first, min(len(words), first + rule.reach_words + 3)):
            if k > first and words[k].start - words[k - 1].end >= rule.stop_at_pause:
                break
            if cores[k] in rule.closed_by:
                if k > first + rule.reach_words and any(cores[j] in _CLAUSE_SUBJECTS for j in range(first, k)):
                    break  # "this is all that she was calling about": a clause, not a name
                return k - 1
            if _ends_sentence(words[k].text):
                break
        return first - 1

    def number_rules(self) -> tuple[CueRule, ...]:
        """Rules on spoken numbers (``digits_at_least``)."""
        return tuple(r for r in self.rules if r.digits_at_least is not None)

    def number_spans(self, words: Sequence[str]) -> list[CueMatch]:
        """Numbers said in at least ``min_words`` words with at least ``digits_at_least`` digits."""
        rules = self.number_rules()
        if not rules:
            return []
        from anonpsy.audio.spoken import normalize

        out: list[CueMatch] = []
        for tok in normalize(words).tokens:
            if not _NUMBER.fullmatch(tok.text):
                continue
            digits = sum(ch.isdigit() for ch in tok.text)
            # A number of five digits or more the recogniser wrote in digits ("83311") was said in about one word
            # per digit; four digits ("1994", "1000") may have been two words.
            said = sum(_said_words(w) for w in words[tok.first : tok.last + 1])
            for rule in rules:
                assert rule.digits_at_least is not None
                if _after_any(words, tok.first, rule.not_after, rule.not_after_words):
                    continue
                if digits >= rule.digits_at_least and said >= rule.min_words:
                    out.append(CueMatch(rule, tok.first, tok.last))
                    break
        return out


#: A pause after a spoken number of at least :data:`NUMBER_END_WORDS` words that ends it when ordinary words follow.
NUMBER_END_PAUSE_S = 0.3
NUMBER_END_WORDS = 4


def _number_ended(words: Sequence[TimedWord], cores: Sequence[str], k: int, numbers: int) -> bool:
    """Does a cue's region end before word ``k``, a word that is no number after a number word? It does where the
    recogniser closed the number with a full stop ("... two five one six. police found him"), and where the
    region has taken :data:`NUMBER_END_WORDS` number words or more and the speaker paused before word ``k``:
    what follows a phone number said in full is the next sentence, whatever the pause was."""
    if is_numberish(cores[k]) or not is_number_word(cores[k - 1]):
        return False
    return numbers >= NUMBER_END_WORDS and words[k].start - words[k - 1].end >= NUMBER_END_PAUSE_S


def _after_any(words: Sequence[str], first: int, cues: frozenset[str], most: int) -> bool:
    """Is one of ``cues`` among the ``most`` words before word ``first``, in its sentence? A letter or two
    written with a full stop is part of an abbreviation, not a sentence end, and an abbreviation spelled in such
    parts ("Ph. Q.") is read as one word ("phq")."""
    spelled = ""
    for k in range(first - 1, max(-1, first - 1 - most), -1):
        text = words[k].strip()
        letters = len(text.strip(_PUNCT)) <= 2 and text.endswith(".")
        if text.endswith(_SENTENCE_END) and not letters:
            return False
        spelled = _core(text) + spelled if letters else ""
        if _core(text) in cues or spelled in cues:
            return True
    return False


def load_cue_doc(path: Path | None = None) -> dict[str, Any]:
    """The cue rule document (``rules/audio/cues.yaml`` by default)."""
    p = path or rules_dir() / "audio" / "cues.yaml"
    doc = load_yaml(p.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise AnonpsyError(R100_RULE_SCHEMA, "audio cue file is not a mapping; run `anonpsy rules check`", p.name)
    return doc


@lru_cache(maxsize=4)
def _default(path: str) -> CueSet:
    try:
        return CueSet.from_doc(load_cue_doc(Path(path)))
    except ValidationError:
        raise AnonpsyError(
            R100_RULE_SCHEMA, "audio cue rules are invalid; run `anonpsy rules check`", Path(path).name
        ) from None


def default_cues() -> CueSet:
    """The installed cue rules (cached)."""
    return _default(str(rules_dir() / "audio" / "cues.yaml"))


__all__ = ["KIND", "CueFile", "CueMatch", "CueRule", "CueRuleModel", "CueSet", "default_cues", "load_cue_doc"]
