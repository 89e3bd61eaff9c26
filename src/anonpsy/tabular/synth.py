"""Zero-shot synthetic questionnaire tables: no real respondent's data is read.

:func:`synthesize` draws one persona per row from the priors (:mod:`anonpsy.tabular.personas`) and answers every
item of the instrument with one of two backends:

* ``rules`` (embedded default, no model): the latent-severity graded response model of
  :func:`anonpsy.tabular.personas.respond` -- a documented baseline;
* ``llm``: an item loop against any OpenAI-compatible server through :class:`anonpsy.llm.LLMClient`. For each
  item the model sees the instrument (construct, time frame, response scale), the persona (levels with their
  descriptions), the top-k passages of the user's knowledge base retrieved for that item, and the persona's earlier
  answers in order (the loop's memory). The answer is the ``value`` of a JSON reply whose schema allows exactly
  the instrument's response codes (structured output, validated, one re-ask, then a typed error) -- never a number
  picked out of prose. Rows run in parallel up to the client's concurrency; items within a row run in order.

The table has the columns ``sex, age, item_1 ... item_n``: sex in the priors' coding, items in the instrument's
codes. :func:`provenance` records everything needed to reproduce and explain it: instrument and priors versions
and digests, backend, seed, the persona of every row, the template and the knowledge-base passages (source, lines,
score; never their text) used for every item.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import hashlib
import io
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from anonpsy import __version__, errors
from anonpsy.errors import AnonpsyError
from anonpsy.llm.errors import LLMError
from anonpsy.llm.prompts import PromptTemplate, load_template
from anonpsy.tabular.instruments import Instrument
from anonpsy.tabular.kb import Hit, KnowledgeBase
from anonpsy.tabular.personas import Persona, PersonaPriors, respond, sample_persona

Backend = Literal["rules", "llm"]
TEMPLATE_ID = "tabular_item"


class JSONClient(Protocol):
    """What the llm backend needs from :class:`anonpsy.llm.LLMClient`."""

    def complete_json(self, template: Any, variables: dict[str, Any], *, operator: str, seed: int | None = None,
                      case_id: str | None = None) -> Any: ...


@dataclass
class SynthResult:
    instrument: Instrument
    priors: PersonaPriors
    backend: Backend
    seed: int
    personas: list[Persona]
    answers: list[list[int]]
    retrieval: dict[str, list[Hit]] = field(default_factory=dict)
    template: str | None = None
    kb: KnowledgeBase | None = None
    calls: int = 0

    @property
    def columns(self) -> list[str]:
        return ["sex", "age", *self.instrument.columns]

    def rows(self) -> list[list[int | str]]:
        return [[self.priors.sex_code(p.sex), p.age, *a] for p, a in zip(self.personas, self.answers, strict=True)]

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        w.writerows(self.rows())
        return buf.getvalue()


def call_seed(seed: int, row: int, item: int) -> int:
    """A stable per-call seed for the language model."""
    digest = hashlib.sha256(f"{seed}:{row}:{item}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def item_template(instrument: Instrument) -> PromptTemplate:
    """The ``tabular_item`` template with its reply schema narrowed to the instrument's response codes."""
    base = load_template(TEMPLATE_ID)
    assert base.reply_schema is not None
    schema = copy.deepcopy(base.reply_schema)
    schema["properties"]["value"] = {"type": "integer", "enum": list(instrument.values)}
    return dataclasses.replace(base, reply_schema=schema)


def _persona_payload(priors: PersonaPriors, persona: Persona) -> dict[str, Any]:
    out: dict[str, Any] = {"sex": persona.sex, "age": persona.age}
    for attr_id, level_id in persona.attributes().items():
        attr = priors.attribute(attr_id)
        level = attr.level(level_id)
        assert level is not None
        out[attr_id] = {"level": level_id, "meaning": level.description}
    return out


def retrieve_for_items(instrument: Instrument, kb: KnowledgeBase | None, k: int) -> dict[str, list[Hit]]:
    """Top-``k`` passages per item (query: the construct and the item stem); the same for every row."""
    if kb is None or k <= 0:
        return {}
    return {item.id: kb.search(f"{instrument.construct_name}: {item.stem}", k) for item in instrument.items}


