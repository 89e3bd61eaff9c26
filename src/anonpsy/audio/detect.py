"""Identifiers in a timed transcript: which words to mute, and why.

Three rule sources, and a model with ``backend="llm"``:

* the masking analyzer (:func:`anonpsy.phi.analyzer.analyze`) on the written form of the transcript
  (:func:`anonpsy.audio.spoken.normalize`), its character spans mapped back to words; ages of 89 or less are
  not Safe Harbor identifiers (:func:`anonpsy.phi.analyzer.safe_harbor_category`) and stay audible;
* cue spans (:meth:`anonpsy.audio.cues.CueSet.spans`): words right after "my name is", "doctor", "call me at";
* spoken numbers (:meth:`anonpsy.audio.cues.CueSet.number_spans`): digit-by-digit and paired numbers;
* unknown proper nouns (:func:`proper_noun_hits`): a recogniser that writes case (Moonshine, whisper) spells a
  name it has never heard as a capitalised word no English dictionary lists ("Zoramathan", "Akankwo");
  such words, with the capitalised words and name particles joined to them, are muted as a name (a place
  after "in", "from", "near", "at", "to"). The dictionary is PocketSphinx's (134,000 words, names included);
* the opening words of a sentence before "is a forty two year old" (:func:`subject_hits`), "is" heard as any
  short word;
* with the llm backend, the chunked detector (:class:`anonpsy.phi.llm_detect.LLMDetector`) on the same written
  form; a chunk the model could not check is muted whole (``on_llm_failure="mute"``) or fails the recording.

Every result names its word range, its identifier type and the detector (``rules:<rule id>`` or
``llm:<template>@v<N>``); never the words.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from anonpsy.audio.asr import Word
from anonpsy.audio.cues import DIGIT_SOUNDALIKES, SENTENCE_PAUSE_S, UNSURE_BELOW, CueSet, is_unsure
from anonpsy.audio.spoken import Normalized, name_words, normalize
from anonpsy.phi.spans import Span

AnalyzeFn = Callable[[str], Sequence[Span]]
OnLLMFailure = Literal["error", "mute"]


@dataclass(frozen=True)
class WordHit:
    """Words ``[first, last]`` of the transcript hold an identifier of ``type`` found by ``detector``."""

    first: int
    last: int
    type: str
    reason: str  # "phi" | "unchecked"
    detector: str


def _default_analyze(text: str) -> Sequence[Span]:
    from anonpsy.phi.analyzer import analyze

    return analyze(text)


def _age_within_limit(span: Span, text: str) -> bool:
    """An age of 89 or less: not a Safe Harbor identifier, and clinically needed."""
    if span.type != "AGE":
        return False
    from anonpsy.phi.analyzer import safe_harbor_category

    return safe_harbor_category(span, text) is None


def analyzer_hits(norm: Normalized, analyze: AnalyzeFn) -> list[WordHit]:
    """Analyzer spans on the written form, as word ranges (ages of 89 or less are kept audible)."""
    hits = []
    for span in analyze(norm.text):
        if _age_within_limit(span, norm.text):
            continue
        rng = norm.words_of(span.start, span.end)
        if rng is not None:
            hits.append(WordHit(rng[0], rng[1], span.type, "phi", f"rules:{span.recognizer or 'analyzer'}"))
    return hits


def cue_hits(words: Sequence[Word], cues: CueSet) -> list[WordHit]:
    """Cue spans and spoken numbers."""
    out = [WordHit(m.first, m.last, m.rule.type, "phi", f"rules:{m.rule.id}") for m in cues.spans(words)]
    out += [
        WordHit(m.first, m.last, m.rule.type, "phi", f"rules:{m.rule.id}")
        for m in cues.number_spans([w.text for w in words])
    ]
    return out


_PUNCT = ".,;:!?\"()[]{}"
_SENTENCE_END = (".", "?", "!")
_PARTICLES = frozenset({"de", "la", "le", "van", "von", "der", "den", "del", "della", "di", "da", "du", "dos", "bin",
                        "al", "el", "st", "mac", "ter", "ten"})
_PLACE_BEFORE = frozenset({"in", "from", "near", "at", "to"})
_PHRASE_END = (*_SENTENCE_END, ",", ";", ":")


@lru_cache(maxsize=1)
def lexicon() -> frozenset[str]:
    """Lower-case words of PocketSphinx's English dictionary (empty when PocketSphinx is not installed)."""
    try:
        import pocketsphinx
    except ImportError:
        return frozenset()
    path = Path(pocketsphinx.get_model_path()) / "en-us" / "cmudict-en-us.dict"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(line.split(" ", 1)[0].split("(", 1)[0] for line in text.splitlines() if line)


def _capitalised(text: str) -> bool:
    t = text.strip(_PUNCT)
    return bool(t) and t[0].isupper()


def _unknown(text: str, known: frozenset[str]) -> bool:
    """A word no dictionary lists: one of its parts is unknown, or it joins three parts or more with hyphens that
    the dictionary does not list as one word ("nickel-a-ro" for "Nikola Row"; "mother-in-law" is listed). A
    recogniser writes a name it never learnt as the syllables it heard; a compound with a number word in it
    ("two-year-old") is ordinary speech."""
    t = text.strip(_PUNCT).replace("\u2019", "'")
    if t.endswith(("'s", "'S")):
        t = t[:-2]
    parts = [p for p in re.split(r"[-']", t) if p]
    if not parts or not all(p.isalpha() for p in parts):
        return False
    if any(p.lower() not in known for p in parts):
        return True
    hyphened = [p for p in t.split("-") if p]
    if len(hyphened) < 3:
        return False
    from anonpsy.audio.cues import is_number_word

    return t.lower() not in known and not any(is_number_word(p.lower()) for p in hyphened)


def _safelisted(words: Sequence[Word], first: int, last: int) -> bool:
    """Is the span a clinical term of the masking safelist (drug, eponym, scale), as the analyzer judges names?"""
    from anonpsy.phi.analyzer import Analyzer

    lo = max(0, first - 8)
    text = " ".join(w.text for w in words[lo : last + 9])
    start = len(" ".join(w.text for w in words[lo:first])) + (1 if first > lo else 0)
    end = start + len(" ".join(w.text for w in words[first : last + 1]).rstrip(_PUNCT))
    return Analyzer.default().safelist.suppresses(text, Span(start, end, "PERSON"))


def proper_noun_hits(words: Sequence[Word], known: frozenset[str] | None = None) -> list[WordHit]:
    """Capitalised words no dictionary lists, with the name they belong to (see the module docstring).

    Inactive on transcripts without capitals (PocketSphinx writes only dictionary words, in lower case) and
    without a dictionary. Clinical terms of the masking safelist (brand-name drugs, eponyms, scales) are not
    names.
    """
    known = lexicon() if known is None else known
    if not known or not any(_capitalised(w.text) for w in words if w.text.strip(_PUNCT).lower() != "i"):
        return []
    hits: list[WordHit] = []
    k = 0
    n = len(words)
    while k < n:
        if not (_capitalised(words[k].text) and _unknown(words[k].text, known)) or _safelisted(words, k, k):
            k += 1
            continue
        first = last = k
        # Join capitalised words and particles on both sides, within the sentence and without a comma between
        # (never back into the hit before, nor over "I").
        floor = hits[-1].last + 1 if hits else 0
        while first > floor:
            prev = words[first - 1].text
            if prev.rstrip().endswith(_PHRASE_END):
                break
            opens = first == 1 or words[first - 2].text.rstrip().endswith(_SENTENCE_END)
            pc = prev.strip(_PUNCT).lower()
            joins_name = _capitalised(prev) and pc not in _PLACE_BEFORE and pc != "i" and not (
                opens and not _unknown(prev, known) and pc not in name_words()
            )
            particle = pc in _PARTICLES and first - 2 >= floor and _capitalised(words[first - 2].text)
            if joins_name or particle:
                first -= 1
            else:
                break
        while last + 1 < n and not words[last].text.rstrip().endswith(_PHRASE_END):
            nxt = words[last + 1].text
            if _capitalised(nxt) and nxt.strip(_PUNCT).lower() != "i":
                last += 1
            elif nxt.strip(_PUNCT).lower() in _PARTICLES and last + 2 < n and _capitalised(words[last + 2].text):
                last += 2
            else:
                break
        place = first > 0 and words[first - 1].text.strip(_PUNCT).lower() in _PLACE_BEFORE
        if _safelisted(words, first, last):
            k = last + 1
            continue
        hits.append(WordHit(first, last, "LOCATION" if place else "PERSON", "phi", "rules:audio.unknown-proper-noun"))
        k = last + 1
    return hits


_NAME_CUES = ("audio.person.name-intro", "audio.person.title")
#: Cues that name the source of a report ("dictated by", "referred by"): an article after them stops their
#: region, but an article before a made-up word is the name's first syllable ("dictated by the masclerct").
_SOURCE_CUES = ("audio.person.collateral",)
_ARTICLES = frozenset({"the", "a", "an"})
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "st", "prof"})
_CLAUSE_WORDS = frozenset({"and", "or", "but", "was", "is", "are", "were", "who", "which", "that", "has", "had",
                           "have", "with", "from", "for", "at", "in", "on", "of", "to", "the", "a", "an", "she", "he",
                           "they", "her", "his", "it", "i", "my", "we", "said", "says", "reports", "today"})


def _core(text: str) -> str:
    return text.strip(_PUNCT).lower()


def _ends(text: str, marks: tuple[str, ...]) -> bool:
    return text.rstrip().endswith(marks)


def _namelike(words: Sequence[Word], k: int, known: frozenset[str]) -> bool:
    """A word the recogniser wrote for a name: capitalised (not opening a sentence, not "I") or unknown."""
    t = words[k].text
    if _core(t) in ("", "i"):
        return False
    opens = k == 0 or (_ends(words[k - 1].text, _SENTENCE_END) and _core(words[k - 1].text) not in _TITLES)
    return (_capitalised(t) and not opens) or (bool(known) and _unknown(t, known))


#: Words that open a phrase and never end one: a conjunction, article or preposition is followed by what it
#: joins or governs.
_PHRASE_OPENERS = frozenset({"and", "or", "nor", "of", "the", "a", "an", "to", "in", "with", "for", "at", "from",
                             "by", "on"})


def _name_word_after(words: Sequence[Word], k: int) -> bool:
    """Word ``k`` goes on the name before it: capitalised mid-sentence, no "I", month, weekday, abbreviation or
    clinical term of the masking safelist."""
    from anonpsy.audio.spoken import MONTHS, WEEKDAYS

    t = words[k].text.strip(_PUNCT)
    c = t.lower()
    if not _capitalised(t) or c in ("i", "i'm", "i've", "i'd", "i'll") or c in MONTHS or c in WEEKDAYS:
        return False
    if t.isupper() and len(t) <= 4:
        return False
    return not _safelisted(words, k, k)


def _dangling(words: Sequence[Word], k: int) -> bool:
    """Word ``k`` is a phrase opener with nothing after it: the last word, or one followed by a pause.

    "The patient's name is Jane Perlin, and | Concentration is poor": the recogniser wrote the name's last
    syllable as "and", which cannot end a phrase; right after an identifier it is part of it.
    """
    if not 0 < k < len(words) or _core(words[k].text) not in _PHRASE_OPENERS:
        return False
    return k + 1 >= len(words) or words[k + 1].start - words[k].end >= SENTENCE_PAUSE_S


