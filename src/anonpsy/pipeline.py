"""The de-identification pipeline: text → graph (E) → perturbed graph (P) → text (D), with audits.

``deid_text`` is pure apart from the optional LLM backend (which talks only to the configured endpoint). It never
writes files; the CLI writes its results atomically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from anonpsy.audit import Audit
from anonpsy.graph import CaseGraph

BACKENDS = ("rules", "llm")


class Leak(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(description="Identifier class: PERSON, LOCATION, DATE, AGE, NUMBER, ANCHOR, …")
    source_start: int
    source_end: int
    output_start: int
    output_end: int


class LeakAudit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checked: int = 0
    leaks: list[Leak] = Field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.leaks


@dataclass
class DeidResult:
    case_id: str
    original: CaseGraph
    perturbed: CaseGraph
    text: str
    audit: Audit
    leaks: LeakAudit
    stats: dict[str, Any] = field(default_factory=dict)

    def ok(self, allow_leaks: bool = False) -> bool:
        return not self.audit.violations and (allow_leaks or self.leaks.clean)


# ---------------------------------------------------------------------------------------------------------------
# Leak audit

LEAK_TYPES = {
    "PERSON": "PERSON", "LOCATION": "LOCATION", "ADDRESS": "LOCATION", "ORGANIZATION": "ORGANIZATION",
    "PHARMACY": "ORGANIZATION", "DATE": "DATE", "BIRTH_DATE_TIME": "DATE", "DEATH_DATE_TIME": "DATE",
    "AGE": "AGE", "TELEPHONE_NUMBER": "NUMBER", "FAX_NUMBER": "NUMBER", "EMAIL": "CONTACT", "URL": "CONTACT",
    "MEDICAL_RECORD_NUMBER": "NUMBER", "SSN_OR_TAXPAYER": "NUMBER", "HEALTH_PLAN_ID": "NUMBER",
    "ACCOUNT_NUMBER": "NUMBER", "ZIP_CODE": "LOCATION", "IP_ADDRESS": "NUMBER", "LICENSE_NUMBER": "NUMBER",
    "DEVICE_IDENTIFIER": "NUMBER", "VEHICLE_IDENTIFIER_US": "NUMBER", "VEHICLE_LICENSE_PLATE_US": "NUMBER",
    "CERTIFICATE_NUMBER": "NUMBER", "FIN": "NUMBER", "CREDIT_DEBIT_NUMBER": "NUMBER", "GUID": "NUMBER",
}
# Long numbers are identifying unless they are a dose or a measurement (clinical content kept on purpose): a mass,
# a volume ('1000 cc of saline', '2 L'), units, energy, a count of steps or of cells ('3200 red blood cells' in a
# CSF sample), a percentage or a rate.
_LONG_NUMBER = re.compile(r"(?<![\w.,])\d{4,}(?![\w.,])(?!\s*(?:mg|mcg|µg|ug|g|mL|ml|cc\b|L\b|lit(?:er|re)s?\b|units?|"
                          r"IU|mmol|mEq|kcal|cal|steps|ng|pg|%|/|(?:red|white)\s+(?:blood\s+)?cells\b|cells\b|"
                          r"RBCs?\b|WBCs?\b|platelets\b))")


_DIGITS = re.compile(r"\d+")


@lru_cache(maxsize=1024)  # one per number of at most three digits: bounded by what it is keyed on
def _age_phrase(n: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?<!\w)(?:{n}[- ](?:year|yr)s?[- ]old|{n} (?:years?|yrs?) of age|{n} ?(?:yo|y/o|y\.o\.)"
        rf"|(?:age|aged|age of|at) {n})(?!\w)",
        re.I,
    )


def leak_audit(
    source: str, output: str, *, exclude: set[str] | None = None, patient_age: int | None = None,
    age_shift: int = 0, source_spans: list[Any] | None = None,
) -> LeakAudit:
    """Source identifiers (names, places, dates, ages, long numbers, …) that appear verbatim in the output.

    ``exclude`` lists surface strings that may legitimately appear (e.g. an age the rules had to keep) — each such
    string must itself be recorded in the perturbation audit by the caller.
    """
    from anonpsy.phi.analyzer import analyze

    exclude = {e.lower() for e in (exclude or set())}
    ages: dict[str, tuple[int, int]] = {}
    seen: dict[str, tuple[str, int, int]] = {}
    for span in analyze(source) if source_spans is None else source_spans:
        kind = LEAK_TYPES.get(span.type)
        if kind is None:
            continue
        surface = source[span.start:span.end].strip()
        if kind == "AGE":
            num = re.search(r"\d{1,3}", surface)
            if num is None:
                continue
            value = int(num.group(0))
            # Every age of the patient moved with the perturbed present age; a coincidence is not a leak.
            if age_shift != 0 and patient_age is not None and (
                value <= patient_age or value == patient_age + age_shift
            ):
                continue
            ages.setdefault(num.group(0), (span.start, span.end))
            continue
        if len(surface) < 3:
            continue
        seen.setdefault(surface.lower(), (kind, span.start, span.end))
    for m in _LONG_NUMBER.finditer(source):
        seen.setdefault(m.group(0), ("NUMBER", m.start(), m.end()))
    from anonpsy.perturb.anchors import find_anchors

    anchors: dict[str, tuple[int, int]] = {}
    for anc in find_anchors(source):
        surface = source[anc.start:anc.end].strip()
        if len(surface) >= 3 and surface.lower() not in seen:
            anchors.setdefault(surface, (anc.start, anc.end))
    report = LeakAudit(checked=len(seen) + len(ages) + len(anchors))
    # Anchors are proper nouns: compared case-sensitively so a heading word ("Visit") does not match "visit".
    for surface, (a_start, a_end) in sorted(anchors.items(), key=lambda kv: kv[1]):
        at = _find_word(output, surface)
        if at >= 0:
            report.leaks.append(Leak(kind="ANCHOR", source_start=a_start, source_end=a_end,
                                     output_start=at, output_end=at + len(surface)))
    low_out = output.lower()
    # Every age phrase holds its number as a whole run of digits: a number the output never writes so has no
    # phrase to find, and no pattern to compile.
    numbers = set(_DIGITS.findall(output)) if ages else set()
    for number, (a_start, a_end) in sorted(ages.items(), key=lambda kv: kv[1]):
        hit = _age_phrase(number).search(output) if number in numbers else None
        if hit:
            report.leaks.append(Leak(kind="AGE", source_start=a_start, source_end=a_end, output_start=hit.start(),
                                     output_end=hit.end()))
    wanted = {k: v for k, v in seen.items() if k not in exclude}
    for surface, (kind, s, e) in sorted(wanted.items(), key=lambda kv: kv[1][1]):
        at = _find_word(low_out, surface)
        if at >= 0:
            report.leaks.append(Leak(kind=kind, source_start=s, source_end=e, output_start=at,
                                     output_end=at + len(surface)))
    return report


def _is_word_char(ch: str) -> bool:
    """``ch`` is what the regular expression ``\\w`` matches in a str pattern (alphanumeric or underscore)."""
    return ch.isalnum() or ch == "_"


def _find_word(text: str, surface: str) -> int:
    """Where ``surface`` first occurs in ``text`` with no word character just before or after it, or -1: the match
    of ``(?<!\\w)surface(?!\\w)``, by plain string search (the surfaces are new with every note, and compiling a
    pattern for each would cost more than the search and push the project's own patterns out of the ``re``
    cache)."""
    at = text.find(surface)
    while at >= 0:
        end = at + len(surface)
        if (at == 0 or not _is_word_char(text[at - 1])) and (end == len(text) or not _is_word_char(text[end])):
            return at
        at = text.find(surface, at + 1)
    return -1


# ---------------------------------------------------------------------------------------------------------------


def deid_text(
    text: str,
    *,
    seed: int = 0,
    backend: str = "rules",
    case_id: str = "case",
    llm: Any = None,
    options: dict[str, Any] | None = None,
) -> DeidResult:
    """De-identify one narrative: extraction, attribute and context perturbation, generation, audits."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    opts = options or {}
    if backend == "llm":
        from anonpsy.llm_backend import deid_with_llm

        result: DeidResult = deid_with_llm(text, seed=seed, case_id=case_id, llm=llm, options=opts)
        return result
    return _deid_rules(text, seed, case_id, opts)


