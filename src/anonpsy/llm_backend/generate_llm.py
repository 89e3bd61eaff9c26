"""The LLM backend of generation D: perturbed graph → case history, one bounded call per narrative block.

The timeline and grouping are the core's (:func:`anonpsy.generate.plan_narrative`), time phrases come from the
template renderer, so both backends narrate the same blocks in the same order. Calls: a lead paragraph, one per
block, and a closing call for past history, family history, diagnoses not yet stated, tests and disposition.
Bookkeeping makes each (item, duration) narrated once. Meta-text ("Here is…", "Sure", markdown) is stripped. A
round trip through the rules extractor must find every diagnosis and current symptom; blocks that miss one are
regenerated (bounded) and what is still missing is noted in the audit.

A section whose model call still fails after the client's retries and re-ask is written by the template renderer
(:class:`anonpsy.generate.templates.Renderer`, the rules backend) for that section alone, recorded in
``audit.fallbacks``; a failed regeneration keeps the renderer's text for the section too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from anonpsy.audit import Audit
from anonpsy.generate.findings import mental_status_text, value_text
from anonpsy.generate.plain import plain_node
from anonpsy.generate.plan import Block, NarrativePlan, plan_narrative
from anonpsy.generate.templates import ARRIVAL_PHRASE, LEGAL_PHRASE, SAFETY_PHRASE, SETTING_PHRASE, Renderer
from anonpsy.generate.words import Voice
from anonpsy.graph import (
    CaseGraph,
    Certainty,
    Diagnosis,
    PastHistory,
    Symptom,
    Temporality,
    TestKind,
    TestValue,
    Treatment,
)
from anonpsy.llm.errors import LLMError
from anonpsy.llm_backend.roundtrip import Gap, read_back, roundtrip_gaps
from anonpsy.llm_backend.steps import Ask, StepContext

OPERATOR = "generation"
#: Regeneration rounds for blocks whose terms the rules extractor did not find.
MAX_ROUNDTRIP_ROUNDS = 2
BLOCKS_PER_PARAGRAPH = 3

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*$")
_HEADING = re.compile(r"^\s*#{1,6}\s+.*$|^\s*(?:\*\*|__)[^*_]{1,80}(?:\*\*|__)\s*:?\s*$")
_META_FIRST = re.compile(
    r"^\s*(?:sure|certainly|of course|okay|ok|absolutely|great|here(?:'s| is| are)|below (?:is|are)|"
    r"the following)\b",
    re.I,
)
_META_LAST = re.compile(
    r"^\s*(?:let me know|i hope|feel free|hope this|if you(?:'d| would) like|note:)", re.I
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_EMPH = re.compile(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1")


def strip_meta(text: str) -> str:
    """Prose without meta-text: no leading "Here is…"/"Sure" line, no closing offer, headings, fences or markdown."""
    lines = [
        ln for ln in text.replace("\r\n", "\n").split("\n") if not _FENCE.match(ln) and not _HEADING.match(ln)
    ]
    while lines and (
        not lines[0].strip()
        or (
            _META_FIRST.match(lines[0])
            and (lines[0].rstrip().endswith(":") or (len(lines) > 1 and len(lines[0]) < 160))
        )
    ):
        lines.pop(0)
    if lines and _META_FIRST.match(lines[0]):
        lines[0] = re.sub(
            r"^\s*(?:sure|certainly|of course|okay|ok|absolutely)\s*[,!.]\s*", "", lines[0], flags=re.I
        )
    while lines and (not lines[-1].strip() or _META_LAST.match(lines[-1])):
        lines.pop()
    paras: list[str] = []
    cur: list[str] = []
    for ln in lines:
        if not ln.strip():
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        cur.append(_EMPH.sub(r"\2", _BULLET.sub("", ln)).strip())
    if cur:
        paras.append(" ".join(cur))
    out = "\n\n".join(re.sub(r"\s+", " ", p).strip() for p in paras if p.strip())
    return out.strip().strip('"').strip()


@dataclass
class Section:
    """One generated piece: its template, input, required terms, the nodes it narrates and its text."""

    key: str
    template_id: str
    payload: dict[str, Any]
    must: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    text: str = ""
    block: Block | None = None
    stated: frozenset[str] = frozenset()
    by_rules: bool = False


def _frames(contexts: list[Any]) -> list[dict[str, str]]:
    return [{f: str(getattr(fr, f)) for f in fr.present_fields()} for fr in contexts]


def _treatment(t: Treatment) -> dict[str, Any]:
    return {
        "name": t.name,
        "type": t.type.value,
        "dose": t.dose,
        "frequency": t.frequency,
        "outcome": t.outcome,
        "route": t.route.value if t.route and t.route.value not in ("unknown", "not_applicable") else None,
    }


def lead_section(graph: CaseGraph, r: Renderer) -> Section:
    """The lead paragraph's input (no symptoms, diagnoses or treatments)."""
    d, ve = graph.demographics, graph.visit_event
    payload = {
        "age": d.age,
        "sex": d.sex.value,
        "noun": r.voice.noun,
        "pronoun": r.voice.subj,
        "ethnicity": d.ethnicity,
        "occupation": d.occupation,
        "family_structure": d.family_structure,
        "setting": SETTING_PHRASE[ve.setting],
        "arrival": ARRIVAL_PHRASE[ve.arrival_mode].format(pos=r.voice.pos),
        "legal_status": LEGAL_PHRASE[ve.legal_status],
        "safety_concerns": [SAFETY_PHRASE.get(f.value, f.value) for f in ve.safety_flags],
        "reason_for_visit": ve.reason_for_visit,
        "visit_episode": ve.visit_episode,
        "history_from": list(ve.source_of_information),
    }
    return Section("lead", "generate_lead", payload)