#: Words a clause cannot end on: subject pronouns and the words that open a relative clause.
_CLAUSE_OPENERS = frozenset({"he", "she", "they", "we", "who", "whom", "whose", "where", "which"})
_CONJUNCTIONS = frozenset({"and", "or", "but", "nor"})


def _dangling_pair(words: Sequence[Word], k: int) -> bool:
    """Words ``k`` and ``k + 1`` open a phrase or a clause with nothing after them: the last words, or two followed
    by a pause, with no punctuation or pause between them; not a conjunction and its subject, which a speaker
    pauses after as often.

    "hospital in Sofo, Burning, where he | He has been drinking": the recogniser wrote the place's last syllables
    as "where he", which cannot end a sentence; right after an identifier they are part of it.
    """
    if not 0 < k < len(words) - 1 or _ends(words[k].text, _PHRASE_END):
        return False
    if words[k + 1].start - words[k].end >= SENTENCE_PAUSE_S:
        return False
    if _core(words[k].text) in _CONJUNCTIONS or not all(
        _core(words[m].text) in _PHRASE_OPENERS | _CLAUSE_OPENERS for m in (k, k + 1)
    ):
        return False  # "..., and she | was tired": a speaker pauses after a conjunction and its subject
    return k + 2 >= len(words) or words[k + 2].start - words[k + 1].end >= SENTENCE_PAUSE_S


def _fragment(text: str) -> bool:
    c = _core(text)
    return c.isalpha() and len(c) <= 5 and c not in _CLAUSE_WORDS


def _misheard_tail(words: Sequence[Word], last: int, known: frozenset[str]) -> int:
    """The last word of a name or place ending at ``last`` with the rest of it the recogniser misspelled.

    Up to two lower-case words no dictionary lists ("Cheriff's affax"), and after an unknown word the recogniser
    closed with a comma ("Lindk, mist") a short lower-case fragment that is not a clause word, or a chain of up
    to four short fragments it separated by commas ("Opposedment, Ices, part, as over,").
    """
    n = len(words)
    unknown_taken = 0
    while (unknown_taken < 2 and last + 1 < n and known and not _ends(words[last].text, _PHRASE_END)
           and _unknown(words[last + 1].text, known) and not _capitalised(words[last + 1].text)):
        last += 1  # a surname the recogniser spelled as a word no dictionary lists ("Cheriff's affax")
        unknown_taken += 1
    if (last + 1 < n and _ends(words[last].text, (",",)) and known and _unknown(words[last].text, known)):
        frag = words[last + 1].text
        c = _core(frag)
        if c and c.isalpha() and c == frag.strip(_PUNCT) and len(c) <= 4 and c not in _CLAUSE_WORDS:
            last += 1
        elif _fragment(words[last + 1].text) and _ends(words[last + 1].text, (",",)):
            # a chain of short fragments the recogniser separated by commas ("Ices, part, as over,")
            taken = 0
            while last + 1 < n and taken < 4 and _fragment(words[last + 1].text) and (
                _ends(words[last + 1].text, (",",))
                or (last + 2 < n and _fragment(words[last + 2].text) and _ends(words[last + 2].text, (",",)))
            ):
                last += 1
                taken += 1
    return last


#: At least this many unsure words in a row: one or two unsure words next to an identifier are as often ordinary
#: speech the recogniser misheard (a fast or clipped word) as the rest of the identifier.
_UNSURE_MIN = 3
_UNSURE_TYPES = frozenset({"PERSON", "LOCATION", "ADDRESS"})
#: A run of unsure words this many words away from an identifier, in its sentence, still joins it.
_UNSURE_BRIDGE_WORDS = 1


def _apart(words: Sequence[Word], k: int, nxt: int) -> bool:
    """Word ``nxt`` right after word ``k`` starts a new sentence or follows a pause."""
    return nxt == k + 1 and (_ends(words[k].text, _SENTENCE_END) or words[nxt].start - words[k].end >= SENTENCE_PAUSE_S)


def _unsure_runs(words: Sequence[Word], below: float = UNSURE_BELOW) -> list[tuple[int, int]]:
    """Runs of at least :data:`_UNSURE_MIN` words in a row each under ``below``, within a sentence and with no
    pause between them (first and last word)."""
    n = len(words)
    runs: list[tuple[int, int]] = []
    k = 0
    while k < n:
        if not is_unsure(words[k], below):
            k += 1
            continue
        j = k
        while (j + 1 < n and is_unsure(words[j + 1], below) and not _ends(words[j].text, _SENTENCE_END)
               and words[j + 1].start - words[j].end < SENTENCE_PAUSE_S):
            j += 1
        if j - k + 1 >= _UNSURE_MIN:
            runs.append((k, j))
        k = j + 1
    return runs


#: Possessive determiners: a relative or carer is named after one ("his partner, Lajos", "my doctor, Zabarella").
_POSSESSIVES = frozenset({"his", "her", "my", "their", "your", "our"})


def possessive_unsure_hits(words: Sequence[Word], below: float = UNSURE_BELOW) -> list[WordHit]:
    """A run of words the recogniser was unsure of right after a possessive determiner: a relative or carer and
    their name, both heard as ordinary words ("his parlor, large of, who is supportive" for "his partner, Lajos,
    who is supportive"; "my nught, or memorella, in" for "... Doctor Zabarella in").

    What follows "his", "her" or "my" in a dictation is a person, a body part or a belonging; the words for
    those are common, and the recogniser is sure of them. A run of at least :data:`_UNSURE_MIN` words each under
    ``below`` (:func:`_unsure_runs`) that starts right after the possessive, in its phrase, is the relation
    misheard and the name after it: no rule on the words themselves can place it, since the recogniser wrote
    the closest words it knows. A recogniser that reports no confidences adds nothing.
    """
    out: list[WordHit] = []
    for first, last in _unsure_runs(words, below):
        if first >= 1 and _core(words[first - 1].text) in _POSSESSIVES and not _ends(words[first - 1].text,
                                                                                      _PHRASE_END):
            out.append(WordHit(first, last, "PERSON", "phi", "rules:audio.possessive-unsure"))
    return out


def unsure_extensions(words: Sequence[Word], hits: Sequence[WordHit], below: float = UNSURE_BELOW) -> list[WordHit]:
    """Runs of words the recogniser was unsure of, joined to the name, place or address hit they touch.

    A name, place or street the recogniser did not know is written as the closest ordinary words it knows, so
    what it heard of the rest of it beside the part a rule placed reads as dictionary words, not capitalised,
    often clause words ("nine hundred five what kings part"): no rule on the words themselves can take them
    without taking ordinary speech too. What sets them apart is the recogniser's own confidence, which does not
    depend on which words it chose. A run is at least :data:`_UNSURE_MIN` words in a row each under ``below``,
    within a sentence and with no pause between them; a run that overlaps or touches a PERSON, LOCATION or
    ADDRESS hit joins it, and so does one at most :data:`_UNSURE_BRIDGE_WORDS` word away from it in its sentence
    with no pause between: the word between is a syllable of the name heard as a word the recogniser was surer
    of ("Christie, I'm more an ex, oop, my phone" for "Krystyna Aybora Aksu, by phone"). A recogniser that
    reports no confidences (PocketSphinx, the moonshine-cpp library) adds nothing.
    """
    reach = 1 + _UNSURE_BRIDGE_WORDS
    out: list[WordHit] = []
    for first, last in _unsure_runs(words, below):
        for h in hits:
            if h.type in _UNSURE_TYPES and h.first - reach <= last and first <= h.last + reach and not (
                any(_apart(words, m, m + 1) for m in range(h.last, first))
                or any(_apart(words, m, m + 1) for m in range(last, h.first))
            ):
                out.append(WordHit(min(first, h.first), max(last, h.last), h.type, h.reason,
                                   "rules:audio.unsure-continuation"))
                break
    return out


#: Verbs of which a named person is the subject in a dictation ("Her sister Harriet called the clinic").
_PERSON_VERBS = frozenset({"called", "calls", "brought", "returns", "returned", "reports", "reported", "came",
                           "visited", "died", "phoned"})
#: A word under this confidence counts towards a misheard subject; at least :data:`_SUBJECT_UNSURE_MIN` of them.
_SUBJECT_UNSURE_BELOW = 0.6
_SUBJECT_UNSURE_MIN = 2
_SUBJECT_MOST_WORDS = 5


def unsure_subject_hits(words: Sequence[Word], below: float = _SUBJECT_UNSURE_BELOW) -> list[WordHit]:
    """The words before a person's verb ("called", "brought", "reports") that open its sentence or phrase, where
    the recogniser was unsure of at least two of them: the subject, a relative and their name, heard as
    ordinary words ("Posse sat hand or called the clinic" for "Her sister Thando called the clinic").

    The subject starts after a sentence end or a comma at most :data:`_SUBJECT_MOST_WORDS` words before the
    verb, with no pause or sentence end between its words; a pronoun or a noun that names no one that the
    recogniser was sure of ("She", "The patient") leaves it alone. Where the words after the nearest comma hold
    fewer than two unsure words, the subject may start after an earlier comma, where the recogniser was unsure of
    every word before the nearest one: a relative named in apposition is written between commas, and the
    relation misheard with the name ("persistor, catering, called the clinic" for "Her sister, Katelyn, called
    ..."); a relation heard right ("The sister, Amber, called") stays audible. A recogniser that reports no
    confidences adds nothing.
    """
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    for v in range(1, len(words)):
        if cores[v] not in _PERSON_VERBS:
            continue
        nearest = v  # where the subject starts after the nearest comma
        for s in range(v - 1, max(-1, v - 1 - _SUBJECT_MOST_WORDS), -1):
            if _ends(words[s].text, _SENTENCE_END) or words[s + 1].start - words[s].end >= SENTENCE_PAUSE_S:
                break  # a sentence end or a pause inside: the words before it are another sentence's
            if nearest < v and not is_unsure(words[s], below):
                break  # a relation heard right before the comma ("The sister, Amber, called") is no name
            if s > 0 and not _ends(words[s - 1].text, _PHRASE_END) \
                    and words[s].start - words[s - 1].end < SENTENCE_PAUSE_S:
                continue  # no sentence, phrase or pause opens the subject here
            nearest = min(nearest, s)
            if any(cores[k] in _UNNAMED_SUBJECTS and not is_unsure(words[k], UNSURE_BELOW) for k in range(s, v)):
                break
            if sum(is_unsure(words[k], below) for k in range(s, v)) >= _SUBJECT_UNSURE_MIN:
                out.append(WordHit(s, v - 1, "PERSON", "phi", "rules:audio.unsure-subject"))
                break
    return out


