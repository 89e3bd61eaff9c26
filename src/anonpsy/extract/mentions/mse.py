"""The mental status examination as structured findings.

:func:`parse_mental_status` reads the examination's text with the lexicon of ``rules/lexicon/mse.yaml`` and
returns a :class:`~anonpsy.graph.MentalStatus` of short normalised values:

* a finding goes to the part of the examination its entry allows; when it allows several ("anxious": mood or
  affect, "fair": insight, judgment ...), the part named nearest before it in its sentence decides (several parts
  joined by "and" all take it: "insight and judgment are fair"), then one named right after it ("poor eye
  contact"); a finding whose part cannot be told is not recorded; a rating under a qualifying part keeps the
  part's name ("attention fair", "memory intact");
* a negated finding ("denies auditory hallucinations", a heading answered "denies") takes the entry's negated
  value, or is not recorded;
  findings ConText gives to someone else ("his daughter denied delusions") are not the patient's;
* suicidal and homicidal ideation take the most severe value stated (intent > plan > present > passive), else
  absent when denied;
* orientation is counted ("A&Ox3", "oriented to person, place and time" → oriented x3; "oriented to person and
  year only" → oriented to person and time);
* the patient's quoted mood sets ``mood_quoted``; the quotation itself only selects a category.

Sentences that yield no finding are counted as :class:`~anonpsy.graph.Omission` (reason ``UNPARSED``), never
copied.

Example::

    >>> mse, omitted = parse_mental_status(
    ...     'Mood "I am sad." Affect restricted, tearful. Denies SI/HI. Insight and judgment fair. A&Ox3.')
    >>> mse.mood, mse.mood_quoted, mse.affect, mse.suicidal_ideation.value, mse.insight, mse.orientation
    ('depressed', True, 'restricted, tearful', 'absent', 'fair', 'oriented x3')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from anonpsy import lexicon
from anonpsy.extract.assertion.context import classify
from anonpsy.graph import Evidence, Ideation, MentalStatus, Omission

_SENTENCE = re.compile(r"[^.;!?\n]+(?:[.;!?]+|$)|[^.;!?\n]+\n", re.M)
_QUOTE_AFTER = re.compile(r"""^[^.;]{0,40}?["“'‘]""")
_ORIENTED_X = re.compile(r"(?:\bA\s*&\s*O|\bAAO|\bAO|\boriented)\s*(?:x|×|times)\s*([1-4])\b", re.I)
_ORIENTED_TO = re.compile(r"\boriented\s+to\s+((?:(?:and|,|the|his|her|their|own|only|\s)+|person|self|name|"
                          r"place|location|hospital|time|date|year|month|day|situation|purpose|circumstances?|"
                          r"event)+)", re.I)
_SPHERES = (("person", ("person", "self", "name")), ("place", ("place", "location", "hospital")),
            ("time", ("time", "date", "year", "month", "day")),
            ("situation", ("situation", "purpose", "circumstance", "circumstances", "event")))
#: A finding written as a heading whose answer denies it ("Suicidal/Homicidal Ideation: The patient denies.").
_HEADER_DENIED = re.compile(r"[\w /]{0,30}:\s*(?:\w+\s+){0,3}?(?:denie[sd]|none|negative|no|not|absent)\b", re.I)
_SEVERITY = (Ideation.intent, Ideation.plan, Ideation.present, Ideation.passive)
_MAX_VALUES = 3
_MAX_LEN = 80


@dataclass(frozen=True)
class _Domain:
    field: str
    qualifier: str | None
    start: int
    end: int


@lru_cache(maxsize=1)
def _entries() -> tuple[dict[str, lexicon.MseEntry], dict[str, lexicon.MseDomain]]:
    lx = lexicon.mse_lexicon()
    return {e.id: e for e in lx.rules}, {d.id: d for d in lx.domains}


def _domains(sentence: str) -> list[_Domain]:
    _, domains = _entries()
    out = []
    for m in lexicon.find_terms(sentence, "mse_domain"):
        d = domains[m.id]
        out.append(_Domain(d.field, d.phrases[0] if d.qualify else None, m.start, m.end))
    return out


def _orientation(sentence: str) -> str | None:
    m = _ORIENTED_X.search(sentence)
    if m:
        return f"oriented x{m.group(1)}"
    m = _ORIENTED_TO.search(sentence)
    if m is None:
        return None
    words = set(re.findall(r"[a-z]+", m.group(1).lower()))
    spheres = [name for name, forms in _SPHERES if words & set(forms)]
    if len(spheres) >= 3:
        return f"oriented x{len(spheres)}"
    return "oriented to " + " and ".join(spheres) if spheres else None


