"""ConText: is a concept in a sentence negated, uncertain, hypothetical, historical, or someone else's?

An implementation of the ConText algorithm (Harkema et al. 2009, extending NegEx) over the triggers in
``rules/lexicon/context.yaml``. Triggers are found with the lexicon matcher (leftmost-longest, so
the pseudo-trigger ``no increase`` swallows the trigger ``no``). A trigger applies to the concept at
``sentence[start:end]`` when the concept lies in the trigger's direction, within its scope (counted in words),
with no scope break (``.``, ``;``, ...) and no termination term for the trigger's category between them.
Triggers that overlap the concept itself never apply: the concept's own words (``no energy``) are not context.
A rule may be limited to some kinds of concept (``concepts: [medication]`` for "stopped", ``[diagnosis]`` for "does
not meet criteria for"); :meth:`ContextEngine.classify` applies it only when told the concept's kind. Scope
reaches over a list: a concept in a run of short comma- or and-joined items ("Prozac, Paxil, lithium, and
Zoloft") is as far from a trigger before the list as the list's first item. The ``current`` category (a
treatment the patient takes now: "is taking", "continue") ends a historical scope and marks the treatment
current.

Example::

    >>> s = "Mother had bipolar disorder; he denies suicidal ideation."
    >>> classify(s, s.index("bipolar"), s.index(";")).experiencer
    'family'
    >>> classify(s, s.index("suicidal"), len(s) - 1).negated
    True
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field

from anonpsy.caseless import Caseless
from anonpsy.lexicon import (
    _TOKEN_RE,
    IndexSpec,
    TermIndex,
    _FileHeader,
    _Strict,
    build_index,
    find_terms,
    load_doc,
)

Category = Literal[
    "negated", "possible", "hypothetical", "historical", "current", "family", "other_experiencer", "pseudo",
    "termination",
]
ConceptKind = Literal["diagnosis", "symptom", "medication", "therapy"]
CONCEPT_KINDS: tuple[ConceptKind, ...] = ("diagnosis", "symptom", "medication", "therapy")
Direction = Literal["forward", "backward", "bidirectional"]
Experiencer = Literal["patient", "family", "other"]
ContextLabel = Literal["negated", "possible", "hypothetical", "historical", "current", "family", "other",
                       "affirmed"]
CONTEXT_LABELS: tuple[ContextLabel, ...] = (
    "negated", "possible", "hypothetical", "historical", "current", "family", "other", "affirmed"
)
_ACTIVE: tuple[Category, ...] = (
    "negated", "possible", "hypothetical", "historical", "current", "family", "other_experiencer"
)
#: A separator that joins the item before ``pos`` to a list: ", ", ", and ", " or ".
_LIST_SEP = Caseless(re.compile(r"(?:,\s*(?:and/or|and|or|nor)?|\s(?:and/or|and|or|nor|&))\s*(?:(?:a|an|the|some|any|"
                                r"his|her|their)\s+)?$", re.I))
#: Categories whose trigger, between another trigger and the concept, ends that trigger's scope ("Discontinue X,
#: begin Y": Y is not stopped).
#: A plan between a current trigger and the concept ends the current scope too ("Since the patient is on Plavix, I
#: recommend that the Plavix be discontinued": the recommendation, not the earlier "is on", frames the second Plavix);
#: a warning (:data:`_NOT_A_PLAN`) is no plan.
_OPPOSITE: dict[str, frozenset[str]] = {"historical": frozenset({"current"}),
                                        "current": frozenset({"historical", "hypothetical"})}
#: Hypothetical triggers that warn or watch rather than plan ("to prevent", "risk of", "monitor for"): they end no
#: current scope ("is taking lithium to prevent relapse and sertraline").
_NOT_A_PLAN = frozenset({"hyp.prevention"})
_LIST_ITEM_WORDS = 4
#: A slash between two words that joins the items of a charted list ("no fever/chills/SOB"): letters on both sides,
#: and not the slash of "and/or". Only for concepts other than drugs, whose slashes are doses ("mg/day") and
#: combinations ("acetaminophen/codeine").
_SLASH_SEP = re.compile(r"(?<=[A-Za-z])(?<!\band)/(?=[A-Za-z])(?!or\b)", re.I)
#: "or"/"nor" between alternatives inside one comma item of a list.
_OR_SPLIT = re.compile(r"\s(?:or|nor)\s", re.I)
_BACKWARD_SUFFIX = "#backward"

#: A trigger hyphened without a space onto the word before it ("75 mg q.d-discontinued", "10 mg-stopped").
_GLUED_BEFORE = re.compile(r"[\w.]-$")
#: The item number of a running list ("..., 3) Anxiety disorder", "; (b) asthma"): a new item of the list.
_ITEM_NUMBER = re.compile(r"[,;]\s*\(?(?:\d{1,2}|[a-h])\)\s*(?=[A-Za-z])")
#: Any item number, the first of a list included ("Probable: 1) X, 2) Y").
_ANY_ITEM_NUMBER = re.compile(r"(?<![\w/.])\(?(?:\d{1,2}|[a-h])\)\s*(?=[A-Za-z])")


class ContextRule(_Strict):
    """One group of trigger phrases sharing a category, direction and scope."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    category: Category
    phrases: tuple[str, ...]
    backward_phrases: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()
    direction: Direction | None = None
    scope: int | None = Field(default=None, ge=1, le=50)
    member: str | None = None
    applies_to: tuple[Category, ...] | None = None
    concepts: tuple[ConceptKind, ...] | None = None
    hedged: bool = False
    item_bound: bool = False
    #: Termination rules that do not end this trigger's scope: a relative's death keeps its cause ("grandmother
    #: deceased in 2001 due to cancer": the cancer is the grandmother's).
    crosses: tuple[str, ...] = ()
    source: str | None = None
    note: str | None = None

    def applies(self, kind: ConceptKind | None) -> bool:
        """Does the rule apply to a concept of this kind (a rule without ``concepts`` applies to all; a
        restricted rule never applies when the kind is not known)?"""
        return self.concepts is None or (kind is not None and kind in self.concepts)