def name_extensions(words: Sequence[Word], hits: Sequence[WordHit], cues: CueSet,
                    known: frozenset[str] | None = None) -> list[WordHit]:
    """Name words a recogniser split or misheard, joined to the name hit or cue they belong to.

    * A name hit that ends on, or is followed by, a name particle ("Santiago de la | Aqua") takes the word
      after the particles.
    * A name hit that starts on a name-like word (capitalised mid-sentence or unknown) after "and", "an", "a",
      "in" or "on" that opens a phrase ("Dick, take it by, and re-agassion nurse practitioner") takes that word:
      the name's first syllable heard as a function word.
    * A name hit followed by capitalised words within its phrase and with no pause between takes them
      ("Kathleen | Lord Rickson."), but not "I", a month, a weekday, a short abbreviation or a clinical term
      of the masking safelist.
    * A name hit followed by up to two lower-case words no dictionary lists takes them ("Cheriff's affax").
    * A name hit whose last word is unknown and ends with a comma the recogniser inserted ("Lindk, mist")
      takes a following short lower-case fragment that is not a clause word, or a chain of up to four short
      fragments the recogniser separated by commas ("Opposedment, Ices, part, as over,").
    * After a name cue ("my name is", "doctor", "mister"), the words up to a capitalised or unknown word
      within four words ("name in use of Miller", "doctor, a kever") are the name, dictionary words or not,
      and a short lower-case word the recogniser closed with a comma right after it ("Mr. said, Look over,").
    * A name hit right after a comma takes the words up to the next comma, within two words and with no clause
      word among them: a name in apposition ("the brother, Attavio again, ...") ends at its closing comma.
    * After a cue that names a report's source ("dictated by", "referred by"), an article before a made-up
      lower-case word no dictionary or clinical lexicon lists ("dictated by the masclerct") is a name with it.
    * After any name cue ("his partner", "spoke with"), "and", "an", "a", "in" or "on" before such a made-up
      word is the name's first syllable heard as a function word, and the two are a name with the rest of it
      the recogniser misspelled ("his partner and sourdough, who" for "his partner, Ansaldo, who").
    * A name hit that starts on a capitalised word after "a" or "an" takes the article: an article rarely comes
      before a name, so it is the name's first syllable ("discussed with an Olivia Salo" for "... Ana Livia
      Salo").
    * A street or place hit after a compass word that follows "on", "at", "off", "outside" ("on South, Selamon
      Bouleymar") takes the compass word.
    * A place hit that starts on a name-like word after "and", "an", "a", "in" or "on" that opens a phrase takes
      that word, as a name does ("her husband, in Umdemoclean, brought her").
    * An address hit followed by a street type ("Cedar | Court") takes it; a place hit not followed by one takes
      the rest of the place spelled as made-up words, as a name does ("in bysoder, agba").
    * Any hit followed by a conjunction, article or preposition that ends the transcript or a pause
      ("name is Jane Perlin, and | Concentration ...") takes it (:func:`_dangling`), and so does one followed
      by two such words, or a pronoun or relative word, that end it ("in Sofo, Burning, where he | He has ...":
      :func:`_dangling_pair`).
    """
    known = lexicon() if known is None else known
    n = len(words)
    out: list[WordHit] = []
    for h in hits:
        last = h.last
        if h.type == "PERSON":
            while last + 1 < n and not _ends(words[last].text, _PHRASE_END):
                if _core(words[last].text) in _PARTICLES or _core(words[last + 1].text) in _PARTICLES:
                    nxt = last + 1
                    while nxt + 1 < n and _core(words[nxt].text) in _PARTICLES and not _ends(words[nxt].text,
                                                                                               _PHRASE_END):
                        nxt += 1
                    if _core(words[nxt].text) in _CLAUSE_WORDS:
                        break
                    last = nxt
                else:
                    break
            while last + 1 < n and not _ends(words[last].text, _PHRASE_END) and _name_word_after(words, last + 1) \
                    and words[last + 1].start - words[last].end < SENTENCE_PAUSE_S:
                last += 1  # "Kathleen Lord Rickson.": the capitalised words that go on a name belong to it
            last = _misheard_tail(words, last, known)
            if (h.first >= 1 and _ends(words[h.first - 1].text, (",",)) and not _ends(words[last].text, _PHRASE_END)):
                # A name set off by commas ("the brother, Attavio again, Acquisienne"): the words up to the
                # closing comma, within two and no clause word among them, are the rest of the name.
                for k in range(last + 1, min(n, last + 3)):
                    if _core(words[k].text) in _CLAUSE_WORDS or _ends(words[k].text, _SENTENCE_END) or (
                        words[k].start - words[k - 1].end >= SENTENCE_PAUSE_S
                    ):
                        break
                    if _ends(words[k].text, (",", ";")):
                        last = k
                        break
        elif h.type in ("ADDRESS", "LOCATION") and last + 1 < n and not _ends(words[last].text, _SENTENCE_END):
            from anonpsy.audio.spoken import STREET_TYPES

            if _core(words[last + 1].text) in STREET_TYPES:
                last += 1
            elif h.type == "LOCATION":
                last = _misheard_tail(words, last, known)  # a place heard as made-up words ("in bysoder, agba")
            if last + 1 < n and not _ends(words[last].text, _SENTENCE_END):
                last = max(last, _unit_end(words, last + 1))
        first = h.first
        if (h.type in ("ADDRESS", "LOCATION", "PERSON") and first >= 2 and _core(words[first - 1].text) in _COMPASS
                and _core(words[first - 2].text) in _STREET_PREPOSITIONS and not _ends(words[first - 2].text,
                                                                                        _PHRASE_END)):
            first -= 1  # "on South, Selamon Bouleymar": the compass word that opens a street name
        if (h.type in ("PERSON", "LOCATION") and first >= 1 and _core(words[first - 1].text) in _SYLLABLE_WORDS
                and not _ends(words[first - 1].text, _PHRASE_END)
                and (first == 1 or _ends(words[first - 2].text, _PHRASE_END)) and _namelike(words, first, known)):
            first -= 1  # "dictated by, and re-agassion, nurse practitioner": the first syllable heard as "and"
        elif (h.type == "PERSON" and first >= 1 and _core(words[first - 1].text) in ("a", "an")
                and not _ends(words[first - 1].text, _PHRASE_END) and _capitalised(words[first].text)
                and _core(words[first].text) != "i"):
            first -= 1  # "discussed with an Olivia Salo": an article before a name is the name's first syllable
        if (first, last) != (h.first, h.last):
            out.append(WordHit(first, last, h.type, h.reason, "rules:audio.name-extension"))
        if _dangling(words, last + 1):
            out.append(WordHit(first, last + 1, h.type, h.reason, "rules:audio.dangling-function-word"))
        elif _dangling_pair(words, last + 1):
            out.append(WordHit(first, last + 2, h.type, h.reason, "rules:audio.dangling-clause-opener"))
    cores = [_core(w.text) for w in words]
    for p in range(1, n):
        hit = cues.before_match(cores, p, with_gap_rules=False)
        if hit is None or hit[0].id not in _NAME_CUES:
            continue
        longer = cues.before_match(cores, p + 1, with_gap_rules=False) if p + 1 < n else None
        if longer is not None and longer[0].id in _NAME_CUES and longer[1] > hit[1]:
            continue  # "my name | is ...": the longer cue "my name is" reaches from the next word
        for k in range(p, min(n, p + 4)):
            if _namelike(words, k, known):
                if k + 1 < n and not _ends(words[k].text, _PHRASE_END) and _ends(words[k + 1].text, (",",)) \
                        and _fragment(words[k + 1].text) and not _capitalised(words[k + 1].text):
                    k += 1  # "Mr. said, Look over, report": the name's last syllable, closed by a comma
                out.append(WordHit(p, k, "PERSON", "phi", "rules:audio.name-cue-reach"))
                break
            if _ends(words[k].text, _SENTENCE_END):
                break
    for p in range(1, n - 1):
        hit = cues.before_match(cores, p, with_gap_rules=False)
        if hit is None or hit[0].id not in _SOURCE_CUES or cores[p] not in _ARTICLES:
            continue
        k = p + 1
        if not _ends(words[p].text, _PHRASE_END) and _rare_lower(words, k, known):
            out.append(WordHit(p, k, "PERSON", "phi", "rules:audio.name-cue-reach"))
    for p in range(1, n - 1):
        if cores[p] not in _SYLLABLE_WORDS or _ends(words[p].text, _PHRASE_END):
            continue
        hit = cues.before_match(cores, p, with_gap_rules=False)
        if hit is None or hit[0].type != "PERSON":
            continue
        k = p + 1
        if _rare_lower(words, k, known):
            out.append(WordHit(p, _misheard_tail(words, k, known), "PERSON", "phi", "rules:audio.name-cue-reach"))
    return out


_PLACE_PREPOSITIONS = frozenset({"in", "from", "near"})
_COMPASS = frozenset({"north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"})
_STREET_PREPOSITIONS = frozenset({"on", "at", "off", "along", "outside", "to", "from", "near"})


def _cased(words: Sequence[Word]) -> bool:
    return any(_capitalised(w.text) for w in words if _core(w.text) != "i")


def _initial(text: str) -> bool:
    """A single capital letter with a full stop ("M.")."""
    t = text.strip()
    return len(t) == 2 and t[0].isupper() and t[1] == "."


def _place_after_comma(words: Sequence[Word], last: int, placelike: Callable[[int], bool]) -> int:
    """The last word of a place once it takes the wider place after its comma ("in Sofo, Burning, where" for
    "in Sofo-Birnin-Gwari", "in Salem, Oregon."): one or two capitalised place-like words right after the
    comma that close their own phrase. Capitalised words that go on into the clause ("in Boston, Mary came")
    are not taken."""
    n = len(words)
    if not _ends(words[last].text, (",",)):
        return last
    for m in range(last + 1, min(n, last + 3)):
        if not placelike(m):
            return last
        if _ends(words[m].text, _PHRASE_END):
            return m
    return last


def _sentence_tail(words: Sequence[Word], last: int) -> int:
    """``last + 1`` when that word closes the sentence and nothing closes the phrase before it: the next word of a
    place spelled as heard, heard as an ordinary word ("in, barrague burgers." for "in Barra do Bugres.")."""
    if last + 1 < len(words) and not _ends(words[last].text, _PHRASE_END) \
            and _ends(words[last + 1].text, _SENTENCE_END):
        return last + 1
    return last


