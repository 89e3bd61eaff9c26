"""A scripted model for the LLM backend: valid replies per template, computed from the request's input JSON.

Extraction replies are the rules backend's findings in the reply format (so evidence is verbatim); perturbation
replies are generic, non-identifying rewrites; generation replies compose plain sentences that name every term in
``must_mention``. ``ScriptedOpenAIServer(responder=Responder())`` serves it; ``overrides`` replace one template's
reply (``{template_id: fn(input, feedback, attempt) -> dict}``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from anonpsy.extract import extract
from anonpsy.extract.sections import sentences
from anonpsy.graph import CaseGraph, Certainty, Diagnosis, Evidence, RelationType, Temporality
from anonpsy.temporal import _PATTERNS, parse_expression
from anonpsy.testing.openai_server import template_of

Override = Callable[[dict[str, Any], str, int], dict[str, Any]]
_INPUT = re.compile(r"<<<\n(.*?)\n>>>\n?(.*)", re.S)


def request_input(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(input JSON, feedback) of the first user message carrying an input block."""
    for m in body.get("messages") or []:
        if m.get("role") == "user":
            hit = _INPUT.search(m.get("content", ""))
            if hit:
                return json.loads(hit.group(1)), hit.group(2).strip()
    raise AssertionError("request without an input block")


@lru_cache(maxsize=64)
def rules_graph(text: str) -> CaseGraph:
    return extract(text, case_id="scripted")


def clip(text: str | None, n: int = 400) -> str | None:
    """A verbatim prefix of ``text`` of at most ``n`` characters, cut at a word boundary."""
    if text is None or len(text) <= n:
        return text
    return text[:n].rsplit(" ", 1)[0]


def time_phrase(text: str, age: int | None) -> str | None:
    """The first temporal expression in ``text`` that the temporal engine maps, copied verbatim."""
    for pattern, _kind in _PATTERNS:
        m = pattern.search(text)
        if m and parse_expression(m.group(0), age=age) is not None:
            return m.group(0)
    return None


def _join(items: list[str]) -> str:
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def _quoted(text: str, evidence: list[Evidence | None]) -> str | None:
    """The source text an extraction read structured findings from: from the first evidence span to the last."""
    spans = [(e.start, e.end) for e in evidence if e is not None and e.start is not None and e.end is not None]
    if not spans:
        return None
    return text[min(a for a, _ in spans):max(b for _, b in spans)]


def extract_case(inp: dict[str, Any]) -> dict[str, Any]:
    text = inp["text"]
    g = rules_graph(text)
    d, values = g.demographics, g.test_results.values
    labs = [v.evidence for v in values if v.evidence is not None and v.evidence.section == "labs"]
    other = [v.evidence for v in values if v.evidence is not None and v.evidence.section != "labs"]
    return {
        "age": d.age,
        "sex": d.sex.value,
        "ethnicity": d.ethnicity,
        "occupation": d.occupation,
        "family_structure": d.family_structure,
        "family_history": [
            {
                "member": f.member,
                "condition": f.condition,
                "evidence_text": clip(f.evidence_text or f.condition),
            }
            for f in g.family_history
        ],
        "tests": {
            "labs": clip(_quoted(text, labs), 1900),
            "imaging": None,
            "mental_status": clip(_quoted(text, [g.mental_status.evidence]), 1900),
            "other": clip(_quoted(text, other), 900),
        },
    }


def _status_word(d: Diagnosis) -> str:
    """A diagnosis' certainty and temporality in the extraction prompt's status words."""
    if d.certainty != Certainty.confirmed:
        return d.certainty.value
    return "historical" if d.temporality == Temporality.past else "current"


def extract_diagnoses(inp: dict[str, Any]) -> dict[str, Any]:
    g = rules_graph(inp["text"])
    return {
        "diagnoses": [
            {
                "label": d.label,
                "status": _status_word(d),
                "specifiers": list(d.specifiers),
                "evidence_text": clip(d.evidence_text or d.label),
            }
            for d in g.diagnoses
            if d.certainty != Certainty.ruled_out
        ]
    }


def extract_symptoms(inp: dict[str, Any]) -> dict[str, Any]:
    g = rules_graph(inp["text"])
    out = []
    for s in g.symptoms:
        if not s.asserted:
            continue
        item: dict[str, Any] = {
            "headword": s.headword,
            "current": s.current_symptom,
            "pattern": None,
            "evidence_text": clip(s.evidence_text or s.headword),
        }
        if inp.get("steb", True):
            item["contexts"] = [c.model_dump() for c in s.contexts]
            item["episode"] = None
        else:
            item["contexts"] = []
            item["episode"] = clip(s.evidence_text)
        out.append(item)
    return {"symptoms": out}