def _deid_rules(text: str, seed: int, case_id: str, opts: dict[str, Any]) -> DeidResult:
    """The rules backend of :func:`deid_text`."""
    from anonpsy.extract import extract
    from anonpsy.extract.assembly.build import withhold_identified
    from anonpsy.generate.faithful import generate
    from anonpsy.perturb import check, perturb_attributes
    from anonpsy.perturb.contexts import SourceIdentifiers, perturb_contexts
    from anonpsy.temporal import normalize

    identifiers = SourceIdentifiers(text)
    graph = normalize(withhold_identified(extract(text, case_id=case_id), identifiers.find))
    perturbed, audit = perturb_attributes(graph, seed)  # checked once, below, after the context step
    perturbed = perturb_contexts(perturbed, seed=seed, audit=audit, source_text=text,
                                 retro=not opts.get("no_retro", False), identifiers=identifiers)
    audit.violations = [v.model_dump() for v in check(graph, perturbed)]
    gen = generate(perturbed, seed=seed, source=text, round_trip=not opts.get("no_round_trip", False))
    audit.generation = gen.record
    audit.violations += [v.model_dump() for v in gen.violations]
    out = gen.text
    age0, age1 = graph.demographics.age, perturbed.demographics.age
    shift = (age1 - age0) if age0 is not None and age1 is not None else 0
    leaks = leak_audit(text, out, patient_age=age0, age_shift=shift, source_spans=identifiers.spans)
    return DeidResult(case_id=case_id, original=graph, perturbed=perturbed, text=out, audit=audit, leaks=leaks)



