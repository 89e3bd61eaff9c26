"""The two generation backends: a deterministic template writer (``rules``, the default) and an
OpenAI-compatible language model (``llm``, prompt ``adapters/prompts/twin_generate.v1.md``).

Both get a :class:`Request`: the target's lines of entities, its sentence count and N style examples (each a
separately anonymized pool document with its own lines). Neither sees the source document, except the ORGD
baseline, whose whole point is to show it.

**rules**: the output follows the nearest example's layout. Output sentence ``t`` of ``n`` sits at the example's
sentence ``t·m/n`` (``m`` example sentences): the example's heading there is written when it changes; a target line
whose source sentence was ``t`` becomes one sentence built from fixed templates per entity type (blanks are left
out) and goes under the example's heading for its type when there is one; any other position reuses the example's
sentence when it is a scaffold sentence, else the other examples' sentence at the same relative place when that is
one, else a shared sentence of the corpus's boilerplate for that heading
(:class:`~anonpsy.twin.textops.Boilerplate`: shared word for word by at least ``floor`` documents, naming no
concept). So every word of a RecordTwin document is either an entity's published name, a template word, or a
sentence that many documents share. Template words are checked never to read as a concept.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from anonpsy.twin.lines import Line, Slot, render_lines
from anonpsy.twin.textops import Boilerplate, StyleSentence

TEMPLATE_ID = "twin_generate"
ORGD_TEMPLATE_ID = "twin_orgd"
OPERATOR = "generation"


@dataclass(frozen=True)
class Example:
    """A style example: its (anonymized) text, its sentences and its lines of entities."""

    doc_id: str
    text: str
    sentences: tuple[StyleSentence, ...]
    lines: tuple[Line, ...]

    def prompt(self) -> dict[str, Any]:
        return {"lines": render_lines(self.lines), "sentences": len(self.sentences), "document": self.text}


@dataclass(frozen=True)
class Request:
    """Everything a writer may use for one synthetic document."""

    doc_id: str
    lines: tuple[Line, ...]
    n_sentences: int
    examples: tuple[Example, ...]
    seed: int
    source_text: str | None = None  # ORGD with the llm backend
    boilerplate: Boilerplate | None = None


class Writer(Protocol):
    name: str

    def write(self, req: Request, feedback: str = "") -> str: ...


# -------------------------------------------------------------------------------------------------------------
# rules

_CLAUSES: dict[str, tuple[str, ...]] = {
    "symptom": ("the patient reports {x}", "there is {x}", "{x} {is} described", "the patient has {x}"),
    "diagnosis": ("the diagnosis is {x}", "the assessment includes {x}", "the working diagnosis is {x}"),
    "medication": ("medications include {x}", "the patient takes {x}", "the patient was given {x}"),
    "therapy": ("treatment includes {x}", "the patient underwent {x}", "the plan includes {x}"),
    "procedure": ("the patient underwent {x}", "{x} {was} performed", "the procedure was {x}"),
    "test": ("{x} {was} checked", "{x} {was} recorded", "results of {x} were reviewed"),
}
_TYPE_ORDER = ("symptom", "diagnosis", "test", "procedure", "medication", "therapy")


def _article(slot: Slot) -> str:
    assert slot.name is not None
    if not slot.general:
        return slot.name
    return ("an " if slot.name[:1].lower() in "aeiou" else "a ") + slot.name


def _join(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def clause(etype: str, slots: Sequence[Slot], rng: random.Random) -> str:
    """One clause naming ``slots`` (all of type ``etype``)."""
    names = list(dict.fromkeys(_article(s) for s in slots))
    tpl = rng.choice(_CLAUSES.get(etype, ("{x} {is} noted",)))
    plural = len(names) > 1
    return tpl.format(x=_join(names), was="were" if plural else "was", **{"is": "are" if plural else "is"})


def line_sentence(line: Line, rng: random.Random) -> str | None:
    """The sentence for one line (None when every slot is a blank)."""
    by_type: dict[str, list[Slot]] = {}
    for s in line.named:
        by_type.setdefault(s.type, []).append(s)
    if not by_type:
        return None
    order = [*_TYPE_ORDER, *sorted(set(by_type) - set(_TYPE_ORDER))]  # a type without clauses gets the default
    parts = [clause(t, by_type[t], rng) for t in order if t in by_type]
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


#: Where a line's sentence goes when the example has such a section: canonical sections per entity type.
_HOME: dict[str, tuple[str, ...]] = {
    "diagnosis": ("assessment",), "medication": ("medications", "plan"), "therapy": ("plan",),
    "procedure": ("plan",),
    "test": ("labs", "exam"), "symptom": ("chief_complaint", "hpi", "ros"),
}


def _home(line: Line, headings: Sequence[str | None]) -> str | None:
    """The example heading a line's sentence belongs under (by its first named entity's type), if any."""
    from anonpsy.twin.extraction import section_name

    named = line.named
    if not named:
        return None
    wanted = _HOME.get(named[0].type, ())
    for sec in wanted:
        for h in headings:
            if h is not None and section_name(h) == sec:
                return h
    return None


class RulesWriter:
    """The deterministic template writer (the embedded default)."""

    name = "rules"

    def write(self, req: Request, feedback: str = "") -> str:
        rng = random.Random(f"{req.seed}:{req.doc_id}")
        example = req.examples[0].sentences if req.examples else ()
        n = max(req.n_sentences, max((ln.sentence for ln in req.lines), default=-1) + 1, 1)
        by_pos = {ln.sentence: ln for ln in req.lines}
        m = len(example)
        headings = list(dict.fromkeys(s.heading for s in example))
        others = [e.sentences for e in req.examples[1:]]
        used: set[int] = set()
        taken: set[str] = set()
        written: set[str] = set()
        paras: dict[str | None, list[str]] = {}
        order: list[str | None] = []
        for t in range(n):
            j = t * m // n if m else -1
            heading = example[j].heading if j >= 0 else None
            sentence: str | None = None
            if t in by_pos:
                sentence = line_sentence(by_pos[t], rng)
                heading = _home(by_pos[t], headings) or heading
            elif j >= 0 and j not in used and example[j].scaffold:
                sentence = example[j].text
                used.add(j)
            else:
                # the same relative place in the other examples, then the corpus's boilerplate for the heading
                sentence = next((o[t * len(o) // n].text for o in others if o and o[t * len(o) // n].scaffold
                                 and o[t * len(o) // n].text not in written), None)
                if sentence is None and req.boilerplate is not None:
                    sentence = req.boilerplate.pick(heading, rng, taken)
            if sentence is None or sentence in written:
                continue
            written.add(sentence)
            if heading not in paras:
                paras[heading] = []
                order.append(heading)
            paras[heading].append(sentence)
        rank = {h: i for i, h in enumerate(headings)}
        order.sort(key=lambda h: rank.get(h, len(rank)))
        blocks = [(f"{h}:\n" if h else "") + " ".join(paras[h]) for h in order]
        return "\n\n".join(blocks).strip() + "\n"


# -------------------------------------------------------------------------------------------------------------
# llm

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*$", re.M)


@dataclass
class LLMWriter:
    """A language model through :class:`anonpsy.llm.LLMClient`; one call per attempt, the reply validated
    against ``schemas/llm/twin_generate.json`` by the client."""

    client: Any
    name: str = "llm"
    workers: int = 1
    calls: int = 0
    templates: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cfg = getattr(self.client, "config", None)
        if self.workers == 1 and cfg is not None:
            self.workers = int(getattr(cfg, "concurrency", 1))

    def write(self, req: Request, feedback: str = "") -> str:
        from anonpsy.llm.prompts import load_template
        from anonpsy.llm_backend.generate_llm import strip_meta
        from anonpsy.llm_backend.steps import input_json

        if req.source_text is not None:
            template = load_template(ORGD_TEMPLATE_ID)
            payload: dict[str, Any] = {"document": req.source_text, "sentences": req.n_sentences}
        else:
            template = load_template(TEMPLATE_ID)
            payload = {"examples": [e.prompt() for e in req.examples],
                       "target": {"lines": render_lines(req.lines), "sentences": req.n_sentences}}
        self.templates[template.id] = template.ref
        self.calls += 1
        reply = self.client.complete_json(template, {"input": input_json(payload), "feedback": feedback},
                                          operator=OPERATOR, seed=req.seed, case_id=req.doc_id)
        text = reply.get("text") if isinstance(reply, dict) else None
        if not isinstance(text, str):
            return ""
        return strip_meta(_FENCE.sub("", text)).strip() + "\n"