class ContextRules(_FileHeader):
    default_scope: int = Field(ge=1, le=50)
    scope_breaks: tuple[str, ...]
    rules: tuple[ContextRule, ...]


@dataclass(frozen=True, slots=True)
class ContextResult:
    """The context of one concept mention."""

    negated: bool = False
    hypothetical: bool = False
    historical: bool = False
    experiencer: Experiencer = "patient"
    family_member: str | None = None
    trigger_ids: tuple[str, ...] = ()
    uncertain: bool = False
    current: bool = False

    @property
    def affirmed(self) -> bool:
        """True when the concept is asserted, current and the patient's own."""
        return not (self.negated or self.hypothetical or self.historical or self.uncertain) and (
            self.experiencer == "patient"
        )

    def labels(self) -> frozenset[ContextLabel]:
        """Set of labels (``negated``, ``possible``, ..., or just ``affirmed``) used by the cases files."""
        out: set[ContextLabel] = set()
        if self.negated:
            out.add("negated")
        if self.uncertain:
            out.add("possible")
        if self.hypothetical:
            out.add("hypothetical")
        if self.historical:
            out.add("historical")
        if self.current:
            out.add("current")
        if self.experiencer == "family":
            out.add("family")
        elif self.experiencer == "other":
            out.add("other")
        return frozenset(out or {"affirmed"})


@dataclass(frozen=True)
class _Trigger:
    rule: ContextRule
    direction: Direction | None
    start: int
    end: int