def place_hits(words: Sequence[Word], cues: CueSet | None = None) -> list[WordHit]:
    """Capitalised words after "in", "from", "near" in the middle of a sentence: a place, known word or not.

    A recogniser that writes case capitalises a place it heard as ordinary words ("in West Chase", "in Pow");
    months, weekdays, "I", short all-capital abbreviations ("in AA", "in ICU") and clinical terms of the
    masking safelist are not places; an initial before a capitalised word is part of the place ("in M. Till"
    for "in Ampthill"). A preposition the recogniser closed with a comma ("a hospital in, cast him at
    Peck-de-Bromo,") broke off a place it misheard: the words up to a name-like word (capitalised mid-sentence
    or unknown to the dictionary) within three words are the place. A lower-case word that neither dictionary
    nor the clinical lexicons list, right after the preposition or after one short word ("in his kinaporgal."
    for "in Ischia Porto"), is a place spelled as heard (:func:`_rare_lower`). Words that make up a cue's ``after``
    phrase with the preposition ("from Social Work", which says that a name comes before it) are context, not a
    place. A place closed by a comma takes the wider place after it (:func:`_place_after_comma`); a place
    spelled as heard or after a broken-off preposition takes the next word when that word ends the sentence
    (:func:`_sentence_tail`). Inactive on
    transcripts without capitals.
    """
    from anonpsy.audio.spoken import MONTHS, WEEKDAYS

    if not _cased(words):
        return []
    n = len(words)
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []

    def placelike(k: int) -> bool:
        t = words[k].text.strip(_PUNCT)
        c = t.lower()
        if not _capitalised(t) or c in ("i", "i'm") or c in MONTHS or c in WEEKDAYS:
            return False
        if _initial(words[k].text) and k + 1 < n:
            # an initial the recogniser wrote for a place's first syllable ("in M. Till" for "in Ampthill")
            return placelike(k + 1)
        return not (t.isupper() and len(t.replace("-", "")) <= 4)

    known = lexicon()
    k = 1
    while k < n:
        prep = words[k - 1].text
        if _core(prep) not in _PLACE_PREPOSITIONS or _ends(prep, _SENTENCE_END):
            k += 1
            continue
        if not placelike(k):
            # "a hospital in, cast him at Peck-de-Bromo,": a comma right after the preposition says the recogniser
            # broke off a place it misheard; the words up to a name-like word within three are the place.
            reach = next((m for m in range(k, min(n, k + 4)) if placelike(m) or _namelike(words, m, known)), None)
            if (not _ends(prep, (",",)) or reach is None
                    or any(_ends(words[m].text, _SENTENCE_END) for m in range(k, reach))):
                # "in his kinaporgal.": a lower-case word no dictionary lists, right after the preposition or
                # after one short word (a syllable heard as a word), is a place the recogniser spelled as it heard
                rare = next((m for m in (k, k + 1) if m < n and _rare_lower(words, m, known)
                             and (m == k or (len(cores[k]) <= 4 and not _ends(words[k].text, _PHRASE_END)))), None)
                if rare is None:
                    k += 1
                    continue
                rare = _sentence_tail(words, rare)
                out.append(WordHit(k, rare, "LOCATION", "phi", "rules:audio.place-spelled-as-heard"))
                k = rare + 1
                continue
            if not _safelisted(words, reach, reach):
                reach = _sentence_tail(words, reach)
                out.append(WordHit(k, reach, "LOCATION", "phi", "rules:audio.place-after-broken-preposition"))
            k = reach + 1
            continue
        first = last = k
        while last + 1 < n and (not _ends(words[last].text, _PHRASE_END) or _initial(words[last].text)):
            nxt = _core(words[last + 1].text)
            if placelike(last + 1):
                last += 1
            elif nxt in _PARTICLES and last + 2 < n and placelike(last + 2):
                last += 2
            else:
                break
        last = _place_after_comma(words, last, placelike)
        if not _safelisted(words, first, last) and not _cue_phrase(cores, k - 1, last, cues):
            out.append(WordHit(first, last, "LOCATION", "phi", "rules:audio.place-after-preposition"))
        k = last + 1
    return out


@lru_cache(maxsize=1)
def clinical_vocabulary() -> frozenset[str]:
    """Lower-case words of the clinical lexicons (``rules/lexicon``): symptoms, conditions, drugs, therapies."""
    from anonpsy.paths import rules_dir
    from anonpsy.phi.safelist import load_lexicons

    root = rules_dir()
    names = sorted(p.stem for p in (root / "lexicon").glob("*.yaml") if not p.name.endswith(".cases.yaml"))
    out: set[str] = set()
    for terms in load_lexicons(root, names).values():
        for t in terms:
            out.update(w.strip(_PUNCT) for w in re.split(r"[\s/-]+", t.lower()) if w.strip(_PUNCT))
    return frozenset(out)


def _rare_lower(words: Sequence[Word], k: int, known: frozenset[str]) -> bool:
    """A lower-case word of five letters or more that neither dictionary (PocketSphinx's, Webster's) nor the
    clinical lexicons list and that is no clinical term of the masking safelist: a name spelled as heard."""
    from anonpsy.phi.recognizers import english_words

    t = words[k].text.strip(_PUNCT)
    c = t.lower()
    if not known or t != c or len(c.replace("-", "").replace("'", "")) < 5 or not _unknown(t, known):
        return False
    parts = [p for p in re.split(r"[-']", c) if p]
    vocab = clinical_vocabulary()
    # a clinical term written with a hyphen ("ssri-induced") has its unknown part in the lexicons
    if c in english_words() or c in vocab or any(p in vocab for p in parts if p not in known):
        return False
    return not _safelisted(words, k, k)


def _cue_phrase(cores: Sequence[str], first: int, last: int, cues: CueSet | None) -> bool:
    """Do words ``[first, last]`` lie within an ``after`` cue phrase that starts at ``first``?"""
    if cues is None:
        return False
    hit = cues.after_match(cores, first)
    return hit is not None and first + hit[1] - 1 >= last


def _unit_end(words: Sequence[Word], k: int) -> int:
    """The last word of an address's unit part starting at ``k`` ("apartment twenty five D"), or ``k - 1``."""
    from anonpsy.audio.cues import is_number_word, is_numberish
    from anonpsy.audio.spoken import UNIT_WORDS

    n = len(words)
    if k >= n or _core(words[k].text) not in UNIT_WORDS:
        return k - 1
    last = k
    j = k + 1
    said = 0
    while j < n and said < 5 and not _ends(words[j - 1].text, _SENTENCE_END):
        c = _core(words[j].text)
        if is_numberish(c) or (len(c) == 1 and c.isalpha()):
            last = j
        elif (len(c) <= 3 and c.isalpha() and not _ends(words[j].text, _PHRASE_END)
              and any(is_number_word(_core(words[m].text)) for m in range(j + 1, min(n, j + 3)))):
            pass  # the unit's number misheard as short words before a number word ("apartment, soy the eight")
        elif said and len(c) <= 3 and c.isalpha():
            last = j  # the unit's letter misheard as a short word ("five, the" for "five D")
            break
        else:
            break
        said += 1
        j += 1
    return last if last > k else k - 1


@lru_cache(maxsize=1)
def street_suffixes() -> frozenset[str]:
    """Street types: the common ones and the USPS suffix list as Faker's US address provider ships it."""
    from anonpsy.audio.spoken import STREET_TYPES

    try:
        from faker.providers.address.en_US import Provider
    except ImportError:  # pragma: no cover - Faker is a core dependency
        return STREET_TYPES
    usps = {str(x).lower() for x in getattr(Provider, "street_suffixes", ())}
    return STREET_TYPES | frozenset(x for x in usps if x.isalpha())


def _glued_number(c: str, known: frozenset[str]) -> bool:
    """A house number and a street name the recogniser wrote as one hyphenated word ("twenty-three-tenmy").

    The word opens with number words and goes on with one no dictionary lists; "twenty-four-hour" and
    "ten-minute" ("a ten-minute walk") are ordinary words.
    """
    from anonpsy.audio.cues import is_number_word

    parts = [p for p in c.split("-") if p]
    rest = [p for p in parts if not is_number_word(p)]
    return len(parts) >= 2 and is_number_word(parts[0]) and bool(rest) and bool(known) \
        and any(p.isalpha() and p not in known for p in rest)


#: Words of amount and time that follow a number in ordinary speech ("two more weeks", "five beers a night"): never
#: a street type heard as another word.
_NOT_STREET_TYPES = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years", "night", "nights",
                               "time", "times", "hour", "hours", "minute", "minutes", "dose", "doses", "pill", "pills",
                               "drink", "drinks", "milligram", "milligrams", "tablet", "tablets", "mile", "miles",
                               "session", "sessions", "visit", "visits", "point", "points", "percent", "daily",
                               "weekly", "nightly", "monthly", "hourly", "once", "twice"})


def _street_type_heard_as(words: Sequence[Word], k: int, cores: Sequence[str], types: frozenset[str]) -> bool:
    """Is word ``k`` a street type the recogniser wrote as a word that sounds like it ("Philip's screen" for
    "Phillips Green", "Robbers and Ram" for "Roberson Ramp")? Only a lower- or upper-case word of letters that is
    no number, clause or amount word; the caller reads it only after a house number and a capitalised name."""
    from anonpsy.audio.cues import is_number_word
    from anonpsy.audio.phonetic import sounds_like

    c = cores[k]
    if (len(c) < 3 or not c.replace("'", "").isalpha() or is_number_word(c) or c in _CLAUSE_WORDS
            or c in _NOT_STREET_TYPES or c in _SYLLABLE_WORDS):
        return False
    # cheap context check first: a number word within the four words before it
    if not any(is_number_word(cores[m]) for m in range(max(0, k - 5), k)):
        return False
    return sounds_like(words[k].text, sorted(types)) is not None


def _type_with_syllable(c: str, types: frozenset[str]) -> bool:
    """A street type written together with one or two letters of the name's last syllable before it ("away" for
    "Teresa Way")."""
    return any(c[i:] in types and len(c) - i >= 3 for i in (1, 2) if len(c) > i)


#: Short function words a recogniser writes for an unstressed syllable of a street name it does not know
#: ("eighty seven Svensson Crescent" heard as "eighty-seven cents and crescent").
_SYLLABLE_WORDS = frozenset({"and", "an", "in", "on", "a"})


#: The most digits a house number holds; a longer number before a street name is another number.
_HOUSE_NUMBER_DIGITS = 5


def _said_digits(words: Sequence[Word], first: int, last: int) -> int:
    from anonpsy.audio.spoken import normalize

    return sum(ch.isdigit() for ch in normalize([w.text for w in words[first : last + 1]]).text)


