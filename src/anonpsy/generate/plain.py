"""Plain sentences: one clinical fact per sentence, in the one canonical form per status that a reader, the
project's rules extractor and an independent cue-based judge all read the same way.

They are the repair of generation: a block whose facts do not read back as the graph says is written again in
these forms (see :mod:`anonpsy.generate.faithful`). Each form carries its status in a standard trigger phrase
(Chapman et al.'s NegEx/ConText vocabulary): "denied", "possible", "rule out", "was ruled out", "in the past",
"previously", "the plan is to start", "as needed", "declined", "if … occurred", "family history is significant
for".

Example::

    >>> from anonpsy.graph import Diagnosis, Certainty, Sex
    >>> from anonpsy.generate.words import Voice
    >>> plain_diagnosis(Diagnosis(id="dx_1", label="Antisocial Personality Disorder",
    ...                           certainty=Certainty.provisional), Voice(Sex.male, 30))
    'A possible diagnosis of antisocial personality disorder was considered.'
"""

from __future__ import annotations

import re

from anonpsy.generate.words import Voice, cap, clinical_case, join, scoped_lists, strip_end, with_article
from anonpsy.graph import (
    Assertion,
    CaseGraph,
    Certainty,
    Diagnosis,
    FamilyCertainty,
    FamilyHistory,
    PastHistory,
    Symptom,
    Temporality,
    Treatment,
    TreatmentStatus,
    TreatmentType,
)

#: A frequency that already says "as needed" or "once".
PRN_FREQUENCY = re.compile(r"\b(?:prn|p\.r\.n\.?|as needed|as required|when needed|if needed|once|one[- ]time|"
                           r"single dose|stat)\b", re.I)
_ROUTE_WORDS = {"long_acting_injectable": "long-acting injectable"}
#: A frequency that says the drug was given a single time (a dose in the emergency department): told as given at
#: this visit (treatment of this encounter, not a drug of the past), never as a drug taken regularly.
ONE_TIME_FREQUENCY = re.compile(r"^\s*(?:once|one[- ]time(?: dose)?|(?:a )?single dose|one dose|stat|x\s?1)\s*$", re.I)


def one_time(t: Treatment) -> bool:
    """Is the treatment a single dose given (status prn, frequency "once")?"""
    return t.status == TreatmentStatus.prn and bool(t.frequency and ONE_TIME_FREQUENCY.match(t.frequency))


#: The evidence rule of a drug started by an order given at this visit ("we will start X").
ORDERED_NOW_RULE = "context.cur.ordered_now"


def ordered_now(t: Treatment) -> bool:
    """Is the treatment a drug started at this visit by an order of the note ("we will start X")?"""
    ev = t.status_evidence
    return t.status == TreatmentStatus.current and ev is not None and ev.rule_id == ORDERED_NOW_RULE


#: "p.r.n." and "prn" are written "as needed": the abbreviation's last period ends a sentence ambiguously.
_PRN_ABBREVIATION = re.compile(r"\b(?:prn|p\.r\.n)\b\.?", re.I)


def dx_name(label: str) -> str:
    """A diagnosis as named in running text (its DSM-5-TR name in running-text case)."""
    return clinical_case(label)


def dx_full_name(d: Diagnosis) -> str:
    """A diagnosis with the specifiers its label does not already name: "bipolar I disorder (current episode
    manic)"."""
    name = dx_name(d.label)
    extra = [sp for sp in d.specifiers if sp.lower() not in name.lower()]
    return f"{name} ({', '.join(extra)})" if extra else name


def treatment_phrase(t: Treatment, *, frequency: bool = True) -> str:
    """Name, dose, route and frequency: "lorazepam 1 mg oral as needed"."""
    bits = [t.name]
    if t.dose:
        bits.append(t.dose)
    if t.route and t.route.value not in ("unknown", "not_applicable"):
        route = _ROUTE_WORDS.get(t.route.value, t.route.value.replace("_", " "))
        if not re.search(rf"\b{re.escape(route)}\b", t.name, re.I):  # "topical menthol", not "... topical"
            bits.append(route)
    if frequency and t.frequency:
        bits.append(_PRN_ABBREVIATION.sub("as needed", strip_end(t.frequency)))
    if t.status == TreatmentStatus.prn and not (t.frequency and PRN_FREQUENCY.search(t.frequency)):
        bits.append("as needed")
    return " ".join(b.strip() for b in bits if b.strip())


_ADJECTIVE = re.compile(r"^(?:not |in|un)?\w+(?:ive|ful|ed|able|ible|ant|ent|ous|less)$")


def because(reason: str) -> str:
    """Why a treatment was stopped: "because of side effects", "because it was ineffective"."""
    reason = strip_end(reason)
    return f"because it was {reason}" if _ADJECTIVE.match(reason) else f"because of {reason}"