class ContextEngine:
    """Compiled ConText rules. :func:`default_engine` gives the project's rules (cached)."""

    def __init__(self, rules: ContextRules) -> None:
        self.rules = rules
        self.by_id = {r.id: r for r in rules.rules}
        self.breaks = frozenset(rules.scope_breaks)
        self._indexes: dict[ConceptKind | None, TermIndex] = {}
        self.index: TermIndex = self._index(None)
        #: Token starts and running counts of words and scope breaks of the sentences read last (every mention of a
        #: sentence is classified against the same tokens).
        self._layouts: dict[tuple[str, bool], tuple[str, list[int], list[int], list[int]]] = {}
        #: The triggers of the sentences read last, per kind of concept (:meth:`triggers`).
        self._found: dict[tuple[str, ConceptKind | None], tuple[_Trigger, ...]] = {}

    def _index(self, kind: ConceptKind | None) -> TermIndex:
        """The triggers that apply to a concept of ``kind``, compiled into one leftmost-longest index (a phrase of
        a rule limited to drugs never hides a shorter trigger from a symptom)."""
        if kind not in self._indexes:
            specs: list[IndexSpec] = []
            for r in self.rules.rules:
                if not r.applies(kind):
                    continue
                specs.append(IndexSpec(r.id, r.id, r.phrases, r.abbreviations))
                if r.backward_phrases:
                    specs.append(IndexSpec(r.id + _BACKWARD_SUFFIX, r.id, r.backward_phrases))
            self._indexes[kind] = build_index(specs)
        return self._indexes[kind]

    def prepare(self) -> None:
        """Compile the trigger index of every kind of concept now, rather than on the first mention of that kind
        (a long-running process pays once, before its first note)."""
        for kind in (None, *CONCEPT_KINDS):
            self._index(kind)

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> ContextEngine:
        """Engine from a raw ``context_rules`` mapping."""
        return cls(ContextRules.model_validate(doc))

    @property
    def conflicts(self) -> list[str]:
        """Trigger phrases claimed by two rules that apply to the same kind of concept (the first one wins)."""
        out: dict[str, None] = {}
        for kind in (None, *CONCEPT_KINDS):
            for c in self._index(kind).conflicts:
                out.setdefault(c, None)
        return list(out)

    def triggers(self, sentence: str, kind: ConceptKind | None = None) -> list[_Trigger]:
        """Every trigger, pseudo-trigger and termination term that applies to a concept of ``kind`` in the
        sentence, in order (one scan per sentence and kind among those read last: every mention of a sentence is
        classified against the same triggers)."""
        key = (sentence, kind)
        hit = self._found.get(key)
        if hit is None:
            if len(self._found) >= 4096:
                self._found.clear()
            hit = self._found[key] = tuple(self._scan(sentence, kind))
        return list(hit)

    def _scan(self, sentence: str, kind: ConceptKind | None) -> list[_Trigger]:
        out: list[_Trigger] = []
        for m in self._index(kind).find(sentence):
            if m.id.endswith(_BACKWARD_SUFFIX):
                rule = self.by_id[m.id[: -len(_BACKWARD_SUFFIX)]]
                out.append(_Trigger(rule, "backward", m.start, m.end))
            else:
                rule = self.by_id[m.id]
                direction = rule.direction
                if direction == "bidirectional" and _GLUED_BEFORE.search(sentence, 0, m.start):
                    # "Plavix 75 mg q.d-discontinued, enalapril 10 mg": a word hyphened onto an item of a list
                    # annotates that item, never the next one
                    direction = "backward"
                out.append(_Trigger(rule, direction, m.start, m.end))
        return out

    def classify(self, sentence: str, start: int, end: int, kind: ConceptKind | None = None) -> ContextResult:
        """Context of the concept at ``sentence[start:end]``; ``kind`` enables the rules limited to that kind of
        concept."""
        if not 0 <= start < end <= len(sentence):
            raise ValueError("concept span must satisfy 0 <= start < end <= len(sentence)")
        dose_blind = kind == "medication"
        masked, starts, words, breaks = self._layout(sentence, dose_blind)
        triggers = self._split_pseudo(self.triggers(sentence, kind), sentence, start, end, kind)
        terminations = [t for t in triggers if t.rule.category == "termination"]
        opposed = [t for t in triggers if t.rule.category in ("historical", "current", "hypothetical")
                   and t.rule.id not in _NOT_A_PLAN]
        first, last = _list_span(masked, start, end, dose_blind)

        def tok_at(pos: int) -> int:
            return bisect.bisect_left(starts, pos)

        def blocked(lo: int, hi: int, category: Category, crosses: tuple[str, ...] = ()) -> bool:
            """Is there a break or an applicable termination between char offsets lo and hi (a termination the
            trigger ``crosses`` does not count)?"""
            i, j = tok_at(lo), tok_at(hi)
            if i < j and breaks[j] > breaks[i] and not (
                category == "historical" and breaks[j] - breaks[i] == 1 and _STOP_CLAUSE.search(sentence, lo, hi)
            ):
                return True
            if _new_item(sentence, lo, hi):
                return True
            if any(lo <= t.start and t.end <= hi and t.rule.category in _OPPOSITE.get(category, ())
                   for t in opposed):
                return True
            return any(
                lo <= t.start and t.end <= hi
                and (t.rule.applies_to is None or category in t.rule.applies_to)
                and t.rule.id not in crosses
                for t in terminations
            )

        def distance(lo: int, hi: int) -> int:
            i, j = tok_at(lo), tok_at(hi)
            return words[j] - words[i] if i < j else 0

        applied: list[tuple[int, _Trigger]] = []
        for trig in triggers:
            cat = trig.rule.category
            if cat not in _ACTIVE or trig.direction is None:
                continue
            if trig.start < end and start < trig.end:
                continue  # overlaps the concept itself
            scope = trig.rule.scope or self.rules.default_scope
            if trig.end <= start and trig.direction in ("forward", "bidirectional"):
                lo, hi = trig.end, start
                dist = distance(lo, max(lo, first))
            elif trig.start >= end and trig.direction in ("backward", "bidirectional"):
                lo, hi = end, trig.start
                dist = distance(min(last, hi), hi)
            else:
                continue
            if dist > scope or blocked(lo, hi, cat, trig.rule.crosses):
                continue
            if trig.rule.item_bound and hi == start and _other_item(sentence, lo, hi, last):
                continue
            if trig.rule.item_bound and lo == end and _LATER_ITEM.search(sentence, lo, hi):
                continue  # "history of BPH and obstruction must be investigated": only the nearest item
            if kind == "medication" and trig.rule.id.startswith("hist.stop") \
                    and _stop_of_another_item(sentence, trig, lo, hi, forward=hi == start):
                continue
            applied.append((dist, trig))
        return _result(applied)


    def _split_pseudo(self, triggers: list[_Trigger], sentence: str, start: int, end: int,
                      kind: ConceptKind | None) -> list[_Trigger]:
        """A pseudo-trigger the concept begins inside and runs past ("no sleep" in "No sleep disturbance was
        noted", where the concept is the sleep disturbance) is not read as a whole: the words before the concept
        are read again for the triggers it held ("No")."""
        split = [t for t in triggers if t.rule.category == "pseudo" and t.start < start < t.end < end]
        if not split:
            return triggers
        out = [t for t in triggers if t not in split]
        for t in split:
            for m in self._index(kind).find(sentence[t.start:start]):
                if m.id.endswith(_BACKWARD_SUFFIX):
                    continue
                rule = self.by_id[m.id]
                out.append(_Trigger(rule, rule.direction, t.start + m.start, t.start + m.end))
        return sorted(out, key=lambda t: t.start)

    def _layout(self, sentence: str, dose_blind: bool) -> tuple[str, list[int], list[int], list[int]]:
        """The sentence with the periods of abbreviations masked ("p.o.", "b.i.d." end no scope), the start of every
        token of :func:`anonpsy.lexicon.tokenize`, and the number of word tokens and of scope-break tokens before
        each token (``counts[j] - counts[i]``: how many among tokens ``i`` to ``j - 1``). With ``dose_blind`` (a
        drug), the dose, route and frequency written after each item of a list are not words that carry the scope
        away from the next item."""
        key = (sentence, dose_blind)
        hit = self._layouts.get(key)
        if hit is None:
            if len(self._layouts) >= 4096:
                self._layouts.clear()
            masked = _mask_dots(sentence) if "." in sentence else sentence
            starts: list[int] = []
            words, breaks = [0], [0]
            w = b = 0
            for m in _TOKEN_RE.finditer(sentence):
                tok = m.group()
                starts.append(m.start())
                w += tok[0].isalnum() and not (dose_blind and _is_dose_word(tok))
                b += tok in self.breaks and masked[m.start()] == tok[0]
                words.append(w)
                breaks.append(b)
            hit = self._layouts[key] = (masked, starts, words, breaks)
        return hit