# ---------------------------------------------------------------------------------------------------------------
# Long-running processes

#: A short synthetic note (written for this purpose, no real patient) that reads every kind of section, so that
#: de-identifying it loads every table the rules backend uses.
_PREPARE_NOTE = """CHIEF COMPLAINT: Worry and poor sleep.
HISTORY OF PRESENT ILLNESS: The patient is a 47-year-old man who works as a bus driver. He reports feeling anxious
and irritable for the past 2 months after he lost his job. He denies suicidal ideation. He was started on buspirone
10 mg twice daily 3 weeks ago.
PAST PSYCHIATRIC HISTORY: Panic disorder at age 30, treated with paroxetine, stopped because of weight gain.
FAMILY HISTORY: His mother had major depressive disorder.
MENTAL STATUS EXAMINATION: Appearance: casually dressed. Speech: normal rate. Mood: "stressed." Affect: anxious.
Thought process: linear. Thought content: no suicidal ideation. Perception: no hallucinations. Cognition: alert and
oriented x3. Insight: fair. Judgment: fair.
LABORATORY DATA: TSH 2.1, GAD-7 score 14.
ASSESSMENT: Generalized anxiety disorder. Rule out alcohol use disorder.
PLAN: Increase buspirone to 15 mg twice daily. Follow up in 4 weeks.
"""


_PREPARED = False


def prepare_process() -> None:
    """Ready a long-running process for a batch of notes: load every table the rules backend reads (by
    de-identifying a short synthetic note), then move everything loaded out of the garbage collector's way
    (:func:`gc.freeze`).

    The rules, lexicons and automata live as long as the process, yet without this every full collection walks
    them again; on a batch of new notes that is about a tenth of the CPU time. Outputs do not change. Call it once,
    before the first note (``deid-batch`` does, in each worker); later calls do nothing.
    """
    import gc

    global _PREPARED
    if _PREPARED:
        return
    _PREPARED = True
    from anonpsy.extract.assertion.context import default_engine
    from anonpsy.extract.mentions.diagnoses import prepare_tables

    _deid_rules(_PREPARE_NOTE, 0, "prepare", {})  # the rules backend, whatever backend the batch uses
    default_engine().prepare()  # the trigger indexes of the kinds of concept the note above did not name
    prepare_tables()  # the tables the note above did not reach
    gc.collect()
    gc.freeze()