#: Rules that set a diagnosis aside by the patient's history, not by an evaluation ("No history of bipolar
#: disorder"): told as the note told it, never as a diagnosis someone weighed and excluded.
_NO_HISTORY_RULES = frozenset({"context.neg.no_history_of"})


def no_history(d: Diagnosis) -> bool:
    """Is ``d`` ruled out only because the note says the patient has no history of it?"""
    ev = d.certainty_evidence
    return d.certainty == Certainty.ruled_out and ev is not None and ev.rule_id in _NO_HISTORY_RULES


def plain_diagnosis(d: Diagnosis, v: Voice) -> str:
    name = dx_full_name(d)
    if no_history(d):
        return f"There was no history of {name}."
    if d.certainty == Certainty.ruled_out:
        return f"{cap(name)} was ruled out."
    if d.temporality == Temporality.past:
        if d.certainty == Certainty.confirmed:
            return f"{cap(v.subj)} had {name} in the past."
        return f"{cap(v.subj)} may have had {name} in the past."
    if d.certainty == Certainty.rule_out:
        return f"Further evaluation is needed to rule out {name}."
    if d.certainty == Certainty.provisional:
        return f"A possible diagnosis of {name} was considered."
    return f"{cap(v.subj)} {v.was()} diagnosed with {name}."


#: Sections where a condition is looked for at this visit: a negative there is a finding of the examination or
#: of a test, not an absent history.
_FOUND_SECTIONS = frozenset({"exam", "mse", "labs"})
#: A denial that speaks of the past ("No past psychiatric history", "never had a seizure").
#: A denial by what was looked for and not found ("I do not see evidence of ...", "no fractures are noted").
_LOOKED_FOR = re.compile(r"\b(?:evidence|signs? of|noted|seen|see|found|revealed|reveals|showed|shows|demonstrated|"
                         r"identified|visualized|appreciated)\b", re.I)
_NAMES_A_HISTORY = re.compile(r"\b(?:history|hx|h/o|never|ever|prior|previous|previously|past)\b", re.I)


def denial_kind(p: PastHistory) -> str:
    """How a denied condition was denied: ``"history"`` (the patient never had it: "no history of", a past-history
    section), ``"found"`` (looked for at this visit and not found: the examination, a test, "no evidence of") or
    ``"denied"`` (the patient denies it now: the review of systems, the present illness)."""
    from anonpsy.extract.sections import is_history_section

    ev = p.status_evidence
    if ev is None:
        return "history"
    rule, section = ev.rule_id or "", ev.section or ""
    if (rule.endswith("neg.no_history_of") or (section and is_history_section(section))
            or _NAMES_A_HISTORY.search(p.evidence_text or "")):
        return "history"
    if section in _FOUND_SECTIONS or rule.endswith("neg.no_evidence") or _LOOKED_FOR.search(p.evidence_text or ""):
        return "found"
    if section == "ros" or rule.endswith(("neg.denies", "neg.denied")):
        return "denied"
    return "history"


def denied_history(items: list[PastHistory], names: list[str], v: Voice) -> str:
    """Denied conditions (all of one :func:`denial_kind`), told as the note denied them."""
    kind = denial_kind(items[0]) if items else "history"
    if kind == "found":
        return " ".join(f"There was no evidence of {' or '.join(c)}." for c in scoped_lists(names, 5))
    if kind == "denied":
        return " ".join(f"{cap(v.subj)} denied {join(c)}." for c in scoped_lists(names, 5))
    return " ".join(f"{cap(v.subj)} had no history of {' or '.join(c)}." for c in scoped_lists(names, 5))


def plain_history(p: PastHistory, v: Voice) -> str:
    """A past-history item with its status: a diagnosis that remitted or resolved is "in the past" ("now in
    remission" / "since resolved"), any other diagnosis is "a history of" (the note did not say it is over);
    another condition that is chronic or active is had now ("She has asthma.", no course word added), one that
    resolved is past, one of unknown course is "a history of", a denied one is "no history of"."""
    from anonpsy.generate.facts import dx_key

    cond = strip_end(p.condition)
    status = p.status.value
    if status == "denied":
        name = dx_name(cond) if dx_key(cond).startswith("dsm:") else cond
        return denied_history([p], [name], v)
    tail = {"remitted": ", now in remission", "resolved": ", since resolved"}.get(status, "")
    if dx_key(cond).startswith("dsm:"):
        if tail:
            return f"{cap(v.subj)} had {dx_name(cond)} in the past{tail}."
        # "a history of dementia" is not over: a history told as "in the past" would read as resolved
        return f"{cap(v.subj)} {v.has()} a history of {dx_name(cond)}."
    if status in ("chronic", "active"):
        # had now, without a course word the note may not have used ("chronic radiculopathy")
        return f"{cap(v.subj)} {v.has()} {cond}."
    if tail:
        return f"{cap(v.subj)} had {cond} in the past{tail}."
    return f"{cap(v.subj)} {v.has()} a history of {cond}."