#: Wording that makes a list a set of alternatives, each as uncertain as the first ("possible X, Y or Z").
_ALTERNATIVES = re.compile(r"\b(?:or|and/or|vs\.?|versus)\b", re.I)


def _other_item(sentence: str, lo: int, hi: int, last: int) -> bool:
    """Is the concept at ``hi`` in a later list item than the one a modifier ending at ``lo`` opens ("possible
    diabetes, meningioma": meningioma is not hedged)? Not when the modifier opens the list with a colon
    ("possible: X, Y") or the list is a set of alternatives ("possible X, Y or Z")."""
    between = sentence[lo:hi]
    if "," not in between or between.lstrip().startswith(":"):
        return False
    return not _ALTERNATIVES.search(sentence, lo, max(last, hi))


#: Another item between a concept and a trigger after it that governs one item only (``item_bound``).
_LATER_ITEM = re.compile(r",|\b(?:and|or|as\s+well\s+as)\b", re.I)


def _new_item(sentence: str, lo: int, hi: int) -> bool:
    """Does a numbered item of a running list begin between a trigger and a concept ("without loss of
    consciousness, 5/93, 3) Anxiety disorder")? A trigger inside one item reaches no later item; one that opens
    the list ("Probable: 1) X, 2) Y") is not inside an item and still does."""
    if _ITEM_NUMBER.search(sentence, lo, hi + 1) is None:
        return False
    first = _ANY_ITEM_NUMBER.search(sentence, lo, hi + 1)
    return first is not None and bool(re.search(r"\w", sentence[lo:first.start()]))