def street_address_hits(words: Sequence[Word]) -> list[WordHit]:
    """Street addresses by their grammar: a house number, up to three name words, a street type, a unit.

    Street types are :func:`street_suffixes`.
    The name words need not be recognised as names ("fifteen thirty six, no Melangust Street"): any words
    between a spoken number and a street type, within the phrase, are the street's name. Without a house
    number, capitalised name words before a capitalised street type ("Farkas Terrace") are an address too.
    One short function word among the name words ("eighty-seven cents and crescent") is part of the name when
    a house number comes before it (:data:`_SYLLABLE_WORDS`).
    A house number glued to an unknown street name in one hyphenated word ("outside twenty-three-thirty-tenmy
    parkway") is a house number (:func:`_glued_number`). After a house number and a capitalised name word, a word
    that sounds like a street type is one ("five hundred Philip's screen" for "five hundred Phillips Green",
    :func:`_street_type_heard_as`).
    """
    from anonpsy.audio.cues import is_number_word

    types = street_suffixes()
    known = lexicon()
    n = len(words)
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    for k in range(1, n):
        heard_as = False
        if cores[k] not in types:
            if not _street_type_heard_as(words, k, cores, types):
                continue
            heard_as = True
        first = k
        j = k - 1
        names = 0
        crossed: tuple[int, int, int] | None = None  # (first, j, names) before a syllable word was crossed
        while j >= 0 and names < 3 and not _ends(words[j].text, _SENTENCE_END) \
                and not is_number_word(cores[j]) and cores[j] not in types:
            if cores[j] in _CLAUSE_WORDS:
                if cores[j] not in _SYLLABLE_WORDS or _ends(words[j].text, _PHRASE_END):
                    break
                if crossed is not None and not (names == 1 and j >= 2 and is_number_word(cores[j - 1])
                                                and is_number_word(cores[j - 2])):
                    # a second syllable word only where the whole name was heard as two of them right after a
                    # house number of two number words or more ("seven, seven, nine, and a row" for "... Amor Row")
                    break
                if crossed is None:
                    crossed = (first, j, names)
            first = j
            names += 1
            j -= 1
        numbers = 0
        while j >= 0 and numbers < 8 and is_number_word(cores[j]) and not _ends(words[j].text, _SENTENCE_END):
            numbers += 1
            first = j
            j -= 1
        if crossed is not None and not numbers:  # a crossed "and" is part of the name only after a house number
            first, j, names = crossed
            crossed = None
            while j >= 0 and numbers < 8 and is_number_word(cores[j]) and not _ends(words[j].text, _SENTENCE_END):
                numbers += 1
                first = j
                j -= 1
        if not names or (crossed is not None and names < 2):
            continue
        if heard_as and not (numbers and any(_capitalised(words[m].text) for m in range(first + numbers, k))
                             and not any(cores[m] in _NOT_STREET_TYPES for m in range(first, k))
                             and _said_digits(words, first, first + numbers - 1) <= _HOUSE_NUMBER_DIGITS):
            # a street type heard as another word is read only after a house number and a capitalised name, and
            # never after a dose or an amount ("five milligrams, Worms daily") or a number longer than a house
            # number ("social security number 10897 3690. Speech is normal in rate")
            continue
        glued = [g for g in range(first, k) if _glued_number(cores[g], known)] if not numbers else []
        if glued:  # "outside twenty-three-thirty-tenmy parkway": the house number written into the name's word
            first, numbers = glued[-1], 1
        if not numbers and not (_capitalised(words[k].text) and _capitalised(words[k - 1].text)
                                and words[k - 1].text.strip(_PUNCT) != words[k - 1].text.strip(_PUNCT).upper()):
            continue
        if not numbers and _safelisted(words, first, k):
            continue
        last = k
        if not _ends(words[k].text, _SENTENCE_END):
            last = max(last, _unit_end(words, k + 1))
        out.append(WordHit(first, last, "ADDRESS", "phi", "rules:audio.street-address"))
    return out


#: Hits whose words can be the name part of a street: a name or a place the other rules found.
_STREET_NAME_TYPES = frozenset({"PERSON", "LOCATION"})


def house_number_hits(words: Sequence[Word], hits: Sequence[WordHit]) -> list[WordHit]:
    """A house number and the street name after it when the recogniser missed the street type.

    A street is a house number, a name and a street type; a name from another language is often heard as a
    name the other rules find ("two hundred Jason and" for "two hundred Jason End") or as a made-up lower-case
    word no dictionary or clinical lexicon lists ("ten hundred nickel-a-ro" for "ten hundred Nikola Row"),
    and the street type as a short function word or not at all. Spoken number words directly before such a
    word, with no comma between, are its house number: the hit runs from the number over up to three name
    words, and over one word after them that stands where the street type was said, within the phrase: a short
    function word (:data:`_SYLLABLE_WORDS`), a word that sounds like a street type, or a street type written
    with the name's last letters ("fifty mariaters away" for "fifty Maria Teresa Way").
    """
    from anonpsy.audio.cues import is_number_word, is_numberish

    known = lexicon()
    types = street_suffixes()
    n = len(words)
    cores = [_core(w.text) for w in words]
    named = {k for h in hits if h.type in _STREET_NAME_TYPES for k in range(h.first, h.last + 1)}
    addressed = {k for h in hits if h.type == "ADDRESS" for k in range(h.first, h.last + 1)}
    named |= addressed

    def streetlike(k: int) -> bool:
        return k in named or _rare_lower(words, k, known)

    out: list[WordHit] = []
    def numberlike(k: int) -> bool:
        # a digit heard as a word ("seventy-forty free", "750 for") or run into one ("salmon-six") inside the number
        return is_number_word(cores[k]) or (is_numberish(cores[k]) and cores[k] not in _EDGE_OPENERS)

    for k in range(1, n):
        if not streetlike(k) or not numberlike(k - 1):
            continue
        if _ends(words[k - 1].text, _PHRASE_END) and not (
            k in addressed and _ends(words[k - 1].text, (".",)) and words[k].start - words[k - 1].end < SENTENCE_PAUSE_S
        ):
            # A full stop the recogniser wrote after the house number ("six eighty two. A waka drive") with no
            # pause after it does not part the number from a street the other rules found.
            continue
        first = k - 1
        while first > 0 and first > k - 8 and numberlike(first - 1) and not _ends(words[first - 1].text, _PHRASE_END):
            first -= 1
        while first < k and not is_number_word(cores[first]):
            first += 1
        if first == k:
            continue
        last = k
        while last + 1 < n and last - k < 2 and not _ends(words[last].text, _PHRASE_END) and streetlike(last + 1):
            last += 1
        if last + 1 < n and not _ends(words[last].text, _PHRASE_END) and (
            cores[last + 1] in _SYLLABLE_WORDS or _type_with_syllable(cores[last + 1], types)
            or _street_type_heard_as(words, last + 1, cores, types)
        ):
            last += 1
        out.append(WordHit(first, last, "ADDRESS", "phi", "rules:audio.house-number"))
    return out


def unsure_street_hits(words: Sequence[Word], below: float = UNSURE_BELOW) -> list[WordHit]:
    """A house number after "at", "on", "outside" and the like, followed by words the recogniser was unsure of.

    "She lives at nine hundred five Watkins Path" heard as "She leaves at nine hundred five what kings part": the
    cue was misheard and the street's name and type came out as ordinary words, so no rule placed the address.
    Two number words or more right after a street preposition (:data:`_STREET_PREPOSITIONS`), and right after
    them, within the phrase, a run of at least :data:`_UNSURE_MIN` words each under ``below`` with no pause or
    sentence end between (:func:`unsure_extensions`), are a house number and a street.
    """
    from anonpsy.audio.cues import is_number_word

    n = len(words)
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    for k in range(2, n):
        if not is_number_word(cores[k - 1]) or is_number_word(cores[k]) or _ends(words[k - 1].text, _PHRASE_END):
            continue
        first = k - 1
        while first > 0 and k - first < 6 and is_number_word(cores[first - 1]) \
                and not _ends(words[first - 1].text, _PHRASE_END):
            first -= 1
        if k - first < 2 or first == 0 or cores[first - 1] not in _STREET_PREPOSITIONS \
                or _ends(words[first - 1].text, _PHRASE_END):
            continue
        if words[k].start - words[k - 1].end >= SENTENCE_PAUSE_S:
            continue
        last = k - 1
        j = k
        while j < n and is_unsure(words[j], below) and (j == k or not (
                _ends(words[j - 1].text, _SENTENCE_END) or words[j].start - words[j - 1].end >= SENTENCE_PAUSE_S)):
            last = j
            j += 1
        if last - k + 1 >= _UNSURE_MIN:
            out.append(WordHit(first, last, "ADDRESS", "phi", "rules:audio.unsure-street"))
    return out


#: Words after an address's "in" or comma that open an ordinary phrase, not a town ("in his car.").
_NOT_TOWN_OPENERS = _CLAUSE_WORDS | _ARTICLES | frozenset({"their", "its", "this", "that", "there", "then"})
#: Words a town after an address may run to: a town's name heard as ordinary words ("in our heavy.").
_TOWN_WORDS = 3
#: A town heard as words the recogniser was unsure of (each under this confidence) may run to this many words.
_TOWN_UNSURE_WORDS = 4
_TOWN_UNSURE_BELOW = 0.6


def address_town_hits(words: Sequence[Word], hits: Sequence[WordHit]) -> list[WordHit]:
    """The town said after an address, heard as ordinary words ("lives on North Oscarlaine in our heavy." for
    "... in Arhavi."): after an address the other rules found, "in" or the address's comma, then up to
    :data:`_TOWN_WORDS` words that close the sentence, none of them a clause word, an article or a number. Where
    the recogniser missed the full stop after the town ("Kathleen Lord, Rickson, the plan was ..." for "...
    Kathleen Road, Wrexham. The plan was ..."), up to two capitalised words that a comma closes are the town
    all the same, but not "I", a month, a weekday or a short abbreviation (:func:`_name_word_after`). A town
    the recogniser did not know, heard as words it was unsure of (each under :data:`_TOWN_UNSURE_BELOW`) up to
    the sentence's end, may run to :data:`_TOWN_UNSURE_WORDS` words, clause words among them ("John Ramp, it's a
    bit tilinger." for "... Ramp, Itapetininga.")."""
    from anonpsy.audio.cues import is_numberish

    n = len(words)
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    for h in hits:
        e = h.last
        if h.type != "ADDRESS" or e + 1 >= n or _ends(words[e].text, _SENTENCE_END):
            continue
        if _ends(words[e].text, (",",)):
            start = e + 1
        elif cores[e + 1] == "in" and not _ends(words[e + 1].text, _PHRASE_END):
            start = e + 2
        else:
            continue
        end = next((m for m in range(start, min(n, start + _TOWN_UNSURE_WORDS)) if _ends(words[m].text, _PHRASE_END)),
                   None)
        if end is None:
            continue
        span = range(start, end + 1)
        # A town the recogniser did not know, heard as ordinary words it was unsure of, every one of them ("it's
        # a bit tilinger." for "Itapetininga."), may take a word more and clause words.
        unsure = _ends(words[end].text, _SENTENCE_END) and all(is_unsure(words[m], _TOWN_UNSURE_BELOW) for m in span)
        if end - start >= _TOWN_WORDS and not unsure:
            continue
        if not _ends(words[end].text, _SENTENCE_END) and not (
            _ends(words[end].text, (",",)) and end - start < 2 and all(_name_word_after(words, m) for m in span)
        ):
            continue
        if not unsure and (cores[start] in _NOT_TOWN_OPENERS
                           or any(cores[m] in _CLAUSE_WORDS or is_numberish(cores[m]) for m in span)):
            continue
        if not _safelisted(words, start, end):
            out.append(WordHit(start, end, "LOCATION", "phi", "rules:audio.address-town"))
    return out


_ORDINAL_DIGITS = re.compile(r"^(\d{1,2})(st|nd|rd|th)?$")
_NOT_IN_DATES = frozenset({"and", "or", "but", "in", "at", "for", "since", "until", "when", "with", "to", "she",
                           "he", "they", "i", "we", "was", "is"})


def _daylike(c: str) -> bool:
    """A word that can say a day of the month: "fourteenth", "twenty-third", "27th", "fourteen", "14", "sixths"."""
    from anonpsy.audio.spoken import ORDINALS, TEENS, TENS, UNITS

    parts = [p for p in c.split("-") if p]
    if len(parts) > 1:
        return all(_daylike(p) for p in parts)
    m = _ORDINAL_DIGITS.match(c)
    if m:
        return 1 <= int(m.group(1)) <= 31
    if c.endswith("ths") and c[:-1] in ORDINALS:
        return True  # the recogniser's plural of an ordinal it heard before "of" ("the twenty sixths of August")
    return c in ORDINALS or c in UNITS or c in TEENS or c in TENS


