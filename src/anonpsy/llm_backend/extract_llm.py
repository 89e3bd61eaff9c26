"""The LLM backend of extraction E: narrative text → case graph, in schema-constrained stages.

Stages (one template each): case attributes (demographics, family history, tests) → diagnoses (or the given
metadata) → symptoms with STEB frames → treatments → visit event → past history → temporal episodes → causal
links. Every quoted text is verified against the source (:mod:`anonpsy.llm_backend.evidence`); an item with
invented evidence is re-asked once and then dropped with a note. A stage whose model call still fails after the
client's retries and re-ask takes the rules backend's findings for that stage instead (``rules_*`` functions), and
the fallback is recorded (:meth:`StepContext.fall_back`); a graph that fails structural validation is replaced by
the rules backend's graph the same way (step ``extract_graph``). Labels map to ``rules/dsm`` with
:func:`anonpsy.rules.dsm.match_label`, headwords to the symptom lexicon, medications to the medication lexicon.
Deterministic relations (MANIFESTS_AS, TREATMENT_OF, etiologic-morphology INDUCES) reuse the rules backend's
relation logic; the core temporal engine normalises the result, which must pass structural validation.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from anonpsy import lexicon
from anonpsy.errors import E104_UNKNOWN_DIAGNOSIS, AnonpsyError
from anonpsy.extract.assembly.accumulator import Accumulator
from anonpsy.extract.assembly.build import index_is_admission, withhold_identified
from anonpsy.extract.assembly.nodes import add_treatments, finalize_treatments
from anonpsy.extract.assembly.relations import derive_relations
from anonpsy.extract.assembly.visit import SAFETY_FROM_HEADWORD
from anonpsy.extract.assertion.context import classify
from anonpsy.extract.mentions.demographics import extract_age
from anonpsy.extract.mentions.diagnoses import find_diagnoses
from anonpsy.extract.mentions.mse import parse_mental_status
from anonpsy.extract.mentions.results import ResultField, number_values, parse_results
from anonpsy.extract.mentions.time import time_mentions, visit_date
from anonpsy.extract.mentions.treatments import reason_table
from anonpsy.extract.sections import Sentence, medication_list, sentences
from anonpsy.graph import (
    STEB,
    UNIT_DAYS,
    ArrivalMode,
    Assertion,
    CaseGraph,
    Certainty,
    Demographics,
    Diagnosis,
    Edge,
    Evidence,
    FamilyHistory,
    HistoryStatus,
    LegalStatus,
    MentalStatus,
    Omission,
    PastHistory,
    RelationType,
    Route,
    SafetyFlag,
    Setting,
    Sex,
    Symptom,
    Temporality,
    TestResults,
    TestValue,
    Treatment,
    TreatmentStatus,
    TreatmentType,
    Unit,
    VisitEvent,
)
from anonpsy.llm.prompts import load_template
from anonpsy.llm_backend.evidence import SourceText, clean_quote, invented
from anonpsy.llm_backend.steps import LLMBackendError, StepContext, run_step
from anonpsy.perturb.contexts import SourceIdentifiers
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.temporal import TimeSpec, normalize, parse_expression
from anonpsy.validate import structural_violations

if TYPE_CHECKING:
    from pydantic import BaseModel

    N = TypeVar("N", bound=BaseModel)

OPERATOR = "extraction"
STEB_FIELDS = ("situation", "thought", "emotion", "behavior")
MAX_CONTEXTS = 3


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")[:40] or "x"


# ---------------------------------------------------------------------------------------------------------------
# Evidence-checked list stages


Checker = Callable[[dict[str, Any]], list[str]]


def _item_problems(item: dict[str, Any], source: SourceText, quoted: tuple[str, ...]) -> list[str]:
    fields: dict[str, str | None] = {k: item.get(k) for k in quoted}
    for k, frame in enumerate(item.get("contexts") or []):
        for f in STEB_FIELDS:
            fields[f"contexts/{k}/{f}"] = frame.get(f)
    return invented(fields, source)


def ask_with_evidence(
    ctx: StepContext,
    source: SourceText,
    template_id: str,
    payload: dict[str, Any],
    key: str,
    quoted: tuple[str, ...] = ("evidence_text",),
) -> list[dict[str, Any]]:
    """Items of list ``key`` whose quoted fields are found in the source.

    When some item quotes text that is not in the source, the step is re-asked once with the problems listed;
    items of the second reply whose ``evidence_text`` is still not found are dropped, other unfound quoted fields
    (STEB fields, dose, …) are cleared; each drop is noted with its index.
    """
    reply = ctx.ask(template_id, payload, operator=OPERATOR)
    items: list[dict[str, Any]] = list(reply.get(key) or [])
    problems = {i: _item_problems(it, source, quoted) for i, it in enumerate(items)}
    if any(problems.values()):
        lines = [f"- {key}[{i}]: {', '.join(p)} not found in the text" for i, p in problems.items() if p]
        feedback = (
            "Some quoted fields of your previous answer are not in the text:\n"
            + "\n".join(lines)
            + "\nAnswer again. Copy quoted fields character for character from the text, or leave out "
            "the item (or set the field to null) when the text does not say it."
        )
        reply = ctx.ask(template_id, payload, operator=OPERATOR, feedback=feedback)
        items = list(reply.get(key) or [])
    kept: list[dict[str, Any]] = []
    for i, it in enumerate(items):
        bad = _item_problems(it, source, quoted)
        if "evidence_text" in bad:
            ctx.note(
                "E_EVIDENCE_DROPPED",
                f"{template_id} {key}[{i}]: evidence not found in the source after one re-ask",
            )
            continue
        if bad:
            ctx.note(
                "E_FIELD_CLEARED",
                f"{template_id} {key}[{i}]: {', '.join(sorted(bad))} not found in the source",
            )
            it = dict(it)
            for name in bad:
                if name.startswith("contexts/"):
                    _, k, f = name.split("/")
                    frames = [dict(fr) for fr in it["contexts"]]
                    frames[int(k)][f] = None
                    it["contexts"] = frames
                else:
                    it[name] = None
        kept.append(it)
    return kept


# ---------------------------------------------------------------------------------------------------------------
# Accumulated graph parts


@dataclass
class _Parts:
    acc: Accumulator
    demographics: Demographics
    tests: TestResults
    visit: VisitEvent
    sentence_starts: list[int]
    mental_status: MentalStatus = field(default_factory=MentalStatus)
    omitted: list[Omission] = field(default_factory=list)
    sentences: list[Sentence] = field(default_factory=list)

    def mention(self, node_id: str, pos: int | None) -> None:
        if pos is None:
            self.acc.mentions.setdefault(node_id, 0)
            return
        idx = max(0, bisect.bisect_right(self.sentence_starts, pos) - 1)
        self.acc.mentions.setdefault(node_id, idx)


# ---------------------------------------------------------------------------------------------------------------
# Stage 1: case attributes


def _age_in_text(age: int, text: str) -> bool:
    return re.search(rf"(?<![\d.]){age}(?!\d)", text) is not None


def _evidence(source: SourceText, quote: str | None, rule_id: str) -> Evidence:
    """Evidence for a value read from a model's reply: where its quote lies in the source, when found."""
    start = source.locate(quote)
    if start is None or not quote or start >= len(source.text):
        return Evidence(rule_id=rule_id)
    return Evidence(start=start, end=min(len(source.text), start + max(1, len(clean_quote(quote)))), rule_id=rule_id)