def _past_an_order(sentence: str, lo: int, hi: int) -> bool:
    """Does a list item that names no drug stand between a stop ending at ``lo`` and the drug at ``hi`` ("hold
    p.o. medications, GI consult, pain control, Zofran IV p.r.n.")? The list is then one of orders, and the stop
    is its own item's; in a list of drugs ("stop Paxil, Zoloft and Xanax") it reaches every drug."""
    items = sentence[lo:hi].split(",")[1:-1]
    return any(item.strip() and not find_terms(item, "medication") for item in items)


def _stop_of_another_item(sentence: str, trig: _Trigger, lo: int, hi: int, *, forward: bool) -> bool:
    """Does a stop, reaching a drug of a list across ``lo``..``hi``, belong to another item of that list? Forward:
    an item of orders stands between (:func:`_past_an_order`), or a stop written both ways tells of the drug
    before it (:func:`_tells_the_item_before`). Backward: a later dosed item stands between
    (:func:`_stop_of_a_later_item`)."""
    both_ways = trig.rule.direction == "bidirectional"
    if forward:
        return _past_an_order(sentence, lo, hi) or (both_ways and _tells_the_item_before(sentence, trig.start, hi))
    return both_ways and _stop_of_a_later_item(sentence, lo, hi)


def _tells_the_item_before(sentence: str, at: int, hi: int) -> bool:
    """Does a stop at ``at``, a comma before the drug at ``hi``, follow a drug of its own list item ("Zoloft
    discontinued, vitamin D") or, written as an item of its own, the drug of the item before ("aspirin 500 mg
    daily, which is currently stopped, vitamin D")? It tells of that drug and reaches no later item."""
    if "," not in sentence[at:hi]:
        return False
    own = sentence.rfind(",", 0, at)
    if find_terms(sentence[own + 1:at], "medication"):
        return True
    if own < 0:
        return False
    before = sentence.rfind(",", 0, own) + 1
    return bool(find_terms(sentence[before:own], "medication"))