def extract_treatments(inp: dict[str, Any]) -> dict[str, Any]:
    g = rules_graph(inp["text"])
    return {
        "treatments": [
            {
                "name": t.name,
                "type": t.type.value,
                "dose": t.dose,
                "route": t.route.value if t.route else None,
                "frequency": t.frequency,
                "status": t.status.value,
                "stop_reason": t.discontinued_reason.split(" (")[0] if t.discontinued_reason else None,
                "outcome": None,
                "evidence_text": clip(t.evidence_text or t.name),
            }
            for t in g.treatments
        ]
    }


def extract_visit(inp: dict[str, Any]) -> dict[str, Any]:
    text = inp["text"]
    v = rules_graph(text).visit_event
    sents = sentences(text)
    episode = next(
        (
            s.text
            for s in sents
            if s.section == "hpi" and re.search(r"\b(?:presented|brought|admitted|referred)\b", s.text)
        ),
        None,
    )
    pathway = next((s.text for s in sents if s.section == "plan"), None)
    return {
        "setting": v.setting.value,
        "arrival_mode": v.arrival_mode.value,
        "legal_status": v.legal_status.value,
        "reason_for_visit": clip(v.reason_for_visit, 250),
        "safety_flags": [f.value for f in v.safety_flags],
        "source_of_information": list(v.source_of_information),
        "visit_episode": clip(episode, 500),
        "pathway": clip(pathway, 250),
    }


def extract_history(inp: dict[str, Any]) -> dict[str, Any]:
    g = rules_graph(inp["text"])
    return {
        "past_history": [
            {
                "condition": p.condition,
                "status": p.status.value,
                "evidence_text": clip(p.evidence_text or p.condition),
            }
            for p in g.past_history
        ]
    }


def extract_timeline(inp: dict[str, Any]) -> dict[str, Any]:
    items = []
    for it in inp["items"]:
        ev = it.get("evidence")
        phrase = time_phrase(ev, inp.get("age")) if ev else None
        eps = []
        if phrase:
            eps.append({"expression": phrase, "offset": None, "span": None, "unit": None, "ongoing": False})
        items.append({"id": it["id"], "episodes": eps})
    return {"items": items}


def extract_causal(inp: dict[str, Any]) -> dict[str, Any]:
    ids = {i["id"] for i in inp["items"]}
    g = rules_graph(inp["text"])
    return {
        "edges": [
            {"source": e.source, "target": e.target, "evidence_text": clip(e.evidence_text)}
            for e in g.edges
            if e.type == RelationType.INDUCES and e.evidence_text and e.source in ids and e.target in ids
        ]
    }


def perturb_demographics(inp: dict[str, Any]) -> dict[str, Any]:
    eth, occ = inp.get("ethnicity_options") or [], inp.get("occupation_options") or []
    return {"ethnicity": eth[-1] if eth else None, "occupation": occ[0] if occ else None}


_STEB_POOL = {
    "situation": [
        "during an ordinary week with a change in daily routine",
        "while settling into a new schedule",
        "on an unremarkable afternoon at home",
    ],
    "thought": [
        "that something bad was about to happen",
        "that others were judging each move",
        "that things would not improve",
    ],
    "emotion": ["uneasy", "overwhelmed", "tense"],
    "behavior": ["kept to a quiet room", "put off usual tasks", "sought reassurance from a relative"],
}


def perturb_steb(inp: dict[str, Any]) -> dict[str, Any]:
    frames = []
    for k, fr in enumerate(inp["frames"]):
        frames.append({f: (_STEB_POOL[f][k % 3] if f in fr else None) for f in _STEB_POOL})
    return {"frames": frames}


def perturb_visit(inp: dict[str, Any]) -> dict[str, Any]:
    sc = inp["scaffold"]
    return {
        **sc,
        "reason_for_visit": "concerns raised by people close to the patient"
        if inp.get("reason_for_visit")
        else None,
        "visit_episode": "The patient arrived after a period of mounting difficulty at home."
        if inp.get("visit_episode")
        else None,
    }