def case_attributes(
    ctx: StepContext, source: SourceText, sents: list[Sentence]
) -> tuple[Demographics, TestResults, MentalStatus, list[Omission], list[FamilyHistory]]:
    """Stage 1: demographics, test results, the mental status examination and family history.

    The test results and the examination the model quotes are read into structured values with the rules backend's
    readers (offsets located in the source); nothing of them is copied.
    """
    reply = ctx.ask("extract_case", {"text": source.text}, operator=OPERATOR)
    age = reply.get("age")
    if age is not None and not _age_in_text(int(age), source.text):
        fallback = extract_age(sents)
        ctx.note("E_AGE_NOT_IN_SOURCE", "age not written in the source; rules-backend age used")
        age = fallback
    demo: dict[str, Any] = {"age": age, "sex": Sex(reply.get("sex") or "unknown")}
    for name in ("ethnicity", "occupation", "family_structure"):
        value = reply.get(name)
        if value and source.contains(value):
            demo[name] = clean_quote(value)
        elif value:
            ctx.note("E_FIELD_CLEARED", f"extract_case {name}: not found in the source")
    values: list[TestValue] = []
    omitted: list[Omission] = []
    mental_status = MentalStatus()
    tests_reply = reply.get("tests") or {}
    for name in ("labs", "imaging", "other", "mental_status"):
        value = tests_reply.get(name)
        if not value:
            continue
        if not source.contains(value):
            ctx.note("E_FIELD_CLEARED", f"extract_case tests.{name}: not found in the source")
            continue
        quote = clean_quote(value)
        at = source.locate(value)
        offset = at if at is not None and source.text[at:at + len(quote)] == quote else None
        if name == "mental_status":
            mental_status, skipped = parse_mental_status(quote, offset=offset, section=None, rule_id="llm.extract_case")
        else:
            field: ResultField = "labs" if name == "labs" else "imaging" if name == "imaging" else "other"
            found, skipped = parse_results(quote, field, offset=offset, rule_id="llm.extract_case")
            values += found
        omitted += skipped
    family: list[FamilyHistory] = []
    for i, fh in enumerate(reply.get("family_history") or []):
        ev = fh.get("evidence_text")
        if not source.contains(ev):
            ctx.note(
                "E_EVIDENCE_DROPPED", f"extract_case family_history[{i}]: evidence not found in the source"
            )
            continue
        rule = dsm_rules.match_label(fh["condition"])
        family.append(
            FamilyHistory(
                member=fh["member"].strip().lower(),
                condition=rule.name if rule else fh["condition"].strip(),
                certainty_evidence=_evidence(source, ev, "llm.extract_case"),
                evidence_text=clean_quote(ev),
            )
        )
    tests = TestResults(values=number_values(values))
    return Demographics(**demo), tests, mental_status, omitted, family


# ---------------------------------------------------------------------------------------------------------------
# Stage 2: diagnoses

_SPECIFIER_WORDS = re.compile(
    r"\bwith (?:peripartum onset|psychotic features|anxious distress|mixed features|"
    r"seasonal pattern|melancholic features|catatonia)\b",
    re.I,
)