def block_section(
    graph: CaseGraph, r: Renderer, b: Block, index: int, stated: frozenset[str] = frozenset()
) -> Section:
    """One block's input: its time phrase, items and the terms the text must name."""
    payload: dict[str, Any] = {
        "kind": b.kind,
        "when": r.when(b.interval),
        "lasting": r.lasting(b.interval).lstrip(", "),
        "pronoun": r.voice.subj,
    }
    must: list[str] = []
    nodes: list[str] = []
    if b.kind == "episode":
        payload["symptoms"] = [
            {
                "headword": s.headword,
                "current": s.current_symptom,
                "pattern": s.pattern,
                "contexts": _frames(s.contexts),
            }
            for s in b.symptoms
        ]
        must += list(dict.fromkeys(s.headword for s in b.symptoms))
        nodes += [s.id for s in b.symptoms]
    elif b.kind == "regimen":
        payload["treatments"] = [_treatment(t) for t in b.treatments]
        must += list(dict.fromkeys(t.name for t in b.treatments))
        nodes += [t.id for t in b.treatments]
    elif b.kind == "induces":
        payload["cause"] = r.name_of(b.source_id or "")
        payload["effects"] = [r.name_of(t) for t in b.target_ids]
        must += [payload["cause"], *payload["effects"]]
        nodes += [b.source_id or "", *b.target_ids]
    else:
        assert b.history is not None
        payload["history"] = {"condition": b.history.condition, "status": b.history.status.value}
        must.append(b.history.condition)
        nodes.append(b.history.id)
    if b.diagnosis is not None:
        dx = b.diagnosis
        payload["diagnosis"] = {
            "label": dx.label,
            "status": _prompt_status(dx),
            "specifiers": list(dx.specifiers),
            "stated_before": dx.id in stated,
        }
        if dx.id not in stated:
            must.append(dx.label)
        if dx.id not in stated:
            nodes.append(dx.id)
    payload["must_mention"] = must
    return Section(f"block:{index}", "generate_block", payload, must, nodes, block=b, stated=stated)


def _prompt_status(dx: Diagnosis) -> str:
    """A diagnosis' certainty and temporality in the prompt's status words."""
    if dx.certainty != Certainty.confirmed:
        return dx.certainty.value
    return "historical" if dx.temporality == Temporality.past else "current"


def _prompt_tests(values: list[TestValue]) -> dict[str, str]:
    """The structured results as the prompt's labs / imaging / other texts."""
    groups = {"labs": (TestKind.lab, TestKind.vital), "imaging": (TestKind.imaging,),
              "other": (TestKind.rating_scale, TestKind.cognition, TestKind.other)}
    out = {}
    for key, kinds in groups.items():
        items = [value_text(v) for v in values if v.kind in kinds]
        if items:
            out[key] = "; ".join(items)
    return out


