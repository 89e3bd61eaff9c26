"""The rules backend of extraction E: narrative text → case graph.

Each step is a small pure function over the segmented text; the lexicons, ConText triggers, DSM aliases and
treatment classes come from ``rules/``. The steps, in order: :mod:`~anonpsy.extract.sections` (sections,
sentences, clauses), :mod:`~anonpsy.extract.mentions` (what is named where), :mod:`~anonpsy.extract.assertion`
(whether and whose it is), and :mod:`~anonpsy.extract.assembly` (nodes, durations, edges, STEB frames, the
visit). The result is normalised by the core temporal engine by the caller.
"""

from __future__ import annotations

import re

from anonpsy.extract.assembly.accumulator import Accumulator
from anonpsy.extract.assembly.nodes import add_diagnoses, add_symptoms, add_treatments, present_today
from anonpsy.extract.assembly.relations import dedupe_edges, derive_relations
from anonpsy.extract.assembly.visit import extract_visit
from anonpsy.extract.mentions.demographics import (
    extract_age,
    extract_ethnicity,
    extract_family_structure,
    extract_occupation,
    extract_sex,
)
from anonpsy.extract.mentions.family import family_conditions
from anonpsy.extract.mentions.time import time_mentions, visit_date
from anonpsy.extract.sections import Sentence, sentences, title_line
from anonpsy.graph import (
    CaseGraph,
    Demographics,
    TestResults,
)


def extract(text: str, *, case_id: str = "case") -> CaseGraph:
    """Rules-backend extraction of a case graph from narrative text (not yet temporally normalised).

    >>> g = extract("A 34-year-old woman reports low mood for the past 3 weeks. She denies suicidal ideation.")
    >>> [(s.headword, s.current_symptom) for s in g.symptoms]
    [('depressed mood', True)]
    """
    sents = sentences(text)
    age = extract_age(sents)
    sex = extract_sex(text)
    visit = visit_date(text)
    acc = Accumulator(index_is_admission=bool(re.search(r"\bdischarge summary\b", title_line(text), re.I)))
    labs: list[str] = []
    mse: list[str] = []
    other_tests: list[str] = []

    for s in sents:
        times = time_mentions(s.text, age=age, visit=visit)
        if s.section == "mse":
            mse.append(_verbatim(text, s))
        elif s.section == "labs":
            labs.append(_verbatim(text, s))
        elif re.search(r"\b(?:PHQ-9|GAD-7|MMSE|MoCA|HAM-?D|MADRS|YMRS|Y-BOCS|PCL-5|AUDIT|CIWA|COWS|BDI|PANSS|"
                       r"EPDS|lithium level|level (?:of|was))\b[^.]{0,30}\d", s.text, re.I):
            other_tests.append(_verbatim(text, s))
        if s.section == "family_history":
            for member, cond in family_conditions(s.text):
                acc.add_family(member, cond, s.text.strip())
        add_symptoms(s, times, acc)
        add_diagnoses(s, times, acc)
        add_treatments(s, times, acc)
    present_today(acc)
    derive_relations(text, sents, acc)

    current = {sx.headword for sx in acc.symptoms.values() if sx.current_symptom and sx.headword in acc.flaggable}
    visit_event = extract_visit(text, sents, current)
    tests = TestResults(labs=_field_text(labs), mental_status=_field_text(mse), other=_field_text(other_tests))
    return CaseGraph(
        case_id=case_id,
        demographics=Demographics(age=age, sex=sex, ethnicity=extract_ethnicity(sents),
                                  occupation=extract_occupation(sents),
                                  family_structure=extract_family_structure(sents)),
        test_results=tests,
        family_history=acc.family,
        diagnoses=list(acc.diagnoses.values()),
        symptoms=list(acc.symptoms.values()),
        treatments=list(acc.treatments.values()),
        past_history=list(acc.past.values()),
        visit_event=visit_event,
        durations=acc.durations,
        edges=dedupe_edges(acc.edges),
    )


def _verbatim(text: str, s: Sentence) -> str:
    """A sentence copied into a test-results field. When the source ran it on after a comma ("intact.,Assets:
    include ..."), its first word is lowered: in the source it reads as a mid-sentence capital, i.e. a name."""
    out = s.text.strip()
    before = text[:s.start].rstrip()
    if before.endswith((",", ":")) and re.match(r"[A-Z][a-z]+\b", out):
        out = out[0].lower() + out[1:]
    return out


def _field_text(parts: list[str]) -> str | None:
    """Sentences joined into one test-results field: list and header artefacts (".,", ":,") removed, and the
    first word in lower case when it is an ordinary capitalised word (the field is quoted inside a sentence:
    "On mental status examination, attitude was cooperative")."""
    # A capitalised word written after a comma ("cooperative.,Appearance") reads as a proper noun; keep it in
    # lower case so the field never carries what looks like a name.
    text = " ".join(re.sub(r"\s+", " ", p).strip() for p in parts if p.strip())
    text = re.sub(r"([,:;]\s*)([A-Z][a-z]+)\b", lambda m: m.group(1) + m.group(2).lower(), text)
    text = re.sub(r"\.\s*,\s*", ". ", text)
    text = re.sub(r":\s*,\s*", ": ", text)
    text = re.sub(r"\s+([,.;:])", r"\1", text).strip(" ,")
    if not text:
        return None
    first = re.match(r"[A-Z][a-z]+\b", text)
    if first and not re.match(r"(?:Mr|Mrs|Ms|Dr|I)\b", text):
        text = text[0].lower() + text[1:]
    return text