def _month_word(words: Sequence[Word], k: int, cased: bool) -> bool:
    from anonpsy.audio.spoken import MONTHS

    c = _core(words[k].text)
    if c not in MONTHS:
        return False
    # "may" and "march" are also ordinary words: in a cased transcript only the capitalised month counts.
    return not (cased and c in ("may", "march") and not _capitalised(words[k].text))


#: Words that open a sentence about the patient without naming anyone ("She is a forty two year old ...").
_UNNAMED_SUBJECTS = frozenset({"she", "he", "they", "it", "this", "that", "there", "the", "patient", "client",
                               "our", "my", "her", "his", "their", "who", "which", "what", "pt", "we", "i", "you"})
#: Words of a clause around the subject rather than of a name ("Then she said that John is a ...").
_CLAUSE_VERBS = frozenset({"said", "says", "reports", "reported", "is", "was", "are", "were", "has", "had",
                           "thinks", "told", "states", "stated", "and", "but", "because", "that"})
_AGE_NOUNS = ("year", "years")
#: Conjunctions that open a sentence before its subject.
_OPENING_CONJUNCTIONS = frozenset({"and", "but", "so", "then", "also"})


def _age_phrase_end(cores: Sequence[str], k: int) -> int:
    """The index after "a forty two year old" / "an 80-year-old" starting at ``k``, or ``k`` when none is there."""
    from anonpsy.audio.cues import is_number_word

    n = len(cores)
    if k >= n or cores[k] not in ("a", "an"):
        return k
    j = k + 1
    said = 0
    while j < n and said < 4 and "year" not in cores[j] and is_number_word(cores[j]):
        j += 1
        said += 1
    if j < n and re.fullmatch(r"[a-z0-9-]*years?-old", cores[j]) and (said or not cores[j].startswith("year")):
        return j + 1
    if said and j + 1 < n and cores[j] in _AGE_NOUNS and cores[j + 1] == "old":
        return j + 2
    return k


def _comma_opened_name(words: Sequence[Word], v: int) -> int:
    """The first of one to three capitalised words before word ``v`` that a comma opens, or -1.

    A recogniser that missed the full stop before the identifying sentence writes a comma there ("..., old
    iPhone, Miko Clement, in a thirty eight year old man"): capitalised words (not "I") between that comma and
    the short word before the age open the sentence all the same.
    """
    s = v
    while s > 0 and v - s < 3 and _capitalised(words[s - 1].text) and _core(words[s - 1].text) != "i" \
            and not (s < v and _ends(words[s - 1].text, _PHRASE_END)):
        s -= 1
        if s > 0 and _ends(words[s - 1].text, (",",)):
            return s
    return -1


def _misheard_i(words: Sequence[Word], cores: Sequence[str], k: int, v: int) -> bool:
    """Is word ``k``, "I" before the short word ``v`` that stands for "is" before an age, a name's first syllable?

    One says "I am a forty year old man"; "I" before any other word there, with the word after it one the
    recogniser was unsure of, is a name that starts with the sound ("I are in ovaries in a forty year old man"
    for "Einari Novais is a forty year old man").
    """
    return cores[k] == "i" and cores[v] not in ("am", "was") and k + 1 < v and is_unsure(words[k + 1], UNSURE_BELOW)


def subject_hits(words: Sequence[Word]) -> list[WordHit]:
    """The words that open a sentence before "is a forty two year old": the patient's name.

    A dictation's identifying sentence names the patient before the age ("Yasemin Safak is a sixty five year
    old woman"). The recogniser often hears "is" as another short word ("... in a forty three year old man") and
    the name as several ordinary words, some of them function words ("With a pigman in pole is a 20-year-old"),
    which the ``audio.person.subject`` cue stops at. Here every word from the sentence's start up to the short
    word before "a <number> year old" (at most five words, none a sentence end) is the name, unless one of them
    is a pronoun or a noun that names no one ("She", "The patient", "Our client") or a word of a clause
    around the subject ("said", "that", "and") that the recogniser was sure of (a name's syllable it did not
    know comes out as such a word at low confidence: "And renal willow in a twenty-eight year old man"); a
    title that opens it stays audible. Where no sentence starts
    within five words, one to three capitalised words after a comma open it (:func:`_comma_opened_name`).
    """
    cores = [_core(w.text) for w in words]
    n = len(words)
    out: list[WordHit] = []
    for v in range(1, n - 2):
        if len(cores[v]) > 3 or not cores[v].isalpha() or _age_phrase_end(cores, v + 1) == v + 1:
            continue
        s = v - 1
        while s > 0 and v - s < 5 and not _ends(words[s - 1].text, _SENTENCE_END):
            s -= 1
        if s > 0 and not _ends(words[s - 1].text, _SENTENCE_END):
            s = _comma_opened_name(words, v)
            if s < 0:
                continue  # no sentence start within five words, nor a capitalised name after a comma
        if any(_ends(words[k].text, _SENTENCE_END) for k in range(s, v)):
            continue
        # A conjunction that opens the sentence comes before its subject ("And the land-crown in a seventy three
        # year old"), but is muted with it: it is as often the name's first syllable heard as "and".
        c = s
        while c < v - 1 and cores[c] in _OPENING_CONJUNCTIONS:
            c += 1
        if any((cores[k] in _UNNAMED_SUBJECTS or cores[k] in _CLAUSE_VERBS) and not is_unsure(words[k], UNSURE_BELOW)
               and not _misheard_i(words, cores, k, v) for k in range(c, v)):
            continue
        while s < v and cores[s] in _TITLES | {"doctor", "mister", "missus", "miss"}:
            s += 1
        if s < v:
            out.append(WordHit(s, v - 1, "PERSON", "phi", "rules:audio.age-subject"))
    return out


def _ordinal(c: str) -> bool:
    """An ordinal day ("sixth", "twenty-first", "6th")."""
    from anonpsy.audio.spoken import ORDINALS

    return c.split("-")[-1] in ORDINALS or bool(re.fullmatch(r"\d{1,2}(st|nd|rd|th)", c))


#: The first word of a year said in two parts, heard with the "th" of the second ("nineteen thirty").
_YEAR_PREFIX_ORDINALS = frozenset({"nineteenth", "twentieth"})


def spoken_date_hits(words: Sequence[Word]) -> list[WordHit]:
    """A month name with the day and year said around it, read loosely (see below).

    The recogniser often mishears the small words of a spoken date ("March that twenty seventh", "the fifteen
    some June") and then the written-date rules see only the month. Here a month name takes the day words
    (ordinals, cardinals up to thirty one, digits) within reach on either side, across "the", "of" or one
    short misheard word ("and" only after an ordinal day: "the sixth and February"), and after the day a
    following number run (the year). Sentence ends are not crossed.
    A month with no day found, or a year, that one or two lower-case words close the sentence after is taken
    with them: the day or the year's last word misheard (:func:`_misheard_day_end`).
    """
    from anonpsy.audio.cues import is_number_word

    n = len(words)
    cores = [_core(w.text) for w in words]
    cased = any(_capitalised(w.text) for w in words)
    out: list[WordHit] = []

    def bridge(k: int) -> bool:
        c = cores[k]
        return c in ("the", "of") or (c.isalpha() and len(c) <= 5 and c not in _NOT_IN_DATES
                                      and words[k].text.strip(_PUNCT) == c)

    for i in range(n):
        if not _month_word(words, i, cased):
            continue
        first = last = i
        # before the month: [the] day... [of | one misheard word]
        j = i - 1
        if j >= 1 and (bridge(j) or (cores[j] == "and" and _ordinal(cores[j - 1]))) and _daylike(cores[j - 1]) \
                and not _ends(words[j].text, _PHRASE_END):
            j -= 1  # "the sixth and February": "of" heard as "and" after an ordinal day
        while j >= 0 and i - j <= 4 and _daylike(cores[j]) and not _ends(words[j].text, _PHRASE_END):
            first = j
            j -= 1
        if first < i and j >= 0 and cores[j] == "the" and not _ends(words[j].text, _PHRASE_END):
            first = j
        # after the month: [the | one misheard word] day...
        k = i + 1
        if not _ends(words[i].text, _SENTENCE_END):
            if k + 1 < n and bridge(k) and _daylike(cores[k + 1]) and not _ends(words[k].text, _PHRASE_END):
                k += 1
            while k < n and k - i <= 4 and _daylike(cores[k]):
                last = k
                if _ends(words[k].text, _PHRASE_END):
                    break
                k += 1
        # then the year: a number run after the day
        if (first < i or last > i) and not _ends(words[last].text, _SENTENCE_END):
            k = last + 1
            said = 0
            if k < n and cores[k] in _YEAR_PREFIX_ORDINALS:
                # "nineteen thirty" heard as "nineteenth early": the year's first word took the "th" of its
                # second, and the rest of the second is the next word when no pause comes between
                last = k
                if k + 1 < n and not _ends(words[k].text, _PHRASE_END) and cores[k + 1].isalpha() \
                        and words[k + 1].start - words[k].end < SENTENCE_PAUSE_S:
                    last = k + 1
                said = 5
            while k < n and said < 5 and (is_number_word(cores[k]) or (cores[k] == "and" and said)):
                if cores[k] != "and":
                    last = k
                said += 1
                if _ends(words[k].text, _SENTENCE_END):
                    break
                k += 1
        if first == i and last == i:
            if not _ends(words[i].text, _PHRASE_END):
                last = _misheard_day_end(words, i)
        elif not _ends(words[last].text, _SENTENCE_END):
            last = _misheard_day_end(words, last, 1)
        if first < i or last > i:
            out.append(WordHit(first, last, "DATE", "phi", "rules:audio.spoken-date"))
    return out


def _year_start(cores: Sequence[str], k: int) -> int:
    """How many words a year said from word ``k`` takes ("nineteen forty three", "two thousand five", "1982"), or 0."""
    from anonpsy.audio.cues import is_number_word

    c = cores[k]
    if c.isdigit() and len(c) == 4 and c[:2] in ("19", "20"):
        return 1
    if c == "nineteen" or (c == "two" and k + 1 < len(cores) and cores[k + 1] == "thousand"):
        j = k + 1
        while j < len(cores) and j - k < 4 and (is_number_word(cores[j]) or cores[j] == "and"):
            j += 1
        return j - k if j - k >= 2 else 0
    return 0