#: The status a model reports (the prompt's vocabulary) as certainty and temporality.
_DX_STATUS = {
    "current": (Certainty.confirmed, Temporality.current),
    "provisional": (Certainty.provisional, Temporality.current),
    "rule_out": (Certainty.rule_out, Temporality.current),
    "historical": (Certainty.confirmed, Temporality.past),
}


def _dx_node(
    rule: dsm_rules.DsmRule, label: str, specifiers: list[str], status: str, evidence: str | None,
    status_evidence: Evidence,
) -> Diagnosis:
    specs = [s.strip().lower() for s in specifiers if s.strip()]
    for s in dsm_rules.extract_specifiers(label):
        if s not in specs:
            specs.append(s)
    return Diagnosis(
        id=f"dx_{_slug(rule.id)}",
        label=rule.name,
        rule_id=rule.id,
        specifiers=specs,
        certainty=_DX_STATUS[status][0],
        certainty_evidence=status_evidence,
        temporality=_DX_STATUS[status][1],
        temporality_evidence=status_evidence,
        evidence_text=evidence,
    )


def diagnoses(ctx: StepContext, source: SourceText, parts: _Parts, given: list[Any] | None) -> None:
    """Stage 2: diagnoses from the given metadata (labels or rule ids) or from the text."""
    if given is not None:
        for i, item in enumerate(given):
            label = item if isinstance(item, str) else str((item or {}).get("label", ""))
            rule = dsm_rules.match_label(label) if label.strip() else None
            if rule is None:
                raise AnonpsyError(
                    E104_UNKNOWN_DIAGNOSIS,
                    f"diagnosis metadata item {i} matches no rules/dsm "
                    "entry; use a DSM-5-TR name or a rule id",
                    "options.diagnoses",
                )
            specs = list(item.get("specifiers", [])) if isinstance(item, dict) else []
            dx = _dx_node(rule, label, specs, "current", None, Evidence(rule_id="manual"))
            parts.acc.diagnoses.setdefault(dx.id, dx)
            pos = None
            for start, _end, rid in find_diagnoses(source.text):
                if rid == rule.id:
                    pos = start
                    break
            parts.mention(dx.id, pos)
        return
    items = ask_with_evidence(ctx, source, "extract_diagnoses", {"text": source.text}, "diagnoses")
    for i, it in enumerate(items):
        rule = dsm_rules.match_label(it["label"])
        if rule is None:
            ctx.note("E_DX_UNMAPPED", f"extract_diagnoses diagnoses[{i}]: label matches no rules/dsm entry")
            continue
        ev = clean_quote(it["evidence_text"])
        status_evidence = _evidence(source, ev, "llm.extract_diagnoses")
        if it["status"] == "historical":
            pid = f"ph_{_slug(rule.id)}"
            if pid not in parts.acc.past:
                parts.acc.past[pid] = PastHistory(
                    id=pid, condition=rule.name, status=HistoryStatus.pre_existing, status_evidence=status_evidence,
                    evidence_text=ev
                )
                parts.mention(pid, source.locate(ev))
            continue
        dx = _dx_node(rule, it["label"], list(it.get("specifiers") or []), it["status"], ev, status_evidence)
        if dx.id in parts.acc.diagnoses:
            continue
        parts.acc.diagnoses[dx.id] = dx
        parts.mention(dx.id, source.locate(ev))


# ---------------------------------------------------------------------------------------------------------------
# Stage 3: symptoms


def _with_object(headword: str, evidence: str) -> str:
    """The headword with the drugs its evidence names after it, as the rules backend states it ("overdose of
    citalopram and warfarin"); unchanged when the evidence names none."""
    from anonpsy.extract.mentions.symptoms import symptom_object

    for m in lexicon.find_terms(evidence, "symptom"):
        if m.headword == headword:
            drugs = symptom_object(evidence, m)
            if drugs:
                tail = drugs[0] if len(drugs) == 1 else f"{', '.join(drugs[:-1])} and {drugs[-1]}"
                return f"{headword} of {tail}"
    return headword


def map_headword(headword: str, evidence: str | None) -> str | None:
    """The symptom-lexicon headword a model headword names (or, failing that, the only one its evidence names)."""
    hits = lexicon.find_terms(headword, "symptom")
    if hits:
        return hits[0].headword
    if evidence:
        found = {m.headword for m in lexicon.find_terms(evidence, "symptom")}
        if len(found) == 1:
            return found.pop()
    return None


def _negated_in(evidence: str, headword: str) -> bool:
    """True when every lexicon mention of ``headword`` in the evidence is negated, hypothetical or a relative's."""
    mentions = [m for m in lexicon.find_terms(evidence, "symptom") if m.headword == headword]
    if not mentions:
        return False
    for m in mentions:
        c = classify(evidence, m.start, m.end)
        if not (c.negated or c.hypothetical or c.experiencer != "patient"):
            return False
    return True


def _frames(item: dict[str, Any], no_steb: bool) -> list[STEB]:
    if no_steb:
        episode = item.get("episode")
        return [STEB(situation=clean_quote(episode))] if episode and episode.strip() else []
    out: list[STEB] = []
    for fr in item.get("contexts") or []:
        values = {f: clean_quote(fr[f]) if fr.get(f) and fr[f].strip() else None for f in STEB_FIELDS}
        frame = STEB(**values)
        if frame.present_fields() and frame not in out:
            out.append(frame)
    return out[:MAX_CONTEXTS]