def _stop_of_a_later_item(sentence: str, lo: int, hi: int) -> bool:
    """Does a later item of a list of doses stand between the drug ending at ``lo`` and a stop at ``hi``
    ("Norvasc 10 mg daily, aspirin 500 mg three times a day, which is currently stopped")? The stop tells of the
    drug nearest it, with its own dose, not of every drug before. A stop after a bare list of names ("Paxil,
    Zoloft and Xanax stopped") still reaches each."""
    between = sentence[lo:hi]
    if "," not in between:
        return False
    drugs = find_terms(between, "medication")
    return bool(drugs) and re.search(r"\d", between[drugs[-1].end:]) is not None


#: A clause after a semicolon that only tells the item before it has stopped ("2 ppd smoker since his teens; quit
#: 2 years ago", "ETOH abuse; none since 1990"): its past reaches back over that one semicolon.
_STOP_CLAUSE = re.compile(r";\s*(?:has\s+|had\s+)?(?:quit|stopped|discontinued|gave\s+up|given\s+up|none\s+since|"
                          r"abstinent\s+since|sober\s+since)\b"
                          r"(?!\s+(?:his|her|their|the|my|this|that|a|an|its|school|work)\b(?!\s+(?:years?|months?|weeks?|"
                          r"decades?|few|couple)\b))", re.I)


#: The point of a decimal number ("Premarin 0.3 mg daily, currently stopped"): it ends no scope. (Each of the
#: patterns of masked periods opens with the period, so the engine looks for periods only.)
_DECIMAL_DOT = re.compile(r"\.(?<=\d\.)(?=\d)")

#: A period of an abbreviation: after a single letter that is not part of a word ("p.o.", "b.i.d.", "q.p.m."), or
#: of a title before a name ("Mr. T was confronted": the title ends no scope).
_ABBREV_DOT = re.compile(r"\.(?:(?<=(?<![A-Za-z0-9])[A-Za-z]\.)|(?<=(?<![A-Za-z0-9])(?:Mr|Ms|Dr)\.)"
                         r"|(?<=(?<![A-Za-z0-9])(?:Mrs|Drs)\.)|(?<=(?<![A-Za-z0-9])Prof\.))(?=[A-Za-z]\.|[\s,;)]|$)")
#: The period of "etc." that closes a list inside the sentence, before a comma, a bracket or a word in lower case
#: ("a stroke, subdural hematoma, etc., should be ruled out": the hedge after the list reaches its items).
_ETC_DOT = re.compile(r"(?<![A-Za-z0-9])((?i:etc))\.(?=\s*[,;)]|\s+[a-z])")


def _mask_dots(sentence: str) -> str:
    """``sentence`` with the periods of abbreviations, of "etc." inside a list and of decimal numbers written as
    a middle dot (offsets kept)."""
    masked = _ABBREV_DOT.sub("\u00b7", sentence)
    if "etc" in masked.lower():
        masked = _ETC_DOT.sub("\\1\u00b7", masked)
    return _DECIMAL_DOT.sub("\u00b7", masked)