def generate_lead(inp: dict[str, Any]) -> dict[str, Any]:
    who = " ".join(
        x
        for x in [
            f"{inp['age']}-year-old" if inp.get("age") is not None else "",
            inp.get("ethnicity") or "",
            inp["noun"],
        ]
        if x
    )
    s = f"The patient is a {who}"
    if inp.get("occupation"):
        s += f" working as a {inp['occupation']}"
    s += f", seen at {inp['setting']}"
    extra = ", ".join(x for x in [inp.get("arrival"), inp.get("legal_status")] if x)
    if extra:
        s += f", {extra}"
    s += "."
    if inp.get("visit_episode"):
        s += " " + inp["visit_episode"].rstrip(".") + "."
    return {"text": s}


def generate_block(inp: dict[str, Any]) -> dict[str, Any]:
    when = inp.get("when") or ""
    lead = f"{when[:1].upper()}{when[1:]}, the patient" if when else "The patient"
    kind = inp["kind"]
    out: list[str] = []
    if kind == "episode":
        out.append(f"{lead} reported {_join([s['headword'] for s in inp['symptoms']])}.")
        for s in inp["symptoms"]:
            for fr in s["contexts"]:
                if fr.get("situation"):
                    out.append(f"This arose {fr['situation'].rstrip('.')}.")
                if fr.get("thought"):
                    out.append(f"The patient thought {fr['thought'].rstrip('.')}.")
                if fr.get("emotion"):
                    out.append(f"The patient felt {fr['emotion'].rstrip('.')}.")
                if fr.get("behavior"):
                    out.append(f"The patient {fr['behavior'].rstrip('.')}.")
    elif kind == "regimen":
        meds = [
            " ".join(x for x in [t["name"], t.get("dose"), t.get("frequency")] if x)
            for t in inp["treatments"]
        ]
        out.append(f"{lead} was treated with {_join(meds)}.")
    elif kind == "induces":
        out.append(f"The {_join(inp['effects'])} developed as a consequence of {inp['cause']}.")
    else:
        out.append(f"{lead} had a history of {inp['history']['condition']}.")
    dx = inp.get("diagnosis")
    if dx and (not dx.get("stated_before") or dx["label"] in inp["must_mention"]):
        out.append(f"A diagnosis of {dx['label']} was made.")
    return {"text": " ".join(out)}


def generate_closing(inp: dict[str, Any]) -> dict[str, Any]:
    out: list[str] = []
    if inp["past_history"]:
        out.append(f"Past history is notable for {_join([p['condition'] for p in inp['past_history']])}.")
    if inp["family_history"]:
        fam = [f"{f['condition']} in a {f['member']}" for f in inp["family_history"]]
        out.append(f"Family history is significant for {_join(fam)}.")
    for label in inp["diagnoses"]:
        out.append(f"A diagnosis of {label} was made.")
    for name, value in inp["tests"].items():
        out.append(f"{name.capitalize()}: {value.rstrip('.')}.")
    if inp.get("mental_status"):
        out.append(f"On mental status examination, {inp['mental_status'].rstrip('.')}.")
    if inp.get("disposition"):
        out.append(f"Disposition: {inp['disposition'].rstrip('.')}.")
    return {"text": " ".join(out) or "No further history."}


DEFAULTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "extract_case": extract_case,
    "extract_diagnoses": extract_diagnoses,
    "extract_symptoms": extract_symptoms,
    "extract_treatments": extract_treatments,
    "extract_visit": extract_visit,
    "extract_history": extract_history,
    "extract_timeline": extract_timeline,
    "extract_causal": extract_causal,
    "perturb_demographics": perturb_demographics,
    "perturb_steb": perturb_steb,
    "perturb_visit": perturb_visit,
    "generate_lead": generate_lead,
    "generate_block": generate_block,
    "generate_closing": generate_closing,
}


class Responder:
    """``(request body) -> reply dict``; counts calls per template (``attempts``) for overrides."""

    def __init__(self, overrides: dict[str, Override] | None = None, *, chatty: bool = False) -> None:
        self.overrides = dict(overrides or {})
        self.chatty = chatty
        self.attempts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        tid, _ = template_of(body)
        assert tid is not None, "request without a template marker"
        inp, feedback = request_input(body)
        with self._lock:
            n = self.attempts.get(tid, 0)
            self.attempts[tid] = n + 1
        if tid in self.overrides:
            return self.overrides[tid](inp, feedback, n)
        reply = DEFAULTS[tid](inp)
        if self.chatty and tid.startswith("generate_"):
            reply["text"] = (
                f"Sure! Here is the paragraph:\n\n**{reply['text']}**\n\nLet me know if you need more."
            )
        return reply