def plain_treatment(t: Treatment, v: Voice) -> str:
    phrase = treatment_phrase(t)
    med = t.type == TreatmentType.medication
    if t.status == TreatmentStatus.past:
        verb = "took" if med else "received"
        reason = f", which was stopped {because(t.discontinued_reason)}" if t.discontinued_reason else ""
        return f"{cap(v.subj)} previously {verb} {phrase}{reason}."
    if t.status == TreatmentStatus.planned:
        return f"The plan is to start {phrase}."
    if t.status == TreatmentStatus.refused:
        return f"{cap(v.subj)} declined {phrase}."
    if one_time(t):
        return f"{cap(v.subj)} {v.was()} given {phrase} at this visit."
    if t.status == TreatmentStatus.prn:
        return f"{cap(v.subj)} {v.verb('takes') if med else v.verb('receives')} {phrase}."
    if ordered_now(t):
        return f"{cap(v.subj)} {v.was()} started on {phrase} at this visit."
    return f"{cap(v.subj)} {v.is_()} {'taking' if med else 'receiving'} {phrase}."


def plain_symptom(s: Symptom, v: Voice) -> str:
    from anonpsy.generate.facts import symptom_status

    h = s.headword
    if symptom_status(s) == Assertion.historical.value:
        return f"{cap(v.subj)} had {with_article(h)} in the past."
    if s.assertion == Assertion.absent:
        return f"{cap(v.subj)} denied {h}."
    if s.assertion == Assertion.possible:
        return f"Possible {h} {be(h)} noted."
    if s.assertion == Assertion.hypothetical:
        return f"{cap(v.subj)} {v.was()} advised to seek help if {h} occurred."
    return f"{cap(v.subj)} reported {with_article(h)}."


def be(headword: str) -> str:
    """"was" or "were" after a symptom name ("hallucinations were", "insomnia was")."""
    last = headword.split()[-1] if headword.split() else headword
    return "were" if last.endswith("s") and not last.endswith(("ss", "us", "is")) else "was"


def plain_symptoms(assertion: Assertion, headwords: list[str], v: Voice) -> list[str]:
    """Symptoms of one assertion in plain sentences: a list under one cue, cut so every item stays within the
    cue's scope ("She denied A, B and C."); possible items each carry their own "possible"."""
    if not headwords:
        return []
    if assertion == Assertion.possible:
        items = [f"possible {h}" for h in headwords]
        return [f"{cap(join(c))} {'were' if len(c) > 1 else be(c[0])} noted." for c in scoped_lists(items, 12)]
    if assertion in (Assertion.present, Assertion.historical):
        headwords = [with_article(h) for h in headwords]  # "a suicide attempt", "a positive drug screen"
    chunks = scoped_lists(headwords, 12 if assertion == Assertion.present else 5)
    if assertion == Assertion.absent:
        return [f"{cap(v.subj)}{' also' if i else ''} denied {join(c)}." for i, c in enumerate(chunks)]
    if assertion == Assertion.hypothetical:
        return [f"{cap(v.subj)} {v.was()} advised to seek help if {' or '.join(c)} occurred." for c in chunks]
    if assertion == Assertion.historical:
        return [f"{cap(v.subj)} had {join(c)} in the past." for c in chunks]
    return [f"{cap(v.subj)} reported {join(c)}." for c in chunks]


def family_item(f: FamilyHistory, v: Voice) -> str:
    possible = "possible " if f.certainty == FamilyCertainty.possible else ""
    return f"{possible}{dx_name(strip_end(f.condition))} in {v.pos} {strip_end(f.member)}"


def plain_family(f: FamilyHistory, v: Voice) -> str:
    return f"Family history is significant for {family_item(f, v)}."


_DOTS_AT_END = re.compile(r"\.\.+$")


def plain_node(g: CaseGraph, node_id: str, v: Voice) -> str:
    """The plain sentence of one node of ``g`` (``fh_<i>`` for the i-th relative's condition)."""
    return _DOTS_AT_END.sub(".", _plain_node(g, node_id, v))


def _plain_node(g: CaseGraph, node_id: str, v: Voice) -> str:
    if node_id.startswith("fh_") and node_id[3:].isdigit() and int(node_id[3:]) < len(g.family_history):
        return plain_family(g.family_history[int(node_id[3:])], v)
    node = g.node(node_id)
    if isinstance(node, Diagnosis):
        return plain_diagnosis(node, v)
    if isinstance(node, Treatment):
        return plain_treatment(node, v)
    if isinstance(node, Symptom):
        return plain_symptom(node, v)
    if isinstance(node, PastHistory):
        return plain_history(node, v)
    raise KeyError(node_id)