#: Dose, route and frequency words after a drug's name ("300 mg p.o. b.i.d.", "15 mg per day", "at bedtime").
_DOSE_WORD = re.compile(r"(?:\d[\d.,/-]*|[a-z]|mgs?|mcg|mg/kg|gm?|ml|cc|units?|iu|tabs?|tablets?|caps?|capsules?|"
                        r"puffs?|drops?|patch|per|day|daily|nightly|weekly|am|pm|qam|qpm|qhs|hs|qd|bid|tid|qid|prn|"
                        r"po|im|iv|sl|bedtime|once|twice|times|x)$", re.I)


@lru_cache(maxsize=4096)
def _is_dose_word(token: str) -> bool:
    """Is ``token`` a dose, route or frequency word (:data:`_DOSE_WORD`)? Remembered: the same few words recur
    after every drug."""
    return _DOSE_WORD.match(token) is not None


def _item_words(item: str, dose_blind: bool) -> int:
    """Words of a list item; with ``dose_blind``, not counting a drug's dose, route and frequency."""
    words = item.split()
    if not dose_blind:
        return len(words)
    return sum(1 for w in words if not _DOSE_WORD.match(w.strip(",.·()")) and w.strip(",.·()"))


_ITEM_LEAD = re.compile(r"\s*(?:(?:and/or|and|or|nor)\s+)?")
_STOP_OR_COLON = re.compile(r"[.!?:]")


_SENTENCE_STOP = re.compile(r"[.!?]\s")
_ITEM_JOIN = re.compile(r"\s*(?:,\s*(?:and/or|and|or|nor)?|(?:and/or|and|or|nor|&)(?=\s))\s*")


_ITEM_SLASHED = re.compile(r"[^,;:.!?()/]*")
_ITEM = re.compile(r"[^,;:.!?()]*")


#: The most words of a list item that is longer than the usual few (:func:`_noun_item`).
_NOUN_ITEM_WORDS = 6
#: A word that makes a list item a clause, not a noun phrase.
_CLAUSE_WORD = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|that|which|who|he|she|they|we|I|"
                          r"it|his|her|their|denies|denied|reports?|reported|states?|stated|but|although|though|"
                          r"because|since|when|while|if|not|no|without|except)\b", re.I)


def _noun_item(item: str, dose_blind: bool) -> bool:
    """A list item of a few more words than the usual that is a noun phrase ("bright red blood per rectum"): one
    more item of a list of short ones, never a clause."""
    return _item_words(item, dose_blind) <= _NOUN_ITEM_WORDS and _CLAUSE_WORD.search(item) is None