def misheard_month_date_hits(words: Sequence[Word]) -> list[WordHit]:
    """A day and a year said around one or two words the recogniser wrote for the month it misheard.

    "the twenty six sonship timber, nineteen forty three" for "the twenty sixth of September, nineteen thirty
    three": the day (ordinals and cardinals up to thirty one, [the] before it) and the year ("nineteen ...",
    "two thousand ...", four digits from 19 or 20) hold the words between them, when there are one or two and
    none is a clause word, a date follower ("ago", "last") or a number, all in one sentence. A day written
    together with the misheard month as one hyphenated word ("ten-thoregist, nineteen fifty six") is one too.
    """
    from anonpsy.audio.cues import is_number_word

    n = len(words)
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    for y in range(2, n):
        said = _year_start(cores, y)
        if not said or _ends(words[y - 1].text, _SENTENCE_END):
            continue
        said = next((m + 1 for m in range(said) if _ends(words[y + m].text, _SENTENCE_END)), said)
        parts = cores[y - 1].split("-")
        if len(parts) >= 2 and _daylike(parts[0]) and all(p.isalpha() and not _daylike(p) for p in parts[1:]):
            # the day and the misheard month written as one word ("ten-thoregist, nineteen fifty six")
            out.append(WordHit(y - 1, y + said - 1, "DATE", "phi", "rules:audio.misheard-month-date"))
            continue
        j = y - 1
        bridged = 0
        while j >= 0 and bridged < 2 and not _daylike(cores[j]):
            c = cores[j]
            if (not c.isalpha() or c in _NOT_IN_DATES or c in _DATE_FOLLOWERS or is_number_word(c)
                    or (c in _CLAUSE_WORDS and c != "of") or (j < y - 1 and _ends(words[j].text, _SENTENCE_END))):
                break
            bridged += 1
            j -= 1
        if not bridged or j < 0 or not _daylike(cores[j]) or _ends(words[j].text, _PHRASE_END):
            continue
        first = j
        while first - 1 >= 0 and y - first < 6 and _daylike(cores[first - 1]) \
                and not _ends(words[first - 1].text, _PHRASE_END):
            first -= 1
        if first - 1 >= 0 and cores[first - 1] == "the" and not _ends(words[first - 1].text, _PHRASE_END):
            first -= 1
        out.append(WordHit(first, y + said - 1, "DATE", "phi", "rules:audio.misheard-month-date"))
    return out


def day_year_hits(words: Sequence[Word]) -> list[WordHit]:
    """A number up to thirty one said right before a year: a date whose month the recogniser lost or that was said
    as a number ("fourteenth June, nineteen thirty three" heard as "four. 1933"; "born four, 1933").

    The day is an ordinal or a cardinal of 1 to 31 (:func:`_daylike`) that no other number word comes right
    before, and the year ("1933", "nineteen thirty three", "two thousand five") follows it directly, with a
    comma between or a full stop the recogniser wrote without a pause. A tens word before a year said in
    words ("twenty nineteen ...") is the year's own first word, not a day.
    """
    from anonpsy.audio.cues import is_number_word
    from anonpsy.audio.spoken import TENS

    n = len(words)
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    for y in range(1, n):
        said = _year_start(cores, y)
        d = y - 1
        if not said or not _daylike(cores[d]) or (d > 0 and is_number_word(cores[d - 1])
                                                 and not _ends(words[d - 1].text, _SENTENCE_END)):
            continue
        if cores[d] in TENS and not cores[y].isdigit():
            continue
        if _ends(words[d].text, (";", ":")) or (_ends(words[d].text, _SENTENCE_END)
                                                and words[y].start - words[d].end >= SENTENCE_PAUSE_S):
            continue
        said = next((m + 1 for m in range(said) if _ends(words[y + m].text, _SENTENCE_END)), said)
        out.append(WordHit(d, y + said - 1, "DATE", "phi", "rules:audio.day-year"))
    return out


#: Most words a misheard day takes between a month and its year ("March, but when T. s. nineteen fifty nine").
_MONTH_YEAR_WORDS = 4
#: Longest time between the month's end and the year's start.
_MONTH_YEAR_S = 2.0


def _letter_stop(text: str) -> bool:
    """A single letter the recogniser wrote with a full stop ("T.", "s."): a letter, not a sentence end."""
    t = text.strip()
    return len(t) == 2 and t[0].isalpha() and t[1] == "."


def month_year_hits(words: Sequence[Word]) -> list[WordHit]:
    """A month and a year with one to four words between them: the day the recogniser misheard.

    "on March, but when T. s. nineteen fifty nine" for "on March the twentieth, nineteen fifty nine": the day
    was heard as ordinary words that no date rule reads as a day, so the month and the year are found apart and
    the words between stay audible. A month name followed, within :data:`_MONTH_YEAR_WORDS` words and
    :data:`_MONTH_YEAR_S` seconds and in one sentence (a letter written with a full stop is an initial, not a
    sentence end), by a year ("nineteen ...", "two thousand ...", four digits from 19 or 20) is one date.
    """
    n = len(words)
    cores = [_core(w.text) for w in words]
    cased = any(_capitalised(w.text) for w in words)
    out: list[WordHit] = []
    for i in range(n):
        if not _month_word(words, i, cased):
            continue
        for y in range(i + 2, min(n, i + 2 + _MONTH_YEAR_WORDS)):
            if _ends(words[y - 1].text, _SENTENCE_END) and not _letter_stop(words[y - 1].text):
                break
            if words[y].start - words[i].end > _MONTH_YEAR_S:
                break
            said = _year_start(cores, y)
            if said:
                out.append(WordHit(i, y + said - 1, "DATE", "phi", "rules:audio.month-year"))
                break
    return out


#: Words that go on a month name or a year without being part of the date ("since June last year").
_DATE_FOLLOWERS = frozenset({"last", "this", "next", "year", "years", "month", "months", "week", "weeks", "ago",
                             "before", "after", "now", "then", "again", "today", "too", "also", "only", "though",
                             "however", "onwards", "on", "off", "so", "yet", "still", "already", "sometime",
                             "mostly", "time", "each", "every", "holidays", "break"})


def _misheard_day_end(words: Sequence[Word], k: int, most: int = 2) -> int:
    """The last word of one or two misheard date words that close the sentence after word ``k``, or ``k``.

    A month or a year that the sentence goes on from by at most ``most`` words before its full stop is most
    likely followed by the rest of the date misheard ("for June that wales." for "June the twelfth", "two
    thousand, chairman." for "two thousand seven"): words that go on a date ("last year", "again") or start a
    clause do not count.
    """
    n = len(words)
    for m in range(1, most + 1):
        j = k + m
        if j >= n:
            return k
        c = _core(words[j].text)
        if not c.isalpha() or c in _NOT_IN_DATES or c in _DATE_FOLLOWERS or c in _CLAUSE_WORDS - {"that", "the", "a"}:
            return k
        if _capitalised(words[j].text):
            return k
        if _ends(words[j].text, _SENTENCE_END):
            return j
        if _ends(words[j].text, _PHRASE_END):
            return k
    return k


def _numeric(words: Sequence[Word], h: WordHit) -> bool:
    from anonpsy.audio.cues import is_numberish

    cores = [_core(w.text) for w in words[h.first : h.last + 1]]
    return 2 * sum(1 for c in cores if is_numberish(c)) >= len(cores)


def number_bridge_hits(words: Sequence[Word], hits: Sequence[WordHit]) -> list[WordHit]:
    """One or two words between two spoken numbers of the same sentence: a digit the recogniser misheard.

    A number said digit by digit ("four three oh one four eight, twelve twenty five") is often heard with a digit
    as an ordinary word ("... one for it, twelve twenty five"); the number rules then find two numbers and the
    misheard digit between them stays audible. Hits whose words are mostly number words, one or two words apart
    and not across a sentence end, are joined by a hit over the words between.
    """
    numeric = sorted((h for h in hits if _numeric(words, h)), key=lambda h: (h.first, h.last))
    out: list[WordHit] = []
    for a, b in itertools.pairwise(numeric):
        between = range(a.last + 1, b.first)
        if not 1 <= len(between) <= 2:
            continue
        if any(_ends(words[k].text, _SENTENCE_END) for k in range(a.last, b.first)):
            continue
        out.append(WordHit(between[0], between[-1], a.type, "phi", "rules:audio.number-bridge"))
    return out


def _digits_said(words: Sequence[Word], h: WordHit) -> int:
    return _said_digits(words, h.first, h.last)


#: Words a recogniser writes for a digit at the edge of a long number: the sound-alikes less the articles and
#: prepositions that open a number, and the words heard for a digit the speaker ran into the next ("I'm" for
#: "nine", "it" for "eight"), which only count right beside a number of four digits or more.
_EDGE_OPENERS = frozenset({"a", "at", "then", "no", "know"})
_EDGE_SOUNDALIKES = (DIGIT_SOUNDALIKES - _EDGE_OPENERS) | {"i'm", "it"}
#: Prepositions that put a number after a number as a time or an amount ("call her back on ... after five").
_TIME_PREPOSITIONS = frozenset({"after", "before", "until", "till", "by", "around", "about", "at", "from", "past",
                                "since", "between", "over", "under", "than"})


#: Digits of a number said in full that is no date, dose or score: a phone number without its area code.
_LONG_NUMBER_DIGITS = 7


def number_edge_hits(words: Sequence[Word], hits: Sequence[WordHit]) -> list[WordHit]:
    """Digits misheard as ordinary words at either end of a spoken number of four digits or more.

    A phone number said digit by digit loses its first or last digits to words a recogniser writes for digits
    ("for it to 7 to 3, 8 to 12" for "four eight two, seven two three", "six, this, and twelve"). A hit whose
    words are mostly numbers and say at least four digits takes the words beside it that a recogniser writes
    for a digit (:data:`anonpsy.audio.cues.DIGIT_SOUNDALIKES`, less the articles and prepositions that open
    a number: "at", "a", "then", "no", "know"), and one other word between such words, or before a number word
    after the number unless it is a preposition of time or amount ("... after five"); never across a sentence
    end. Where that took a word at an edge of a number of seven digits or more (a phone number), one more word
    there that the recogniser was unsure of (:data:`UNSURE_BELOW`) and that is no clause word or preposition of
    time, with no pause or punctuation between, is the rest of the misheard digits ("Their sales vary to
    723-8112" for "Her cell is four eight two, seven two three, eighty one twelve").
    """
    from anonpsy.audio.cues import is_number_word

    n = len(words)
    cores = [_core(w.text) for w in words]

    def digitlike(k: int) -> bool:
        return is_number_word(cores[k]) or cores[k] in _EDGE_SOUNDALIKES

    out: list[WordHit] = []
    for h in hits:
        if not _numeric(words, h) or _digits_said(words, h) < 4:
            continue
        first, last = h.first, h.last
        j = first - 1
        while j >= 0 and not _ends(words[j].text, _SENTENCE_END):
            if digitlike(j):
                first = j
            elif j - 1 >= 0 and digitlike(j - 1) and not _ends(words[j - 1].text, _SENTENCE_END) and digitlike(j + 1):
                first = j - 1
                j -= 1
            else:
                break
            j -= 1
        if (first < h.first and j >= 0 and is_unsure(words[j], UNSURE_BELOW) and cores[j] not in _NOT_A_DIGIT
                and not _ends(words[j].text, _PHRASE_END) and words[j + 1].start - words[j].end < SENTENCE_PAUSE_S
                and _digits_said(words, h) >= _LONG_NUMBER_DIGITS):
            first = j
        j = last + 1
        while j < n and not _ends(words[j - 1].text, _SENTENCE_END):
            if digitlike(j):
                last = j
            elif j + 1 < n and not _ends(words[j].text, _SENTENCE_END) and cores[j] not in _TIME_PREPOSITIONS and (
                is_number_word(cores[j + 1]) or (digitlike(j + 1) and digitlike(j - 1))
            ):
                last = j + 1
                j += 1
            else:
                break
            j += 1
        if (last > h.last and j < n and is_unsure(words[j], UNSURE_BELOW) and cores[j] not in _NOT_A_DIGIT
                and not _ends(words[j - 1].text, _SENTENCE_END) and words[j].start - words[j - 1].end < SENTENCE_PAUSE_S
                and _digits_said(words, h) >= _LONG_NUMBER_DIGITS):
            last = j
        last = _last_digit(words, cores, first, last)
        if (first, last) != (h.first, h.last):
            out.append(WordHit(first, last, h.type, "phi", "rules:audio.number-edge"))
    return out