def _llm_row(client: JSONClient, template: PromptTemplate, instrument: Instrument, priors: PersonaPriors,
             persona: Persona, retrieval: dict[str, list[Hit]], seed: int) -> list[int]:
    scale = [{"value": p.value, "label": p.label} for p in instrument.scale]
    header = {"name": instrument.name, "construct": instrument.construct_name, "time_frame": instrument.timeframe,
              "response_scale": scale}
    respondent = _persona_payload(priors, persona)
    memory: list[dict[str, Any]] = []
    answers: list[int] = []
    for j, item in enumerate(instrument.items, 1):
        payload = {
            "questionnaire": header,
            "respondent": respondent,
            "clinical_background": [{"source": h.passage.ref, "text": h.passage.text}
                                    for h in retrieval.get(item.id, [])],
            "earlier_answers": memory,
            "current_item": {"number": j, "text": item.stem},
        }
        try:
            reply = client.complete_json(template, {"input": json.dumps(payload, ensure_ascii=False),
                                                    "feedback": ""},
                                         operator="generation", seed=call_seed(seed, persona.row, j),
                                         case_id=f"row{persona.row}")
        except LLMError as exc:
            raise AnonpsyError(exc.code, f"row {persona.row + 1} item {j}: {exc.message}", exc.location) from None
        value = reply.get("value") if isinstance(reply, dict) else None
        if isinstance(value, bool) or value not in instrument.values:
            raise AnonpsyError(errors.T104_LLM_ANSWER,
                               f"row {persona.row + 1} item {j}: the reply's value is not one of the codes "
                               f"{list(instrument.values)}")
        answers.append(int(value))
        memory.append({"number": j, "item": item.stem, "answer": int(value), "label": instrument.label(int(value))})
    return answers


def synthesize(
    instrument: Instrument,
    n: int,
    *,
    priors: PersonaPriors,
    seed: int = 0,
    backend: Backend = "rules",
    kb: KnowledgeBase | None = None,
    k: int = 3,
    client: JSONClient | None = None,
    workers: int = 1,
) -> SynthResult:
    """Generate ``n`` rows (see the module docstring). Deterministic given the seed (and, for ``llm``, the
    server's own determinism under a fixed per-call seed)."""
    if n < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the number of rows must be at least 1", "-n")
    personas = [sample_persona(priors, seed, row, instrument) for row in range(n)]
    if backend == "rules":
        answers = [respond(priors, p, instrument, seed) for p in personas]
        return SynthResult(instrument, priors, backend, seed, personas, answers, kb=kb)
    if client is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the llm backend needs a language-model client (--llm-config)",
                           "--backend")
    template = item_template(instrument)
    retrieval = retrieve_for_items(instrument, kb, k)

    def one(p: Persona) -> list[int]:
        return _llm_row(client, template, instrument, priors, p, retrieval, seed)

    if workers <= 1:
        answers = [one(p) for p in personas]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            answers = list(pool.map(one, personas))
    return SynthResult(instrument, priors, backend, seed, personas, answers, retrieval=retrieval,
                       template=template.ref, kb=kb, calls=n * instrument.n_items)


def _sha256_file_of(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj.model_dump(mode="json", by_alias=True), sort_keys=True).encode()).hexdigest()


def provenance(result: SynthResult, *, out_name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The provenance record written next to a synthetic table (JSON-ready)."""
    inst = result.instrument
    doc: dict[str, Any] = {
        "format": "anonpsy.tabular.synth/v1",
        "anonpsy": __version__,
        "table": out_name,
        "synthetic": True,
        "real_data_used": False,
        "instrument": {"id": inst.id, "version": inst.version, "short_name": inst.short_name,
                       "sha256": _sha256_file_of(inst), "codes": list(inst.values),
                       "items": [{"column": c, "id": it.id} for c, it in zip(inst.columns, inst.items, strict=True)]},
        "priors": {"id": result.priors.id, "version": result.priors.version, "sha256": _sha256_file_of(result.priors),
                   "sex_coding": result.priors.sex_coding()},
        "backend": result.backend,
        "seed": result.seed,
        "rows": len(result.personas),
        "columns": result.columns,
        "personas": [p.as_dict() for p in result.personas],
    }
    if result.backend == "llm":
        doc["llm"] = {"template": result.template, "calls": result.calls}
    if result.kb is not None:
        doc["knowledge_base"] = {"retriever": result.kb.retriever, "model": result.kb.model_name,
                                 "files": result.kb.digests, "passages": len(result.kb.passages)}
        if result.retrieval:
            doc["retrieval"] = {item_id: [h.record() for h in hits] for item_id, hits in result.retrieval.items()}
    if extra:
        doc.update(extra)
    return doc


def summary_line(result: SynthResult, path: str) -> str:
    scores = [result.instrument.score(list(a)) for a in result.answers]
    above = sum(1 for s in scores if s.above_cutoff)
    return (f"{len(result.answers)} rows x {len(result.columns)} columns -> {path} ({result.backend} backend, "
            f"{above / len(scores):.1%} at or above the cut-off {result.instrument.cutoff.min})")


def rows_as_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()
