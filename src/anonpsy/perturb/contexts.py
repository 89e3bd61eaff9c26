"""Context perturbation in P (rules backend): identifying details inside STEB frames and visit text.

Situations that name a life event are replaced by an analogous, non-identifying alternative from the stressor
taxonomy in ``rules/contexts/stressors.yaml``; a similarity filter (rapidfuzz against the original field) rejects a
replacement that stays too close and tries the next; what cannot be made distant is generalised ("a stressful event
at work") and listed in the audit. Names, places, institutions, dates, ages and occupations inside any narrative
field are replaced by neutral descriptions. Contexts are rewritten in retrograde temporal order (most recent first)
so that earlier rewrites never depend on later ones. The visit scaffold and clinical content are never touched.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from rapidfuzz import fuzz

from anonpsy import lexicon
from anonpsy.audit import Audit, Change
from anonpsy.extract.assertion.context import ContextEngine, default_engine
from anonpsy.graph import STEB, CaseGraph, Symptom
from anonpsy.lexicon import TermIndex
from anonpsy.temporal import duration_interval, horizon
from anonpsy.textfields import map_graph_text

#: A replacement whose token-set similarity to the original is at or above this is rejected as too close.
SIMILARITY_MAX = 60.0
RULE_STRESSOR = "contexts.stressors"
RULE_SCRUB = "contexts.identifier_scrub"

_NEUTRAL: dict[str, str] = {
    "PERSON": "a person close to the patient",
    "LOCATION": "another town",
    "ADDRESS": "a local address",
    "ZIP_CODE": "",
    "ORGANIZATION": "a local organization",
    "PHARMACY": "a local pharmacy",
    "DATE": "at that time",
    "BIRTH_DATE_TIME": "",
    "DEATH_DATE_TIME": "at that time",
    "OCCUPATION": "work",
    "TELEPHONE_NUMBER": "",
    "FAX_NUMBER": "",
    "EMAIL": "",
    "URL": "",
    "MEDICAL_RECORD_NUMBER": "",
    "ACCOUNT_NUMBER": "",
    "HEALTH_PLAN_ID": "",
    "SSN_OR_TAXPAYER": "",
}
_YEAR = re.compile(r"(?<![\w/.-])(?:19[0-9]{2}|20[0-9]{2})(?![\w/.-])")
_ADJ_AGE = re.compile(r"^\d{1,3}[- ](?:year|yr)s?[- ]old$", re.I)


#: A second age that makes a phrase a range ("age 2-3 months", "ages 12 to 14", "between 1 and 2 years of age"):
#: the range is one phrase, so that no scrub leaves half of it behind ("an earlier age-3 months").
_RANGE = r"(?:\s?(?:-|–|to|and)\s?\d{1,3})?"
_AGE_PHRASE = re.compile(
    rf"\b(?:between\s)?\d{{1,3}}{_RANGE}[- ](?:year|yr|month)s?[- ]old\b"
    rf"|\b(?:between\s)?(?:age|aged|ages)\s(?:between\s)?\d{{1,3}}{_RANGE}"
    r"(?:\s(?:months?|years?|yrs?|weeks?)(?:\sold)?)?\b"
    r"|\b\d{1,3}\s?(?:yo|y/o)\b"
    rf"|\b(?:between\s)?\d{{1,3}}{_RANGE}\s(?:years?|yrs?|months?)\sof\sage\b"
    rf"|\b(?:between\s)?(?:the\s)?ages?\sof\s\d{{1,3}}{_RANGE}(?:\s(?:years?|yrs?|months?)(?:\sold)?)?\b", re.I)


class SourceIdentifiers:
    """Identifiers found once in the source narrative, to be located in every field derived from it.

    Running the PHI analyzer on each extracted field would repeat the same work dozens of times per case (evidence
    sentences recur across nodes); the fields are near-verbatim copies of source text, so the surfaces found in the
    source are looked up in each field instead. Ages are matched per field by phrase, since a bare number found in
    the source cannot be replaced everywhere.
    """

    def __init__(self, source: str) -> None:
        from anonpsy.phi.analyzer import analyze

        self.spans = analyze(source)
        surfaces: dict[str, str] = {}
        for sp in self.spans:
            if sp.type in _NEUTRAL:
                surface = source[sp.start:sp.end].strip()
                if len(surface) >= 2:
                    surfaces.setdefault(surface, sp.type)
        self.types = {k.lower(): v for k, v in surfaces.items()}
        alts = sorted(surfaces, key=len, reverse=True)
        self.pattern = re.compile(
            r"(?<!\w)(" + "|".join(re.escape(a) for a in alts) + r")(?!\w)", re.I) if alts else None

    def find(self, text: str) -> list[tuple[int, int, str]]:
        out: list[tuple[int, int, str]] = []
        if self.pattern is not None:
            out += [(m.start(), m.end(), self.types[m.group(0).lower()]) for m in self.pattern.finditer(text)]
        out += [(m.start(), m.end(), "AGE") for m in _AGE_PHRASE.finditer(text)
                if not any(m.start() < b and a < m.end() for a, b, _ in out)]
        return out


def scrub_identifiers(
    text: str, *, keep_ages: set[int] | None = None, source: SourceIdentifiers | None = None
) -> tuple[str, list[str]]:
    """Replace detected identifiers by neutral descriptions; returns (text, list of replaced types).

    With ``source``, identifiers found once in the source narrative are located in ``text``; without it the PHI
    analyzer runs on ``text`` itself. Proper-noun anchors and years are always detected in ``text``.
    """
    from anonpsy.perturb.anchors import find_anchors
    from anonpsy.phi.analyzer import analyze

    if source is not None:
        spans = source.find(text)
    else:
        # The analyzer's AGE span is the bare number; an age is replaced as its whole phrase, as in ``find``.
        spans = [(s.start, s.end, s.type) for s in analyze(text) if s.type in _NEUTRAL]
        spans += [(m.start(), m.end(), "AGE") for m in _AGE_PHRASE.finditer(text)
                  if not any(m.start() < b and a < m.end() for a, b, _ in spans)]
    taken = [(a, b) for a, b, _ in spans]
    for anc in find_anchors(text):
        if not any(anc.start < b and a < anc.end for a, b in taken):
            spans.append((anc.start, anc.end, "ANCHOR"))
    for m in _YEAR.finditer(text):
        if not any(m.start() < b and a < m.end() for a, b, _ in spans):
            spans.append((m.start(), m.end(), "YEAR"))
    if not spans:
        return text, []
    out: list[str] = []
    types: list[str] = []
    pos = 0
    for start, end, typ in sorted(spans):
        if start < pos:
            continue
        surface = text[start:end]
        if typ == "AGE":
            num = re.search(r"\d{1,3}", surface)
            if num and keep_ages and int(num.group(0)) in keep_ages:
                continue
            # a range opened by "between" is replaced with its preposition ("between ages 12 and 14")
            repl = "" if _ADJ_AGE.match(surface.strip()) else (
                "at an earlier age" if surface.lower().startswith("between") else "an earlier age")
        elif typ == "ANCHOR":
            repl = "a specific place"
        elif typ == "YEAR":
            repl = "" if text[start - 1:start] == "(" and text[end:end + 1] == ")" else "a prior year"
        else:
            repl = _NEUTRAL[typ]
        before = text[pos:start]
        if typ in ("DATE", "YEAR", "DEATH_DATE_TIME") and repl:
            # "in 2022" / "on 03/14/2025" → "at that time", not "in at that time".
            before = re.sub(r"\b(?:in|on|since|by|until|from|during|of)\s+$", "", before, flags=re.I)
            repl = "at that time"
        if repl and (not "".join(out) + before or re.search(r"(?:^|[.:;!?\n]\s*)$", "".join(out) + before)):
            repl = repl[:1].upper() + repl[1:]
        out.append(before)
        out.append(repl)
        types.append(typ)
        pos = end
    out.append(text[pos:])
    new = re.sub(r"[ \t]{2,}", " ", "".join(out))
    new = re.sub(r"\s+([,.;:])", r"\1", new)
    new = re.sub(r"\(\s*\)|,\s*,", "", new).strip()
    return new, types


def stressor_category(
    text: str, engine: ContextEngine | None = None, index: TermIndex | None = None
) -> str | None:
    """The life-event category a situation text describes, or None.

    The first stressor trigger that is not negated, hypothetical or uncertain wins (``denies any recent job
    loss`` does not count).

    >>> stressor_category("after he was laid off from the plant")
    'job_loss'
    """
    idx = index if index is not None else lexicon.term_index("stressor")
    eng = engine if engine is not None else default_engine()
    for m in idx.find(text):
        ctx = eng.classify(text, m.start, m.end)
        if ctx.negated or ctx.hypothetical or ctx.uncertain:
            continue
        return m.id
    return None


def _retro_order(graph: CaseGraph, retro: bool) -> list[Symptom]:
    dmap = graph.duration_map()
    h = horizon(graph)

    def start(s: Symptom) -> int:
        ivs = [duration_interval(dmap[i], h) for i in s.duration_ids if i in dmap]
        return min((a for a, _ in ivs), default=10**9)

    ordered = sorted(graph.symptoms, key=lambda s: (start(s), s.id))
    return list(reversed(ordered)) if retro else ordered


def _replace_situation(
    text: str, rng: random.Random, age: int | None, used: set[str]
) -> tuple[str, str | None, bool]:
    """(new text, rule id, generalised?) for a situation clause."""
    category = stressor_category(text)
    if category is None:
        return text, None, False
    options = [a for a in lexicon.stressor_alternatives(category, age) if a not in used]
    rng.shuffle(options)
    for cand in options:
        if fuzz.token_set_ratio(text.lower(), cand.lower()) < SIMILARITY_MAX:
            used.add(cand)
            return cand, f"{RULE_STRESSOR}.{category}", False
    return lexicon.stressor_generalized(category), f"{RULE_STRESSOR}.{category}.generalized", True


def perturb_contexts(
    graph: CaseGraph, *, seed: int, audit: Audit, source_text: str | None = None, retro: bool = True,
    identifiers: SourceIdentifiers | None = None,
) -> CaseGraph:
    """Rewrite identifying context in STEB frames and narrative fields; every change goes to ``audit``."""
    rng = random.Random(f"anonpsy:{seed}:{graph.case_id}:contexts")
    age = graph.demographics.age
    keep_ages = {age} if age is not None else set()
    ids = identifiers if identifiers is not None else SourceIdentifiers(source_text) if source_text else None
    memo: dict[str, tuple[str, list[str]]] = {}

    def scrub(text: str) -> tuple[str, list[str]]:
        if text not in memo:
            memo[text] = scrub_identifiers(text, keep_ages=keep_ages, source=ids)
        return memo[text]

    used: set[str] = set()
    new_contexts: dict[str, list[STEB]] = {}
    for s in _retro_order(graph, retro):
        frames: list[STEB] = []
        for k, frame in enumerate(s.contexts):
            update: dict[str, str | None] = {}
            for fld in frame.present_fields():
                old = getattr(frame, fld)
                path = f"symptoms[{s.id}].contexts[{k}].{fld}"
                new = old
                if fld == "situation":
                    new, rule_id, generalized = _replace_situation(old, rng, age, used)
                    if rule_id is not None and new != old:
                        change = Change(path=path, rule_id=rule_id, old=old, new=new)
                        (audit.generalized if generalized else audit.changes).append(change)
                        update[fld] = new
                        continue
                scrubbed, types = scrub(new)
                if scrubbed != old:
                    audit.changes.append(Change(path=path, rule_id=RULE_SCRUB, old=old, new=scrubbed or None,
                                                detail="replaced: " + ", ".join(sorted(set(types)))))
                    update[fld] = scrubbed or None
            new_frame = frame.model_copy(update=update) if update else frame
            # A field may never appear where it did not exist; a scrubbed-empty field keeps a neutral value.
            for fld in frame.present_fields():
                if getattr(new_frame, fld) is None:
                    new_frame = new_frame.model_copy(update={fld: "an unspecified circumstance"})
            frames.append(new_frame)
        new_contexts[s.id] = frames
    symptoms = [s.model_copy(update={"contexts": new_contexts.get(s.id, s.contexts)}) for s in graph.symptoms]
    g = graph.model_copy(update={"symptoms": symptoms})
    return _scrub_other_text(g, audit, scrub)


def _scrub_other_text(
    graph: CaseGraph, audit: Audit, scrub: Callable[[str], tuple[str, list[str]]]
) -> CaseGraph:
    def fn(path: str, text: str) -> str:
        if ".contexts[" in path:
            return text
        new, types = scrub(text)
        if new != text:
            audit.changes.append(Change(path=path, rule_id=RULE_SCRUB, old=text, new=new,
                                        detail="replaced: " + ", ".join(sorted(set(types)))))
        return new if new else "details withheld"

    mapper: Callable[[str, str], str] = fn
    return map_graph_text(graph, mapper)