#: Digits of a phone number; a number said digit by digit one short of it lost its last digit to a word.
_PHONE_DIGITS = 10
_NOT_A_DIGIT = _CLAUSE_WORDS | _TIME_PREPOSITIONS


def _last_digit(words: Sequence[Word], cores: Sequence[str], first: int, last: int) -> int:
    """``last + 1`` where words ``first``..``last`` say a phone number one digit short, said digit by digit (a
    digit or a misheard word per word), and the word after them, in the same sentence, is closed by a comma the
    way the recogniser closes a digit group ("six, five, eight, ..., three, hind, two, salmon, after five" for
    "... nine two seven"): the number's last digit heard as a word. Else ``last``."""
    from anonpsy.audio.cues import is_number_word
    from anonpsy.audio.spoken import UNITS

    if last + 1 >= len(words) or _ends(words[last].text, _SENTENCE_END):
        return last
    said = 0
    for k in range(first, last + 1):
        if cores[k] in UNITS:
            said += 1
        elif cores[k].replace("-", "").isdigit():
            said += len(cores[k].replace("-", ""))
        elif is_number_word(cores[k]) or "-" in cores[k]:
            return last  # tens, hundreds, "double": the words do not count the digits
        else:
            said += 1  # a misheard digit inside the number
    nxt = words[last + 1].text.rstrip()
    if said == _PHONE_DIGITS - 1 and nxt.endswith(",") and cores[last + 1] not in _NOT_A_DIGIT \
            and not is_number_word(cores[last + 1]):
        return last + 1
    return last


#: Items of a digit list: at most this many words between two commas.
_LIST_ITEM_WORDS = 5


def digit_list_hits(words: Sequence[Word]) -> list[WordHit]:
    """Digits said one at a time, which the recogniser wrote as a list with a comma after each.

    A phone or record number said digit by digit with a short pause after each digit is written "five,
    salmon, five, salmon, one, eight, ..." when some digits are misheard as ordinary words; the misheard words
    break the number apart, and no piece of it is long enough for the number rules. Within a sentence, a run
    of comma-closed items (up to :data:`_LIST_ITEM_WORDS` words each) in which at least four items are a
    single number word, and the others end on a number word or a word a recogniser writes for a digit (or, one
    at a time, any short item between two such items), is one number. It starts at the first number word of
    its first item, or the first word written for a digit other than those that open a number ("at", "a",
    "then", "no", "know"), and ends with its last item. An item that opens with a preposition of time or
    amount ("after five") ends the run.
    """
    from anonpsy.audio.cues import is_number_word, is_numberish

    cores = [_core(w.text) for w in words]
    items: list[tuple[int, int]] = []
    k = 0
    n = len(words)
    while k < n:
        j = k
        while j + 1 < n and not _ends(words[j].text, _PHRASE_END):
            j += 1
        items.append((k, j))
        k = j + 1

    def kind(item: tuple[int, int]) -> str:
        a, b = item
        if b - a + 1 > _LIST_ITEM_WORDS or cores[a] in _TIME_PREPOSITIONS or _ends(words[b].text, (";", ":")):
            return "stop"
        if a == b and is_number_word(cores[a]) and (not cores[a].isdigit() or len(cores[a]) == 1):
            return "digit"
        if is_numberish(cores[b]):
            return "numberish"
        return "other"

    out: list[WordHit] = []
    run: list[int] = []  # indices into items of the current run, each digit or numberish

    def close() -> None:
        if sum(1 for r in run if kinds[r] == "digit") >= 4:
            a, _ = items[run[0]]
            b = items[run[0]][1]
            first = next((m for m in range(a, b + 1) if is_number_word(cores[m]) or cores[m] in _EDGE_SOUNDALIKES), b)
            out.append(WordHit(first, items[run[-1]][1], "OTHER_ID", "phi", "rules:audio.digit-list"))
        run.clear()

    kinds = [kind(it) for it in items]
    for i, it in enumerate(items):
        kd = kinds[i]
        if kd in ("digit", "numberish") or (kd == "other" and run and run[-1] == i - 1 and i + 1 < len(items)
              and kinds[i + 1] in ("digit", "numberish") and not _ends(words[it[1]].text, _SENTENCE_END)):
            run.append(i)
        else:
            close()
        if _ends(words[it[1]].text, _SENTENCE_END):
            close()
    close()
    return out


#: Digits said one at a time that make a phone number without its area code; a number of fewer digits with
#: misheard words between is as often a dose, a score and a count said in one sentence.
_SCATTERED_DIGITS = 7
#: At most this many words between two words that say digits, in a number whose digits were misheard.
_SCATTERED_GAP_WORDS = 2
#: A pause this long between two words that say digits parts two numbers.
_SCATTERED_PAUSE_S = 1.0


def _single_digits(cores: Sequence[str], k: int) -> int:
    """How many digits word ``k`` says one at a time: a digit word ("seven", "oh") not read as part of a larger
    number ("twenty eight", "five hundred"), digit words the recogniser joined with hyphens ("five-four",
    "two-six-seven"), or a number of up to three digits it wrote in digits ("258-"); else 0."""
    from anonpsy.audio.spoken import SCALES, TENS, UNITS

    c = cores[k]
    parts = [p for p in c.split("-") if p]
    if len(parts) > 1:
        return len(parts) if all(p in UNITS for p in parts) else 0
    if c.isdigit():
        return len(c) if len(c) <= 3 else 0
    if c not in UNITS:
        return 0
    if (k > 0 and cores[k - 1] in TENS) or (k + 1 < len(cores) and cores[k + 1] in SCALES):
        return 0
    return 1


def scattered_digit_hits(words: Sequence[Word]) -> list[WordHit]:
    """Digits said one at a time with misheard digits between them: a phone number the number rules cannot read.

    A number said digit by digit, fast or in an accent the recogniser knows badly, comes out as digit words and
    ordinary words mixed ("seven o'er thine, five-four thine, two-five breeded, extension two-six seven" for
    "seven oh nine, five four nine, two five three eight, extension two six seven"), the digits it did hear
    sometimes joined with hyphens; no run of number words is long enough for the number rules, and the words
    between are too varied to list. Within a sentence, words that say digits one at a time
    (:func:`_single_digits`) at most :data:`_SCATTERED_GAP_WORDS` words apart, with no pause of
    :data:`_SCATTERED_PAUSE_S` and no preposition of time or amount between them ("... after five"), saying at
    least :data:`_SCATTERED_DIGITS` digits in all, are one number, from the first of them to the last. Tens,
    teens and hundreds do not count, so a blood pressure or a dose said with them ("one twenty eight over eighty
    four") is no such number.
    """
    cores = [_core(w.text) for w in words]
    out: list[WordHit] = []
    chain: list[int] = []
    said = 0

    def close() -> None:
        if said >= _SCATTERED_DIGITS:
            out.append(WordHit(chain[0], chain[-1], "OTHER_ID", "phi", "rules:audio.scattered-digits"))

    for k in range(len(words)):
        d = _single_digits(cores, k)
        if not d:
            continue
        if chain and (k - chain[-1] - 1 > _SCATTERED_GAP_WORDS
                      or any(words[m + 1].start - words[m].end >= _SCATTERED_PAUSE_S for m in range(chain[-1], k))
                      or any(_ends(words[m].text, _SENTENCE_END) for m in range(chain[-1], k))
                      or any(cores[m] in _TIME_PREPOSITIONS for m in range(chain[-1] + 1, k))):
            close()
            chain, said = [], 0
        chain.append(k)
        said += d
    if chain:
        close()
    return out


def llm_hits(
    norm: Normalized, rule_hits: Sequence[WordHit], detector: Any, on_failure: OnLLMFailure
) -> list[WordHit]:
    """The chunked LLM detector on the written form; failed chunks become ``unchecked`` hits when muting."""
    known = []
    for h in rule_hits:
        toks = [t for t in norm.tokens if h.first <= t.first and t.last <= h.last]
        if toks:
            known.append(Span(toks[0].start, toks[-1].end, h.type))
    result = detector.detect(
        norm.text, known, case_id=None, on_failure="error" if on_failure == "error" else "mask_chunk"
    )
    hits = []
    for span in result.spans:
        rng = norm.words_of(span.start, span.end)
        if rng is not None:
            hits.append(WordHit(rng[0], rng[1], span.type, "phi", f"llm:{span.recognizer}"))
    for chunk in result.failed:
        rng = norm.words_of(chunk.start, chunk.end)
        if rng is not None:
            hits.append(WordHit(rng[0], rng[1], "UNCHECKED", "unchecked", "llm:unchecked-chunk"))
    return hits


def detect_words(
    words: Sequence[Word],
    cues: CueSet,
    *,
    analyze: AnalyzeFn | None = None,
    llm_detector: Any = None,
    on_llm_failure: OnLLMFailure = "error",
) -> tuple[Normalized, list[WordHit]]:
    """The written form of the transcript and every word range to mute."""
    norm = normalize([w.text for w in words])
    hits = analyzer_hits(norm, analyze or _default_analyze) if words else []
    hits += cue_hits(words, cues)
    hits += proper_noun_hits(words)
    hits += subject_hits(words)
    hits += unsure_subject_hits(words)
    hits += possessive_unsure_hits(words)
    hits += spoken_date_hits(words)
    hits += misheard_month_date_hits(words)
    hits += month_year_hits(words)
    hits += day_year_hits(words)
    hits += place_hits(words, cues)
    hits += street_address_hits(words)
    hits += digit_list_hits(words)
    hits += scattered_digit_hits(words)
    hits += number_bridge_hits(words, hits)
    hits += number_edge_hits(words, hits)
    hits += name_extensions(words, hits, cues)
    hits += unsure_extensions(words, hits)
    hits += unsure_street_hits(words)
    hits += house_number_hits(words, hits)
    hits += address_town_hits(words, hits)
    if llm_detector is not None and words:
        hits += llm_hits(norm, hits, llm_detector, on_llm_failure)
    hits.sort(key=lambda h: (h.first, h.last, h.type, h.detector))
    return norm, hits


__all__ = [
    "AnalyzeFn",
    "OnLLMFailure",
    "WordHit",
    "address_town_hits",
    "analyzer_hits",
    "cue_hits",
    "day_year_hits",
    "detect_words",
    "digit_list_hits",
    "house_number_hits",
    "lexicon",
    "llm_hits",
    "misheard_month_date_hits",
    "month_year_hits",
    "name_extensions",
    "number_bridge_hits",
    "number_edge_hits",
    "place_hits",
    "possessive_unsure_hits",
    "proper_noun_hits",
    "scattered_digit_hits",
    "spoken_date_hits",
    "street_address_hits",
    "subject_hits",
    "unsure_extensions",
    "unsure_street_hits",
    "unsure_subject_hits",
]