def closing_section(graph: CaseGraph, unnamed: list[str], history: list[Any]) -> Section | None:
    """The closing call's input, or None when there is nothing to close with."""
    tr = graph.test_results
    payload: dict[str, Any] = {
        "past_history": [{"condition": p.condition, "status": p.status.value} for p in history],
        "family_history": [{"member": f.member, "condition": f.condition} for f in graph.family_history],
        "diagnoses": [d.label for d in graph.diagnoses if d.id in unnamed],
        "tests": _prompt_tests(tr.values),
        "mental_status": mental_status_text(graph.mental_status),
        "disposition": graph.visit_event.pathway,
    }
    if not any(payload.values()):
        return None
    must = [p.condition for p in history] + list(payload["diagnoses"])
    payload["must_mention"] = must
    return Section("closing", "generate_closing", payload, must, [*unnamed, *(p.id for p in history)])


def rules_section(graph: CaseGraph, seed: int, plan: NarrativePlan, sec: Section) -> str:
    """The template renderer's text for one section (the rules backend), with the same content duties: the
    lead; a block with its diagnosis unless stated before; the closing with the diagnoses no block named, the past
    and family history, the denied and conditional symptoms, the findings and the disposition."""
    r = Renderer(graph, seed)
    if sec.key == "lead":
        return r.lead().text
    b = sec.block
    if b is not None:
        key = r.block_key(b)
        if b.kind == "episode":
            piece = r.episode(b, key)
        elif b.kind == "regimen":
            piece = r.regimen(b, key)
        elif b.kind == "induces":
            piece = r.induces(b, key)
        else:
            piece = r.history(b, key)
        # facts the section carries that the rules backend tells in other pieces (a denied symptom of the block)
        v = Voice(graph.demographics.sex, graph.demographics.age)
        rest = []
        for nid in sec.nodes:
            if nid not in piece.nodes:
                try:
                    rest.append(plain_node(graph, nid, v))
                except KeyError:
                    continue
        text = " ".join([piece.text, *rest])
        dx = b.diagnosis
        if (dx is not None and b.kind in ("induces", "history") and dx.id not in sec.stated
                and dx.id not in piece.nodes and dx.id not in sec.nodes):
            text += " " + r.dx_sentence(dx)
        return text
    sentences = [r.dx_sentence(d) for d in graph.diagnoses if d.id in sec.nodes]
    closing = [*r.closing_history(plan.closing_history), *r.family(),
               *(p for p in (r.denied(), r.conditional(), r.tests(), r.mental_status(), r.disposition())
                 if p is not None)]
    return " ".join([*sentences, *(p.text for p in closing if p.text)])


def _step_name(sec: Section) -> str:
    return f"generate_block:{sec.key.split(':', 1)[1]}" if sec.block is not None else sec.template_id


def _generate_all(
    ctx: StepContext, todo: list[tuple[Section, str]], graph: CaseGraph, plan: NarrativePlan
) -> None:
    """Write each (section, feedback) of ``todo``: the sections are independent, so their requests are sent
    together (:meth:`StepContext.ask_all`); replies and faults are then taken in section order."""
    replies = ctx.ask_all([Ask(sec.template_id, sec.payload, OPERATOR, feedback) for sec, feedback in todo])
    for (sec, _), reply in zip(todo, replies, strict=True):
        if isinstance(reply, Exception):
            if not isinstance(reply, LLMError):
                raise reply
            ctx.fall_back(reply, stage="generation", step=_step_name(sec))
            sec.by_rules = True
            sec.text = rules_section(graph, ctx.seed, plan, sec)
            continue
        sec.text = strip_meta(str(reply["text"]))
        if not sec.text:
            ctx.note("D_EMPTY_SECTION", f"{sec.key}: only meta-text; section left empty")


def assemble(sections: list[Section]) -> str:
    """Lead, body paragraphs of a few blocks each, closing."""
    lead = [s.text for s in sections if s.key == "lead" and s.text]
    body = [s.text for s in sections if s.key.startswith("block:") and s.text]
    closing = [s.text for s in sections if s.key in ("denied", "closing") and s.text]
    paras = lead + [
        " ".join(body[i : i + BLOCKS_PER_PARAGRAPH]) for i in range(0, len(body), BLOCKS_PER_PARAGRAPH)
    ]
    paras += closing
    text = "\n\n".join(p.strip() for p in paras if p.strip())
    text = re.sub(r"[ \t]+", " ", text)
    return text.strip() + "\n"