def _list_span(sentence: str, start: int, end: int, dose_blind: bool = False) -> tuple[int, int]:
    """Where the list the concept at ``[start, end)`` belongs to begins and ends: the first and last of the
    short items joined to it by commas or "and"/"or" (the concept's own span when it is in no list); with
    ``dose_blind``, the dose, route and frequency after a drug do not make its item long."""
    first = start
    slashes = not dose_blind and "/" in sentence

    def cut_before(pos: int, marks: str) -> int:
        """The last of ``marks`` (or, outside drugs, a list slash) before ``pos``; -1 when none."""
        at = max(sentence.rfind(c, 0, pos) for c in marks)
        if slashes:
            for m in _SLASH_SEP.finditer(sentence, 0, pos):
                at = max(at, m.start())
        return at

    # the concept may end an item that starts with a few words of its own (", or symptoms of anxiety")
    cut = cut_before(start, ",;")
    if cut >= 0:
        prefix = sentence[cut + 1:start]
        lead = _ITEM_LEAD.match(prefix)
        rest = prefix[lead.end() if lead else 0:]
        if 0 < len(rest.split()) <= 3 and not _STOP_OR_COLON.search(rest):
            first = cut + 1 + (lead.end() if lead else 0)
    passed = 0
    for _ in range(16):
        m = _LIST_SEP.search(sentence, 0, first)
        if m is None and slashes and first > 0 and _SLASH_SEP.match(sentence, first - 1):
            m = _SLASH_SEP.match(sentence, first - 1)
        if m is None:
            break
        cut = cut_before(m.start(), ",;:(")
        item = sentence[cut + 1:m.start()]
        words = item.split()
        if not words or _SENTENCE_STOP.search(item):
            break
        alts = _OR_SPLIT.split(item)
        if _item_words(item, dose_blind) > _LIST_ITEM_WORDS and len(alts) > 1 and all(
                0 < _item_words(a, dose_blind) <= _LIST_ITEM_WORDS for a in alts):
            # "fevers, chills or shortness of breath or chest pain": a comma item that is itself short
            # alternatives joined by "or" is as many items of the list
            first = cut + 1 + len(item) - len(item.lstrip())
            continue
        if passed >= 2 and _noun_item(item, dose_blind):
            # "..., bright red blood per rectum, bleeding stomach ulcers, renal calculi, asthma": a longer item
            # inside a list of short ones, with no word of a clause, is one more item
            first = cut + 1 + len(item) - len(item.lstrip())
            passed += 1
            continue
        if _item_words(item, dose_blind) > _LIST_ITEM_WORDS:
            # the first item hangs on the words before it ("include Haldol and lithium"): its last word
            first = m.start() - len(item.rstrip()) + item.rstrip().rfind(words[-1]) if item.rstrip() else first
            break
        first = cut + 1 + len(item) - len(item.lstrip())
        passed += 1
    last = end
    for passed in range(16):
        m = _ITEM_JOIN.match(sentence[last:])
        if (m is None or not m.group(0).strip()) and slashes and _SLASH_SEP.match(sentence, last):
            m = re.match("/", sentence[last:])
        if m is None or not m.group(0).strip():
            break
        rest = sentence[last + m.end():]
        nxt = (_ITEM_SLASHED if slashes else _ITEM).match(rest)
        item = nxt.group(0) if nxt else ""
        if not item.split() or (_item_words(item, dose_blind) > _LIST_ITEM_WORDS
                                and not (passed >= 2 and _noun_item(item, dose_blind))):
            break
        last = last + m.end() + len(item.rstrip())
    return first, last


def _result(applied: Iterable[tuple[int, _Trigger]]) -> ContextResult:
    items = sorted(applied, key=lambda x: x[1].start)
    cats = {t.rule.category for _, t in items}
    experiencer: Experiencer = "patient"
    member: str | None = None
    people = [(d, t) for d, t in items if t.rule.category in ("family", "other_experiencer")]
    if people:
        _, nearest = min(people, key=lambda x: (x[0], -x[1].start))
        experiencer = "family" if nearest.rule.category == "family" else "other"
        member = nearest.rule.member
    return ContextResult(
        negated="negated" in cats,
        hypothetical="hypothetical" in cats,
        historical="historical" in cats,
        experiencer=experiencer,
        family_member=member,
        trigger_ids=tuple(dict.fromkeys(t.rule.id for _, t in items)),
        uncertain="possible" in cats or any(t.rule.hedged for _, t in items),
        current="current" in cats,
    )


@lru_cache(maxsize=1)
def default_engine() -> ContextEngine:
    """The engine built from the project's ``rules/lexicon/context.yaml`` (cached)."""
    return ContextEngine.from_doc(load_doc("context"))


def classify(sentence: str, start: int, end: int, kind: ConceptKind | None = None) -> ContextResult:
    """ConText classification of the concept at ``sentence[start:end]`` with the project's rules.

    >>> s = "No history of psychosis."
    >>> classify(s, 14, 23).negated
    True
    """
    return _classify(sentence, start, end, kind)


@lru_cache(maxsize=8192)
def _classify(sentence: str, start: int, end: int, kind: ConceptKind | None) -> ContextResult:
    # the same mention is classified again by every step that asks about it, and on every read of the text
    return default_engine().classify(sentence, start, end, kind)