def symptoms(ctx: StepContext, source: SourceText, parts: _Parts, *, no_steb: bool) -> None:
    """Stage 3: symptoms with near-verbatim evidence and STEB frames (or one episode sentence with ``no_steb``)."""
    quoted = ("evidence_text", "episode") if no_steb else ("evidence_text",)
    items = ask_with_evidence(
        ctx, source, "extract_symptoms", {"text": source.text, "steb": not no_steb}, "symptoms", quoted
    )
    for i, it in enumerate(items):
        ev = clean_quote(it["evidence_text"])
        head = map_headword(it["headword"], ev)
        if head is None:
            ctx.note(
                "E_SYMPTOM_UNMAPPED", f"extract_symptoms symptoms[{i}]: headword not in the symptom lexicon"
            )
            continue
        if _negated_in(ev, head):
            ctx.note("E_SYMPTOM_NEGATED", f"extract_symptoms symptoms[{i}]: evidence negates the symptom")
            continue
        head = _with_object(head, ev)
        fixed = tables.sex_fixed_by_terms(head, age=parts.demographics.age)
        if (
            fixed is not None
            and parts.demographics.sex.value in ("female", "male")
            and fixed != parts.demographics.sex.value
        ):
            ctx.note(
                "E_SYMPTOM_SEX_CONFLICT", f"extract_symptoms symptoms[{i}]: headword contradicts the sex"
            )
            continue
        sid = f"sx_{_slug(head)}"
        frames = _frames(it, no_steb)
        sx = parts.acc.symptoms.get(sid)
        if sx is None:
            pattern = it.get("pattern")
            parts.acc.symptoms[sid] = Symptom(
                id=sid,
                headword=head,
                current_symptom=bool(it["current"]),
                assertion=Assertion.present if it["current"] else Assertion.historical,
                assertion_evidence=_evidence(source, ev, "llm.extract_symptoms"),
                pattern=pattern.strip() if pattern and pattern.strip() else None,
                evidence_text=ev,
                contexts=frames,
            )
            parts.mention(sid, source.locate(ev))
            continue
        if it["current"]:
            sx.current_symptom = True
            if sx.assertion != Assertion.present:
                sx.assertion = Assertion.present
                sx.assertion_evidence = _evidence(source, ev, "llm.extract_symptoms")
        merged = list(sx.contexts)
        for f in frames:
            if f not in merged and len(merged) < (1 if no_steb else MAX_CONTEXTS):
                merged.append(f)
        sx.contexts = merged


# ---------------------------------------------------------------------------------------------------------------
# Stage 4: treatments


def _therapy(name: str) -> lexicon.TermMatch | None:
    hits = lexicon.find_terms(name, "therapy")
    return hits[0] if hits else None


def _evidence_sentences(source: SourceText, parts: _Parts, quote: str) -> list[Sentence]:
    """The sentences of the source that the quoted evidence overlaps (none when it is not located)."""
    start = source.locate(quote)
    if start is None:
        return []
    end = start + max(1, len(quote))
    return [s for s in parts.sentences if s.start < end and s.end > start]


def rules_treatment_status(
    source: SourceText, parts: _Parts, tid: str, quote: str, age: int | None
) -> tuple[TreatmentStatus, Evidence, str | None] | None:
    """The rules backend's status of treatment ``tid`` (and its stop reason) read from the evidence sentences
    alone, with the rules extractor's own per-sentence treatment logic (:func:`add_treatments`,
    :func:`finalize_treatments`);
    None when those sentences name no treatment ``tid`` of the patient's."""
    sents = _evidence_sentences(source, parts, quote)
    if not sents:
        return None
    visit = visit_date(source.text)
    acc = Accumulator(index_is_admission=index_is_admission(source.text))
    for s in sents:
        add_treatments(s, time_mentions(s.text, age=age, visit=visit), acc)
    current_list = any(medication_list(s.section) == "current" for s in parts.sentences)
    finalize_treatments(acc, current_list=current_list, sents=sents)
    t = acc.treatments.get(tid)
    if t is None or tid not in acc.tx_votes or t.status_evidence is None:
        return None
    return t.status, t.status_evidence, t.discontinued_reason


def _stop_reason(source: SourceText, parts: _Parts, quote: str, said: str | None) -> str | None:
    """Why a past treatment was stopped: the project's reading of the evidence sentences
    (``rules/treatments/discontinuation.yaml``, with the adverse effect when named) when it agrees with the reason
    the model gives or the model gives none, else the model's reason."""
    read = reason_table().reason([s.text for s in _evidence_sentences(source, parts, quote)] or [quote])
    if read is None:
        return said
    if said is None or read.split(" (")[0] == said:
        return read
    return said


