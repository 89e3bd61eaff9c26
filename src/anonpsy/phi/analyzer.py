"""The PHI analyzer: runs every rule recognizer over a text and returns non-overlapping typed spans.

Pipeline: pattern recognizers (with validators, context boosts, deny words and retyping), person-name cues and
dictionaries, gazetteers; then the clinical safe-list drops name/place/organisation hits on eponyms, drugs and
scale names; spans under ``score_threshold`` are dropped; overlaps are resolved by length, then
``TYPE_PRIORITY``.

Rules are loaded once per rules directory and cached; :class:`Analyzer` holds the compiled recognizers for
reuse.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonpsy.errors import R100_RULE_SCHEMA, AnonpsyError
from anonpsy.paths import rules_dir
from anonpsy.phi.recognizers import (
    CLINICAL,
    COMMON,
    DIGIT_RUN,
    FIRST,
    LAST,
    STOP,
    GazetteerFile,
    GazetteerRecognizer,
    NameRecognizer,
    NamesFile,
    PatternRecognizer,
    PatternsFile,
    Safelist,
    SafelistFile,
    TermIndex,
    age_over_limit,
    common_english_words,
    faker_names,
    is_year_only,
)
from anonpsy.phi.safelist import build_safelist, clinical_words, load_lexicons
from anonpsy.phi.spans import Span, resolve_overlaps
from anonpsy.phi.tokens import TextView, core_span, spaced_key
from anonpsy.phi.types import AGE_SAFE_HARBOR_LIMIT, HIPAA_MAP, TYPE_PRIORITY, EntityType
from anonpsy.yamlio import load_yaml

#: A name, place or institution found with at least this score lends its distinctive words to their other
#: mentions in the same text, which get :data:`PROPAGATE_SCORE`.
PROPAGATE_FROM = 0.7
PROPAGATE_SCORE = 0.6
_PROPAGATED_TYPES = frozenset({"PERSON", "LOCATION", "ORGANIZATION"})
_NOT_DISTINCTIVE = COMMON | CLINICAL | STOP
_TOWN_AFTER_ADDRESS = re.compile(r"\s*(?:,|\s(?i:in))\s+([A-Z][A-Za-z'’-]+(?:\s[A-Z][A-Za-z'’-]+)?)(?![\w'’-])")

PHI_KINDS = ("phi_patterns", "phi_names", "phi_gazetteer", "phi_safelist")
_TYPE_VALUES = frozenset(t.value for t in EntityType)


def load_phi_docs(root: Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Read every PHI rule file (``rules/phi/*.yaml``, cases files excluded) as ``(stem, document)`` pairs."""
    base = (root or rules_dir()) / "phi"
    docs: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(base.glob("*.yaml")):
        if path.name.endswith(".cases.yaml"):
            continue
        doc = load_yaml(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc.get("kind") in PHI_KINDS:
            docs.append((path.stem, doc))
    return docs


@dataclass(frozen=True)
class Analyzer:
    """Compiled PHI recognizers: build once (:meth:`from_docs`, :meth:`default`), then :meth:`analyze`."""

    patterns: tuple[PatternRecognizer, ...]
    terms: TermIndex
    names: NameRecognizer
    gazetteer: GazetteerRecognizer
    safelist: Safelist
    suppressible: frozenset[str]
    rule_ids: frozenset[str]
    anchor_words: Any = None  # Aho-Corasick automaton: anchor word -> ((recognizer index, length), ...)
    anchor_tokens: Any = None  # automaton over TextView.spaced: whole-word anchor -> (recognizer indexes)
    digit_gated: bool = False  # some rule is anchored on digit runs

    @classmethod
    def from_docs(cls, docs: Iterable[Mapping[str, Any]], rules_root: Path | None = None) -> Analyzer:
        """Validate and compile rule documents of the four PHI kinds (other kinds are ignored)."""
        patterns: list[PatternRecognizer] = []
        name_rules = []
        gaz_rules = []
        safe_rules = []
        ids: set[str] = set()
        for i, doc in enumerate(docs):
            kind = doc.get("kind")
            try:
                if kind == "phi_patterns":
                    pf = PatternsFile.model_validate(doc)
                    patterns.extend(PatternRecognizer.from_rule(r, pf.definitions) for r in pf.rules)
                    ids.update(r.id for r in pf.rules)
                elif kind == "phi_names":
                    nf = NamesFile.model_validate(doc)
                    name_rules.extend(nf.rules)
                    ids.update(r.id for r in nf.rules)
                elif kind == "phi_gazetteer":
                    gf = GazetteerFile.model_validate(doc)
                    gaz_rules.extend(gf.rules)
                    ids.update(r.id for r in gf.rules)
                elif kind == "phi_safelist":
                    sf = SafelistFile.model_validate(doc)
                    safe_rules.extend(sf.rules)
                    ids.update(r.id for r in sf.rules)
            except (ValueError, KeyError) as exc:  # pydantic ValidationError and re.error are ValueErrors
                raise AnonpsyError(
                    R100_RULE_SCHEMA,
                    f"PHI rule document {i} ({kind}) is invalid: {type(exc).__name__}; run `anonpsy rules check`",
                ) from None
        lexicon_names = {r.from_lexicon for r in safe_rules if r.from_lexicon}
        lexicons = load_lexicons(rules_root or rules_dir(), sorted(lexicon_names))
        safelist = build_safelist(safe_rules, lexicons)
        lists_dir = (rules_root or rules_dir()) / "phi" / "lists"
        try:
            names = NameRecognizer.from_rules(name_rules, clinical_words(safe_rules, lexicons), lists_dir)
        except OSError:
            raise AnonpsyError(
                R100_RULE_SCHEMA, "a name list file of the phi_names rules cannot be read; run `anonpsy rules check`"
            ) from None
        # Place names that are also common first or last names (Faker's lists) need a place word before them; the
        # long census surname list (Baltimore, Calvert, Towson are surnames too) does not make a place ambiguous.
        first, last = faker_names(tuple(loc for r in name_rules for loc in r.locales))
        ambiguous = common_english_words() | first | last | names.stop
        try:
            gazetteer = GazetteerRecognizer.from_rules(gaz_rules, frozenset(ambiguous), names, lists_dir)
        except OSError:
            raise AnonpsyError(
                R100_RULE_SCHEMA,
                "a place list file of the phi_gazetteer rules cannot be read; run `anonpsy rules check`",
            ) from None
        suppressible = frozenset(t.value for r in safe_rules for t in r.suppresses)
        return cls(
            tuple(patterns),
            TermIndex.build(patterns),
            names,
            gazetteer,
            safelist,
            suppressible,
            frozenset(ids),
            _anchor_automaton(patterns),
            _token_automaton(patterns),
            any(p.min_digit_run for p in patterns),
        )

    def __repr__(self) -> str:
        return f"Analyzer({len(self.patterns)} pattern recognizers, {len(self.rule_ids)} rules)"

    @classmethod
    def default(cls) -> Analyzer:
        """The analyzer for the project's rules directory (cached)."""
        return _default_analyzer(str(rules_dir()))

    def candidates(self, text: str, view: TextView | None = None) -> list[Span]:
        """Every recognizer hit before safe-listing, thresholding and overlap resolution."""
        out: list[Span] = []
        view = view if view is not None else TextView(text)
        folded = view.folded
        # One automaton pass finds the anchor words of every rule; a rule whose anchors are absent is skipped.
        word_hits: dict[int, list[tuple[int, int]]] = {}
        if self.anchor_words is not None and len(self.anchor_words):
            for end, found in self.anchor_words.iter(folded):
                for idx, length in found:
                    word_hits.setdefault(idx, []).append((end + 1 - length, end + 1))
        if self.anchor_tokens is not None and len(self.anchor_tokens):
            for end, (key, found_idx) in self.anchor_tokens.iter(view.spaced):
                hit = core_span(end, key)
                for idx in found_idx:
                    word_hits.setdefault(idx, []).append(hit)
        # Digit runs, found once, anchor the rules whose every match holds a run of some length.
        runs = [m.span() for m in DIGIT_RUN.finditer(text)] if self.digit_gated else []
        for idx, rec in enumerate(self.patterns):
            if rec.min_digit_run:
                need = rec.min_digit_run
                gated = [r for r in runs if r[1] - r[0] >= need]
                if not gated:
                    continue
                word_hits.setdefault(idx, []).extend(gated)
            if rec.anchor_words or rec.anchor_tokens or rec.min_digit_run:
                hits = word_hits.get(idx, [])
                if not hits and rec.anchor is None:
                    continue
                out.extend(rec.find(text, folded, hits))
            else:
                out.extend(rec.find(text, folded))
        for i, start, end in self.terms.find(text, view):
            rec = self.patterns[i]
            span = rec.emit(text, start, end, rec.terms_score)
            if span is not None:
                out.append(span)
        out.extend(self.names.find(view))
        out.extend(self.gazetteer.find(view))
        return out

    def analyze(
        self,
        text: str,
        *,
        entities: Collection[str] | None = None,
        score_threshold: float = 0.5,
    ) -> list[Span]:
        """Non-overlapping PHI spans of ``text``, sorted by position.

        ``entities`` restricts the result to those entity types (after overlap resolution among all types, so
        a phone number is never reported as a shorter ZIP code when only ZIP codes are asked for).
        """
        kept: list[Span] = []
        view = TextView(text)
        candidates = self.candidates(text, view)
        # A gazetteer hit on a name that is also a person name fired only with a place word before it ("in
        # Jordan"); the bare dictionary guess of a person on the very same characters yields to it.
        places = {(s.start, s.end) for s in candidates if s.recognizer in self.gazetteer.rule_ids}
        for span in candidates:
            if span.recognizer == self.names.dictionary_id and (span.start, span.end) in places:
                continue
            if span.score < score_threshold:
                continue
            if span.type in self.suppressible and not self._titled(span, text) and self.safelist.suppresses(text, span):
                continue
            kept.append(span)
        kept.extend(
            span
            for span in self._propagate(view, kept)
            if not (span.type in self.suppressible and self.safelist.suppresses(text, span))
        )
        kept.extend(self._town_after_address(view, kept))
        persons = [s for s in kept if s.type == EntityType.PERSON.value]
        if persons:
            kept.extend(
                span
                for span in self.names.coordinated(view, persons)
                if not (span.type in self.suppressible and self.safelist.suppresses(text, span))
            )
        kept = [self.names.with_initial(view, s) if s.type == EntityType.PERSON.value else s for s in kept]
        resolved = resolve_overlaps(kept, TYPE_PRIORITY)
        if entities is not None:
            wanted = {str(e) for e in entities}
            resolved = [s for s in resolved if s.type in wanted]
        return resolved

    def _town_after_address(self, view: TextView, found: list[Span]) -> Iterator[Span]:
        """The town written after a street address ("19 Clover St. in Lansdowne", "42 Oak Ave, Towson"): one or two
        capitalised words that are no stop or clinical word."""
        text = view.text
        for span in found:
            if span.type != EntityType.ADDRESS.value:
                continue
            m = _TOWN_AFTER_ADDRESS.match(text, span.end)
            if m is None:
                continue
            words = TextView(m.group(1)).words
            if not words or any(self.names._cls(w) & (STOP | CLINICAL) or w in self.names.cue_words for w in words):
                continue
            yield Span(m.start(1), m.end(1), EntityType.LOCATION.value, "rule", span.score, span.recognizer)

    def _titled(self, span: Span, text: str | None = None) -> bool:
        """A person found right after a title ("Dr. Kaufman", "Mr. Murphy") or right before a credential
        ("Bernard Foley CRT"): an eponym there is a person, not the scale, sign or catheter it names. Only a span
        whose last word is a known name qualifies ("MS. OOB" is no person)."""
        names = self.names
        if not (
            span.type == EntityType.PERSON.value
            and span.score >= names.cue_score
            and (span.recognizer in names.title_ids or span.recognizer == names.credential_id)
        ):
            return False
        words = list(TextView(text[span.start : span.end]).words) if text is not None else []
        return bool(words) and bool(names._cls(words[-1]) & (FIRST | LAST))

    def _propagate(self, view: TextView, found: list[Span]) -> list[Span]:
        """Other mentions, in the same text, of a distinctive word of a name, place or institution found with a
        cue ("AT CALVERT-" after "CALVERT HOSPITAL", "suzette" after "dtr suzette").

        Only words that no English dictionary, clinical list or stop list has are carried over (never "harbor"
        or "hospital"), and only from spans scored at least :data:`PROPAGATE_FROM`.
        """
        sources: dict[str, Span] = {}
        covered: set[int] = set()
        starts, ends, words = view.starts, view.ends, view.words
        for span in found:
            i = bisect.bisect_right(ends, span.start)
            distinctive = span.type in _PROPAGATED_TYPES and span.score >= PROPAGATE_FROM
            while i < len(starts) and starts[i] < span.end:
                covered.add(i)
                w = words[i]
                if (
                    distinctive
                    and len(w) >= 3
                    and not self.names._cls(w) & _NOT_DISTINCTIVE
                    and w not in self.gazetteer.heads
                    and w not in self.names.cue_words
                ):
                    sources.setdefault(w, span)
                i += 1
        out: list[Span] = []
        positions = view.positions if sources else {}
        for w, src in sources.items():
            for i in positions.get(w, ()):
                if i not in covered:
                    out.append(Span(starts[i], ends[i], src.type, "rule", PROPAGATE_SCORE, src.recognizer))
        return out

    def safe_harbor_category(self, span: Span, text: str) -> str | None:
        """The Safe Harbor category a span falls in, given its value, or None.

        Ages count only above 89, dates only when they state more than a year, and places only below state
        level (states and countries are allowed by Safe Harbor).
        """
        category = HIPAA_MAP.get(EntityType(span.type)) if span.type in _TYPE_VALUES else None
        if category is None:
            return None
        value = text[span.start : span.end]
        if span.type == EntityType.AGE:
            return category if age_over_limit(value, AGE_SAFE_HARBOR_LIMIT) else None
        if span.type in (EntityType.DATE, EntityType.BIRTH_DATE_TIME, EntityType.DEATH_DATE_TIME):
            return None if is_year_only(value) else category
        if span.type == EntityType.LOCATION and span.recognizer in self.gazetteer.coarse_ids:
            return None
        return category


def _anchor_automaton(patterns: Iterable[PatternRecognizer]) -> Any:
    """An Aho-Corasick automaton of every rule's anchor words, each mapped to (rule index, word length)."""
    import ahocorasick

    table: dict[str, list[tuple[int, int]]] = {}
    for idx, rec in enumerate(patterns):
        for word in dict.fromkeys(rec.anchor_words):
            table.setdefault(word, []).append((idx, len(word)))
    auto = ahocorasick.Automaton()
    for word, found in table.items():
        auto.add_word(word, tuple(found))
    if table:
        auto.make_automaton()
    return auto


def _token_automaton(patterns: Iterable[PatternRecognizer]) -> Any:
    """An automaton over :attr:`TextView.spaced` of every rule's whole-word anchors -> (key, rule indexes)."""
    import ahocorasick

    table: dict[str, list[int]] = {}
    for idx, rec in enumerate(patterns):
        for phrase in dict.fromkeys(rec.anchor_tokens):
            table.setdefault(spaced_key(phrase), []).append(idx)
    auto = ahocorasick.Automaton()
    for key, found in table.items():
        auto.add_word(key, (key, tuple(found)))
    if table:
        auto.make_automaton()
    return auto


@functools.lru_cache(maxsize=4)
def _default_analyzer(root: str) -> Analyzer:
    return Analyzer.from_docs((doc for _, doc in load_phi_docs(Path(root))), Path(root))


def analyze(text: str, *, entities: Collection[str] | None = None, score_threshold: float = 0.5) -> list[Span]:
    """Find PHI in ``text`` with the default rules; see :meth:`Analyzer.analyze`."""
    return Analyzer.default().analyze(text, entities=entities, score_threshold=score_threshold)


def safe_harbor_category(span: Span, text: str) -> str | None:
    """Safe Harbor category of ``span`` under the default rules; see :meth:`Analyzer.safe_harbor_category`."""
    return Analyzer.default().safe_harbor_category(span, text)


__all__ = ["PHI_KINDS", "Analyzer", "analyze", "load_phi_docs", "safe_harbor_category"]