def _feedback(gaps: list[Gap]) -> str:
    terms = ", ".join(dict.fromkeys(f'"{g.term}"' for g in gaps))
    return (
        f"Your previous text did not name: {terms}. Write the text again and use each of these exact words "
        "in a plain affirmative sentence about the patient."
    )


def generate_with_llm(graph: CaseGraph, ctx: StepContext, audit: Audit) -> str:
    """Generate the case history of a perturbed graph; round-trip gaps left after regeneration go to the audit."""
    r = Renderer(graph, ctx.seed)
    plan = plan_narrative(graph)
    sections = [lead_section(graph, r)]
    narrated: set[tuple[str, str | None]] = set()
    named_dx: set[str] = set()
    for b in plan.blocks:
        items: list[Symptom | Treatment | PastHistory] = [*b.symptoms, *b.treatments]
        if b.history is not None:
            items.append(b.history)
        pairs = {(n.id, n.duration_ids[0] if n.duration_ids else None) for n in items}
        if pairs & narrated:
            ctx.note(
                "D_DUPLICATE_ITEM", f"block {len(sections) - 1}: an (item, duration) pair was narrated before"
            )
        narrated |= pairs
        sec = block_section(graph, r, b, len(sections) - 1, frozenset(named_dx))
        if b.diagnosis is not None:
            named_dx.add(b.diagnosis.id)
        sections.append(sec)
    unnamed = [d.id for d in graph.diagnoses if d.id not in named_dx]
    closing = closing_section(graph, unnamed, plan.closing_history)
    if closing is not None:
        sections.append(closing)
    denied = [p for p in (r.denied(), r.conditional()) if p is not None and p.text]
    if denied:  # denied and conditional symptoms are told by the rules backend's own sentences
        sections.append(Section("denied", "rules", {}, [], [n for p in denied for n in p.nodes],
                                text=" ".join(p.text for p in denied), by_rules=True))
    owner: dict[str, int] = {}
    for i, sec in enumerate(sections):
        for nid in sec.nodes:
            owner.setdefault(nid, i)
    _generate_all(ctx, [(sec, "") for sec in sections if not sec.by_rules], graph, plan)
    text = assemble(sections)
    reread = read_back(text)  # one reading of each text, for the gaps and then the status round trip
    gaps = roundtrip_gaps(graph, text, reread)
    rounds = 0
    while gaps and rounds < MAX_ROUNDTRIP_ROUNDS:
        rounds += 1
        by_section: dict[int, list[Gap]] = {}
        for g in gaps:
            idx = owner.get(g.node_id)
            if idx is not None and not sections[idx].by_rules:
                by_section.setdefault(idx, []).append(g)
        if not by_section:
            break
        _generate_all(ctx, [(sections[idx], _feedback(gs)) for idx, gs in sorted(by_section.items())], graph, plan)
        text = assemble(sections)
        reread = read_back(text)
        gaps = roundtrip_gaps(graph, text, reread)
    for g in gaps:
        audit.notes.append(
            f"D_ROUNDTRIP_MISSING {g.kind} {g.node_id}: not found by the rules extractor after "
            f"{rounds} regeneration round(s)"
        )
    return _status_round_trip(graph, sections, ctx, audit, (text, reread))


def _status_round_trip(graph: CaseGraph, sections: list[Section], ctx: StepContext, audit: Audit,
                       known: tuple[str, CaseGraph]) -> str:
    """The rules backend's round trip on statuses (anonpsy.generate.faithful): sections that state a fact with
    another status than the graph's are written plainly; what still disagrees is a violation. ``known``: the
    assembled text and its reading, already done for the gaps."""
    from anonpsy.audit import GenerationRecord
    from anonpsy.generate.faithful import round_trip_sections

    text, record, violations = round_trip_sections(graph, sections, assemble, seed=ctx.seed, known=known)
    audit.generation = GenerationRecord(backend="llm", round_trip=record)
    audit.violations += [v.model_dump() for v in violations]
    return text