def _status(
    ctx: StepContext, source: SourceText, parts: _Parts, it: dict[str, Any], tid: str, ev: str
) -> tuple[TreatmentStatus, Evidence, str | None, bool]:
    """(status, its evidence, stop reason, decided by the rules backend) of one treatment of the reply.

    A reply that states the status decides it (rule ``llm.extract_treatments``); a reply without one (a model that
    leaves it out, a reply to version 1 of the template) takes the rules backend's status of the same treatment,
    resolved over every mention of the note (a plan that resumes a drug stopped before keeps it current); for a
    treatment the rules backend does not find, its status of the evidence sentences; current only when those name
    no treatment of the patient's."""
    said = it.get("status")
    if said:
        status = TreatmentStatus(said)
        reason = _stop_reason(source, parts, ev, it.get("stop_reason")) if status == TreatmentStatus.past else None
        return status, _evidence(source, ev, "llm.extract_treatments"), reason, False
    known = next((t for t in ctx.rules_graph().treatments if t.id == tid), None)
    if known is not None and known.status_evidence is not None:
        return known.status, known.status_evidence, known.discontinued_reason, True
    found = rules_treatment_status(source, parts, tid, ev, parts.demographics.age)
    if found is None:
        return TreatmentStatus.current, _evidence(source, ev, "llm.extract_treatments"), None, True
    status, evidence, reason = found
    if status == TreatmentStatus.past and reason is None:
        reason = _stop_reason(source, parts, ev, it.get("stop_reason"))
    return status, evidence, reason if status == TreatmentStatus.past else None, True