def _fields_for(entry: lexicon.MseEntry, start: int, end: int, domains: list[_Domain],
                term_starts: list[int]) -> list[_Domain | str]:
    """The parts a finding at [start, end) goes to: its only part, else domains named before it (a run joined by
    'and' / ','), else one named right after it."""
    if len(entry.fields) == 1 and not entry.evaluative:
        return [entry.fields[0]]
    allowed = set(entry.fields)
    prev_term = max((s for s in term_starts if s < start), default=-1)
    before = [d for d in domains if d.end <= start and d.field in allowed]
    if before:
        nearest = before[-1]
        run = [nearest]
        for d in reversed(before[:-1]):
            if d.end <= prev_term:
                break
            run.insert(0, d)
        # Only a run that reads as a list ("insight and judgment") shares the finding.
        if len(run) > 1 and not all(d.start >= prev_term for d in run):
            run = [nearest]
        return list(run)
    after = [d for d in domains if d.start >= end and d.field in allowed and d.start - end <= 20
             and not any(end <= s < d.start for s in term_starts)]
    if after:
        return [after[0]]
    return [entry.fields[0]] if len(entry.fields) == 1 else []


def _join(values: list[str]) -> str | None:
    uniq = list(dict.fromkeys(values))
    if len(uniq) > 1 and "not assessed" in uniq:
        uniq.remove("not assessed")
    out = ""
    for v in uniq[:_MAX_VALUES]:
        cand = f"{out}, {v}" if out else v
        if len(cand) > _MAX_LEN:
            break
        out = cand
    return out or None


def _ideation(values: list[str]) -> Ideation | None:
    found = {Ideation(v) for v in values}
    for level in _SEVERITY:
        if level in found:
            return level
    return Ideation.absent if Ideation.absent in found else None


def parse_mental_status(
    text: str, *, offset: int | None = None, section: str | None = "mse", rule_id: str = "section.mse",
) -> tuple[MentalStatus, list[Omission]]:
    """Structured findings of a mental status examination, and the sentences that yielded none.

    ``offset`` is where ``text`` starts in the source narrative (None when unknown, e.g. a migrated field); the
    examination's evidence then spans the text, in ``section``, with ``rule_id``.
    """
    return parse_mental_status_parts([(text, offset)], section=section, rule_id=rule_id)


def parse_mental_status_parts(
    parts: list[tuple[str, int | None]], *, section: str | None = "mse", rule_id: str = "section.mse",
) -> tuple[MentalStatus, list[Omission]]:
    """:func:`parse_mental_status` over several pieces of one examination (its sentences, with their offsets)."""
    found: dict[str, list[str]] = {}
    omitted: list[Omission] = []
    quoted = False
    for text, offset in parts:
        quoted = _read(text, offset, found, omitted) or quoted
    values: dict[str, object] = {}
    for field, vals in found.items():
        if field in ("suicidal_ideation", "homicidal_ideation"):
            values[field] = _ideation(vals)
        elif field == "orientation":
            values[field] = vals[0]
        else:
            values[field] = _join(vals)
    if not values and not quoted:
        return MentalStatus(), omitted
    spans = [(o, o + len(t.rstrip())) for t, o in parts if o is not None and t.strip()]
    if spans:
        evidence = Evidence(start=spans[0][0], end=max(spans[-1][1], spans[0][0] + 1), section=section,
                            rule_id=rule_id)
    else:
        evidence = Evidence(section=section, rule_id=rule_id)
    return MentalStatus.model_validate({"mood_quoted": quoted, "evidence": evidence, **values}), omitted


def _read(text: str, offset: int | None, found: dict[str, list[str]], omitted: list[Omission]) -> bool:
    """Read one piece into ``found`` (field → values) and ``omitted``; True when a mood was quoted."""
    entries, _ = _entries()
    quoted = False
    for sm in _SENTENCE.finditer(text):
        sentence = sm.group(0)
        if not sentence.strip():
            continue
        terms = lexicon.find_terms(sentence, "mse")
        domains = _domains(sentence)
        starts = [t.start for t in terms]
        orientation = _orientation(sentence)
        got = False
        for t in terms:
            entry = entries[t.id]
            ctx = classify(sentence, t.start, t.end)
            if ctx.experiencer != "patient" or ctx.hypothetical:
                continue
            negated = ctx.negated or bool(_HEADER_DENIED.match(sentence, t.end))
            value = entry.negated if negated else entry.headword
            if value is None:
                got = True  # read, and negated: nothing to record, nothing left unread
                continue
            for target in _fields_for(entry, t.start, t.end, domains, starts):
                field = target if isinstance(target, str) else target.field
                qualifier = None if isinstance(target, str) or not entry.evaluative else target.qualifier
                if field == "orientation" and orientation is not None:
                    continue
                found.setdefault(field, []).append(f"{qualifier} {value}" if qualifier else value)
                got = True
        if orientation is not None:
            found.setdefault("orientation", []).insert(0, orientation)
            got = True
        for d in domains:
            if d.field == "mood" and _QUOTE_AFTER.match(sentence[d.end:]):
                quoted = True
        if not got and not domains:
            words = len(re.findall(r"\w+", sentence))
            lead = len(sentence) - len(sentence.lstrip())
            span = {"start": offset + sm.start() + lead, "end": offset + sm.start() + len(sentence.rstrip())} \
                if offset is not None else {}
            omitted.append(Omission(field="mental_status", words=words, reason="UNPARSED", **span))
    return quoted