def treatments(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 4: treatments with their status; medications map to the medication lexicon and its class, therapies
    to theirs. A treatment the reply gives without a status takes the rules backend's status of its evidence."""
    items = ask_with_evidence(
        ctx,
        source,
        "extract_treatments",
        {"text": source.text},
        "treatments",
        ("evidence_text", "dose", "frequency", "outcome"),
    )
    meds = lexicon.medication_by_id()
    therapy_types = {e.id: e.type for e in lexicon.therapy_lexicon().rules}
    by_rules = 0
    for it in items:
        ev = clean_quote(it["evidence_text"])
        med = lexicon.find_terms(it["name"], "medication")
        route = Route(it["route"]) if it.get("route") else None
        if med:
            entry = meds.get(med[0].id)
            name = entry.headword if entry is not None else med[0].headword
            tid = f"tx_{_slug(name)}"
            ttype = TreatmentType.medication
            cls: str | None = entry.class_id if entry is not None else "other_medical"
        else:
            th = _therapy(it["name"])
            cls = None
            if th is not None:
                tid = f"tx_{_slug(th.id)}"
                ttype = TreatmentType(therapy_types.get(th.id, "psychotherapy"))
                name = th.headword
            else:
                name = it["name"].strip().lower()
                tid = f"tx_{_slug(name)}"
                ttype = TreatmentType(it["type"])
                if ttype == TreatmentType.medication:
                    cls = tables.class_for_drug(name)
                    if cls is None:
                        ctx.note(
                            "E_TREATMENT_UNMAPPED",
                            f"extract_treatments {tid}: medication not in the lexicon; kept without a class",
                        )
            if ttype != TreatmentType.medication:
                route = route or Route.not_applicable
        if tid in parts.acc.treatments:
            continue
        if cls is not None:
            parts.acc.med_class.setdefault(tid, cls)
        status, status_evidence, reason, ruled = _status(ctx, source, parts, it, tid, ev)
        by_rules += ruled
        parts.acc.treatments[tid] = Treatment(
            id=tid,
            type=ttype,
            name=name,
            dose=it.get("dose"),
            route=route,
            frequency=it.get("frequency"),
            status=status,
            status_evidence=status_evidence,
            discontinued_reason=reason,
            outcome=it.get("outcome"),
            evidence_text=ev,
        )
        parts.mention(tid, source.locate(ev))
    if by_rules:
        ctx.note(
            "E_TREATMENT_STATUS_RULES",
            f"extract_treatments: {by_rules} treatment(s) without a status in the reply; "
            "status read by the rules backend from the evidence",
        )


# ---------------------------------------------------------------------------------------------------------------
# Stage 5: visit


def visit(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 5: the visit event; safety flags also follow from the current symptoms (as in the rules backend)."""
    reply = ctx.ask("extract_visit", {"text": source.text}, operator=OPERATOR)
    texts: dict[str, str | None] = {}
    for name in ("reason_for_visit", "visit_episode", "pathway"):
        value = reply.get(name)
        if value and source.contains(value):
            texts[name] = clean_quote(value)
        elif value:
            ctx.note("E_FIELD_CLEARED", f"extract_visit {name}: not found in the source")
    sources = [s.strip() for s in reply.get("source_of_information") or [] if source.contains(s)]
    current = {s.headword for s in parts.acc.symptoms.values() if s.current_symptom}
    derived = {SAFETY_FROM_HEADWORD[h] for h in current if h in SAFETY_FROM_HEADWORD}
    flags = sorted({SafetyFlag(f) for f in reply.get("safety_flags") or []} | derived, key=lambda f: f.value)
    parts.visit = VisitEvent(
        setting=Setting(reply["setting"]),
        arrival_mode=ArrivalMode(reply["arrival_mode"]),
        legal_status=LegalStatus(reply["legal_status"]),
        safety_flags=flags,
        source_of_information=list(dict.fromkeys(sources)),
        **texts,
    )


# ---------------------------------------------------------------------------------------------------------------
# Stage 6: past history


def past_history(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 6: past conditions; DSM conditions take their rule name, current diagnoses are not repeated."""
    current = sorted(d.label for d in parts.acc.diagnoses.values())
    items = ask_with_evidence(
        ctx, source, "extract_history", {"text": source.text, "current_diagnoses": current}, "past_history"
    )
    for it in items:
        rule = dsm_rules.match_label(it["condition"])
        if rule is not None and f"dx_{_slug(rule.id)}" in parts.acc.diagnoses:
            continue
        condition = rule.name if rule is not None else it["condition"].strip()
        pid = f"ph_{_slug(rule.id if rule is not None else condition)}"
        if pid in parts.acc.past:
            continue
        ev = clean_quote(it["evidence_text"])
        parts.acc.past[pid] = PastHistory(
            id=pid, condition=condition, status=HistoryStatus(it["status"]),
            status_evidence=_evidence(source, ev, "llm.extract_history"), evidence_text=ev
        )
        parts.mention(pid, source.locate(ev))


# ---------------------------------------------------------------------------------------------------------------
# Stage 7: temporal episodes


def _nodes(parts: _Parts) -> list[tuple[str, str, str, str | None]]:
    acc = parts.acc
    out: list[tuple[str, str, str, str | None]] = []
    out += [(d.id, "diagnosis", d.label, d.evidence_text) for d in acc.diagnoses.values()]
    out += [(s.id, "symptom", s.headword, s.evidence_text) for s in acc.symptoms.values()]
    out += [(t.id, "treatment", t.name, t.evidence_text) for t in acc.treatments.values()]
    out += [(p.id, "past_history", p.condition, p.evidence_text) for p in acc.past.values()]
    return out


def episode_spec(
    ep: dict[str, Any], age: int | None, source: SourceText
) -> tuple[TimeSpec | None, str | None]:
    """(spec, problem code) for one episode of the timeline reply."""
    expr = ep.get("expression")
    if expr:
        if not source.contains(expr):
            return None, "E_TIME_NOT_IN_SOURCE"
        spec = parse_expression(expr, age=age)
        return (spec, None) if spec is not None else (None, "E_TIME_UNPARSED")
    offset, unit = ep.get("offset"), ep.get("unit")
    if offset is None or unit is None:
        return None, "E_TIME_INCOMPLETE"
    u = Unit(unit)
    span = ep.get("span")
    ongoing = bool(ep.get("ongoing"))
    limit = ((age if age is not None else 100) + 1) * 365
    if abs(offset * UNIT_DAYS[u]) > limit:
        return None, "E_TIME_IMPLAUSIBLE"
    if ongoing:
        if offset > 0:
            return None, "E_TIME_IMPLAUSIBLE"
        if span is not None and (offset + span) * UNIT_DAYS[u] < 1:
            span = None
        return TimeSpec(offset, None if span is None else span, u, ongoing=True), None
    return TimeSpec(offset, span or 1, u), None


def timeline(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 7: episodes per node as offset/span/unit, or a coarse expression mapped by the temporal engine."""
    nodes = _nodes(parts)
    if not nodes:
        return
    items = [{"id": i, "kind": k, "name": n, "evidence": e} for i, k, n, e in nodes]
    # A reply holds at most the schema's maxItems items: a long note (or a rules fallback of an earlier stage)
    # may have more nodes than that, so they are asked about in batches of that size.
    schema = load_template("extract_timeline").reply_schema or {}
    size = int(schema.get("properties", {}).get("items", {}).get("maxItems", len(items))) or 1
    replied: list[dict[str, Any]] = []
    for at in range(0, len(items), size):
        payload = {"text": source.text, "age": parts.demographics.age, "items": items[at:at + size]}
        replied += ctx.ask("extract_timeline", payload, operator=OPERATOR).get("items") or []
    known = {i for i, *_ in nodes}
    age = parts.demographics.age
    acc = parts.acc
    for item in replied:
        nid = item["id"]
        if nid not in known:
            ctx.note("E_TIME_UNKNOWN_ID", "extract_timeline: an item id is not an extracted node")
            continue
        node = acc.diagnoses.get(nid) or acc.symptoms.get(nid) or acc.treatments.get(nid) or acc.past.get(nid)
        assert node is not None
        for k, ep in enumerate(item.get("episodes") or []):
            spec, problem = episode_spec(ep, age, source)
            if spec is None:
                ctx.note(problem or "E_TIME_DROPPED", f"extract_timeline {nid} episode {k}")
                continue
            did = acc.duration_for(spec)
            if did not in node.duration_ids:
                node.duration_ids = [*node.duration_ids, did]


# ---------------------------------------------------------------------------------------------------------------
# Stage 8: causal links


def causal(ctx: StepContext, source: SourceText, graph: CaseGraph) -> CaseGraph:
    """Stage 8: INDUCES edges stated in the text; accepted only with evidence found in the source."""
    types = graph.node_types()
    names = {
        n.id: getattr(n, "label", None)
        or getattr(n, "headword", None)
        or getattr(n, "name", None)
        or getattr(n, "condition", None)
        for n in graph.temporal_nodes()
    }
    if len(names) < 2:
        return graph
    payload = {
        "text": source.text,
        "items": [{"id": i, "kind": types[i].value, "name": n} for i, n in names.items()],
    }
    items = ask_with_evidence(ctx, source, "extract_causal", payload, "edges")
    existing = {e.key() for e in graph.edges}
    added: list[Edge] = []
    for i, it in enumerate(items):
        src, tgt = it["source"], it["target"]
        if src not in types or tgt not in types or src == tgt:
            ctx.note("E_CAUSAL_DROPPED", f"extract_causal edges[{i}]: unknown node id or self loop")
            continue
        if not tables.edge_pair_allowed("INDUCES", types[src].value, types[tgt].value):
            ctx.note(
                "E_CAUSAL_DROPPED", f"extract_causal edges[{i}]: INDUCES not permitted between these kinds"
            )
            continue
        edge = Edge(
            type=RelationType.INDUCES, source=src, target=tgt, evidence_text=clean_quote(it["evidence_text"])
        )
        if edge.key() in existing:
            continue
        existing.add(edge.key())
        added.append(edge)
    if not added:
        return graph
    return graph.model_copy(update={"edges": [*graph.edges, *added]})


def _allowed_edges(ctx: StepContext, acc: Accumulator) -> list[Edge]:
    """The deterministic relations, minus pairs that ``rules/graph/edge_pairs.yaml`` forbids (each noted)."""
    kinds = {
        **{i: "diagnosis" for i in acc.diagnoses},
        **{i: "symptom" for i in acc.symptoms},
        **{i: "treatment" for i in acc.treatments},
        **{i: "past_history" for i in acc.past},
    }
    out: list[Edge] = []
    for e in acc.edges:
        src, tgt = kinds.get(e.source), kinds.get(e.target)
        if src is None or tgt is None or not tables.edge_pair_allowed(e.type.value, src, tgt):
            ctx.note(
                "E_EDGE_FORBIDDEN", f"{e.type.value} {e.source} -> {e.target}: pair not permitted; dropped"
            )
            continue
        out.append(e)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Rules-backend fallbacks, one per stage: the rules extractor's findings for what the failed stage would have asked.
# Node ids follow the same conventions in both backends, so a fallback stage merges with the model's stages.


def _fresh(node: N) -> N:
    """A copy of a rules-backend node without its durations (the timeline stage assigns them)."""
    return node.model_copy(update={"duration_ids": []}, deep=True)


def rules_case_attributes(
    ctx: StepContext,
) -> tuple[Demographics, TestResults, MentalStatus, list[Omission], list[FamilyHistory]]:
    """Stage 1 by the rules backend."""
    rg = ctx.rules_graph()
    return (rg.demographics, rg.test_results, rg.mental_status, list(rg.omitted),
            [f.model_copy() for f in rg.family_history])


def rules_diagnoses(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 2 by the rules backend: current diagnoses, and historical ones as past history."""
    rg = ctx.rules_graph()
    for d in rg.diagnoses:
        if d.id not in parts.acc.diagnoses:
            parts.acc.diagnoses[d.id] = _fresh(d)
            parts.mention(d.id, source.locate(d.evidence_text))
    for p in rg.past_history:
        rule = dsm_rules.match_label(p.condition)
        if rule is not None and p.id == f"ph_{_slug(rule.id)}" and p.id not in parts.acc.past:
            parts.acc.past[p.id] = _fresh(p)
            parts.mention(p.id, source.locate(p.evidence_text))


def rules_symptoms(ctx: StepContext, source: SourceText, parts: _Parts, *, no_steb: bool) -> None:
    """Stage 3 by the rules backend (one frame per symptom with ``no_steb``)."""
    for sx in ctx.rules_graph().symptoms:
        if sx.id in parts.acc.symptoms:
            continue
        node = _fresh(sx)
        if no_steb:
            node.contexts = node.contexts[:1]
        parts.acc.symptoms[sx.id] = node
        parts.mention(sx.id, source.locate(sx.evidence_text))


def rules_treatments(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 4 by the rules backend; medications get their lexicon class as in the model's stage."""
    meds = lexicon.medication_by_id()
    for t in ctx.rules_graph().treatments:
        if t.id in parts.acc.treatments:
            continue
        parts.acc.treatments[t.id] = _fresh(t)
        parts.mention(t.id, source.locate(t.evidence_text))
        if t.type != TreatmentType.medication:
            continue
        hits = lexicon.find_terms(t.name, "medication")
        entry = meds.get(hits[0].id) if hits else None
        cls = entry.class_id if entry is not None else tables.class_for_drug(t.name)
        if cls is not None:
            parts.acc.med_class.setdefault(t.id, cls)


def rules_visit(ctx: StepContext, parts: _Parts) -> None:
    """Stage 5 by the rules backend, with the safety flags that follow from the current symptoms."""
    ve = ctx.rules_graph().visit_event
    current = {s.headword for s in parts.acc.symptoms.values() if s.current_symptom}
    derived = {SafetyFlag(SAFETY_FROM_HEADWORD[h]) for h in current if h in SAFETY_FROM_HEADWORD}
    flags = sorted(set(ve.safety_flags) | derived, key=lambda f: f.value)
    parts.visit = ve.model_copy(update={"safety_flags": flags}, deep=True)


def rules_past_history(ctx: StepContext, source: SourceText, parts: _Parts) -> None:
    """Stage 6 by the rules backend; conditions that are current diagnoses are not repeated."""
    for p in ctx.rules_graph().past_history:
        rule = dsm_rules.match_label(p.condition)
        if p.id in parts.acc.past or (rule is not None and f"dx_{_slug(rule.id)}" in parts.acc.diagnoses):
            continue
        parts.acc.past[p.id] = _fresh(p)
        parts.mention(p.id, source.locate(p.evidence_text))


def rules_timeline(ctx: StepContext, parts: _Parts) -> None:
    """Stage 7 by the rules backend: the rules extractor's episodes of every node both backends found."""
    rg = ctx.rules_graph()
    dmap = rg.duration_map()
    ref_nodes: list[Diagnosis | Symptom | Treatment | PastHistory] = [
        *rg.diagnoses, *rg.symptoms, *rg.treatments, *rg.past_history
    ]
    found = {n.id: n for n in ref_nodes}
    acc = parts.acc
    nodes: list[Diagnosis | Symptom | Treatment | PastHistory] = [
        *acc.diagnoses.values(), *acc.symptoms.values(), *acc.treatments.values(), *acc.past.values()
    ]
    for node in nodes:
        ref = found.get(node.id)
        if ref is None:
            continue
        for rid in ref.duration_ids:
            d = dmap.get(rid)
            if d is None:
                continue
            did = acc.duration_for(TimeSpec(d.offset, d.span, d.unit, ongoing=d.ongoing))
            if did not in node.duration_ids:
                node.duration_ids = [*node.duration_ids, did]


def rules_causal(ctx: StepContext, graph: CaseGraph) -> CaseGraph:
    """Stage 8 by the rules backend: its INDUCES edges between nodes of this graph."""
    types = graph.node_types()
    existing = {e.key() for e in graph.edges}
    added: list[Edge] = []
    for e in ctx.rules_graph().edges:
        if e.type != RelationType.INDUCES or e.source not in types or e.target not in types:
            continue
        if e.key() in existing or not tables.edge_pair_allowed(
            "INDUCES", types[e.source].value, types[e.target].value
        ):
            continue
        existing.add(e.key())
        added.append(e.model_copy())
    return graph.model_copy(update={"edges": [*graph.edges, *added]}) if added else graph


# ---------------------------------------------------------------------------------------------------------------


def _assemble(ctx: StepContext, parts: _Parts) -> CaseGraph:
    acc = parts.acc
    return CaseGraph(
        case_id=ctx.case_id,
        demographics=parts.demographics,
        mental_status=parts.mental_status,
        test_results=parts.tests,
        family_history=acc.family,
        diagnoses=list(acc.diagnoses.values()),
        symptoms=list(acc.symptoms.values()),
        treatments=list(acc.treatments.values()),
        past_history=list(acc.past.values()),
        visit_event=parts.visit,
        durations=acc.durations,
        edges=list({e.key(): e for e in acc.edges}.values()),
        omitted=parts.omitted,
    )


def extract_with_llm(text: str, ctx: StepContext, *, options: dict[str, Any] | None = None) -> CaseGraph:
    """LLM-backed extraction of a temporally normalised case graph (see the module docstring)."""
    opts = options or {}
    if ctx.source_text is None:
        ctx.source_text = text
    source = SourceText(text)
    sents = sentences(text)
    no_steb = bool(opts.get("no_steb"))

    def stage(template_id: str, llm: Callable[[], Any], rules: Callable[[], Any]) -> Any:
        return run_step(ctx, stage="extraction", step=template_id, template_id=template_id, llm=llm, rules=rules)

    demo, tests, mental_status, omitted, family = stage(
        "extract_case", lambda: case_attributes(ctx, source, sents), lambda: rules_case_attributes(ctx)
    )
    parts = _Parts(
        acc=Accumulator(),
        demographics=demo,
        tests=tests,
        visit=VisitEvent(),
        sentence_starts=[s.start for s in sents],
        mental_status=mental_status,
        omitted=omitted,
        sentences=sents,
    )
    parts.acc.family = family
    given = opts.get("diagnoses")
    if given is not None:
        diagnoses(ctx, source, parts, list(given))
    else:
        stage(
            "extract_diagnoses",
            lambda: diagnoses(ctx, source, parts, None),
            lambda: rules_diagnoses(ctx, source, parts),
        )
    stage(
        "extract_symptoms",
        lambda: symptoms(ctx, source, parts, no_steb=no_steb),
        lambda: rules_symptoms(ctx, source, parts, no_steb=no_steb),
    )
    stage("extract_treatments", lambda: treatments(ctx, source, parts), lambda: rules_treatments(ctx, source, parts))
    stage("extract_visit", lambda: visit(ctx, source, parts), lambda: rules_visit(ctx, parts))
    stage("extract_history", lambda: past_history(ctx, source, parts), lambda: rules_past_history(ctx, source, parts))
    stage("extract_timeline", lambda: timeline(ctx, source, parts), lambda: rules_timeline(ctx, parts))
    derive_relations(text, [], parts.acc)
    parts.acc.edges = _allowed_edges(ctx, parts.acc)
    graph = _assemble(ctx, parts)
    graph = stage("extract_causal", lambda: causal(ctx, source, graph), lambda: rules_causal(ctx, graph))
    if ctx.identifiers is None:
        ctx.identifiers = SourceIdentifiers(text)
    # As in the rules backend: a test value whose name or result holds a source identifier is withheld.
    graph = normalize(withhold_identified(graph, ctx.identifiers.find))
    problems = structural_violations(graph)
    if problems:
        codes = ", ".join(sorted({v.code for v in problems}))
        err = LLMBackendError(f"extracted graph is structurally invalid ({codes}); the case is not processed")
        ctx.fall_back(err, stage="extraction", step="extract_graph")
        graph = normalize(withhold_identified(ctx.rules_graph(), ctx.identifiers.find))
    return graph
