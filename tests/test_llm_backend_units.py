"""Units of the LLM backend: templates and schemas, evidence checks, rewrite filters, meta-text, round trip."""

from __future__ import annotations

import json
from pathlib import Path

import click
import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.audit import Audit
from anonpsy.graph import STEB, CaseGraph, Diagnosis, Symptom, Unit
from anonpsy.llm import load_template
from anonpsy.llm_backend import ablation_options, llm_ablation_options
from anonpsy.llm_backend.evidence import SourceText, clean_quote, invented
from anonpsy.llm_backend.extract_llm import episode_spec, map_headword
from anonpsy.llm_backend.generate_llm import strip_meta
from anonpsy.llm_backend.perturb_llm import (
    embedding_similarity,
    rewrite_problem,
    scrub_remaining,
    too_close,
)
from anonpsy.llm_backend.roundtrip import roundtrip_gaps

pytestmark = pytest.mark.usefixtures("no_embedding_model")


REPLIES = Path(__file__).parent / "llm_replies"
TEMPLATES = (
    "extract_case",
    "extract_diagnoses",
    "extract_symptoms",
    "extract_treatments",
    "extract_visit",
    "extract_history",
    "extract_timeline",
    "extract_causal",
    "perturb_demographics",
    "perturb_steb",
    "perturb_visit",
    "perturb_mse",
    "generate_lead",
    "generate_block",
    "generate_closing",
)
SOURCE = (
    "Ms. Ferreira-Lind, a 41-year-old teacher, reports low mood for the past 6 weeks. She believes her "
    "colleagues are plotting against her and stopped going to work after the staff meeting."
)


# -- templates, schemas and recorded replies ---------------------------------------------------------------------


#: The template version each step asks for (the latest); a later version has its own reply schema file.
VERSIONS = {"extract_treatments": 2}


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_every_step_has_a_versioned_template_with_a_reply_schema(template_id: str) -> None:
    t = load_template(template_id)
    version = VERSIONS.get(template_id, 1)
    assert t.version == version and t.reply_schema is not None
    assert t.reply_schema_path == (f"{template_id}.json" if version == 1 else f"{template_id}.v{version}.json")
    assert t.placeholders == {"schema", "input", "feedback"}
    assert t.operator == (
        "extraction"
        if template_id.startswith("extract")
        else "perturbation"
        if template_id.startswith("perturb")
        else "generation"
    )


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_recorded_reply_validates_against_its_schema(template_id: str) -> None:
    doc = json.loads((REPLIES / f"{template_id}.json").read_text(encoding="utf-8"))
    assert doc["template"] == template_id and doc.get("version", 1) == VERSIONS.get(template_id, 1)
    schema = load_template(template_id, doc.get("version", 1)).reply_schema
    assert schema is not None
    jsonschema.Draft202012Validator(schema).validate(doc["reply"])


# -- evidence ------------------------------------------------------------------------------------------------------


def test_evidence_found_verbatim_and_near_verbatim() -> None:
    src = SourceText(SOURCE)
    assert src.contains("reports low mood for the past 6 weeks")
    assert src.contains('"She believes her colleagues are plotting against her…"')
    assert src.contains("she believes her  colleagues are plotting against hr")  # one typo, case, spaces
    assert not src.contains("She hears voices telling her to leave the city.")
    assert not src.contains("") and not src.contains(None)
    assert src.locate("stopped going to work") == SOURCE.index("stopped going to work")
    assert invented({"a": "low mood", "b": "invented sentence about a dog", "c": None}, src) == ["b"]
    assert clean_quote(' "...low mood…" ') == "low mood"


@given(st.integers(min_value=0, max_value=len(SOURCE) - 12), st.integers(min_value=12, max_value=80))
@example(0, 12)
def test_any_substring_of_the_source_is_accepted_as_evidence(start: int, length: int) -> None:
    assert SourceText(SOURCE).contains(SOURCE[start : start + length])


# -- extraction helpers ------------------------------------------------------------------------------------------


def test_headwords_map_to_the_symptom_lexicon() -> None:
    assert map_headword("Auditory hallucinations", None) == "auditory hallucination"
    assert map_headword("something odd", "She reports low mood most days.") == "depressed mood"
    assert map_headword("something odd", "nothing clinical here") is None


def test_episode_specs_come_from_expressions_or_offsets() -> None:
    src = SourceText(SOURCE)
    spec, problem = episode_spec({"expression": "for the past 6 weeks"}, 41, src)
    assert (
        problem is None
        and spec is not None
        and (spec.offset, spec.unit, spec.ongoing) == (-6, Unit.week, True)
    )
    assert episode_spec({"expression": "for the past 9 years"}, 41, src) == (None, "E_TIME_NOT_IN_SOURCE")
    spec, _ = episode_spec({"offset": -2, "span": 1, "unit": "month", "ongoing": False}, 41, src)
    assert spec is not None and (spec.offset, spec.span, spec.unit) == (-2, 1, Unit.month)
    assert episode_spec({"offset": 3, "unit": "day", "ongoing": True}, 41, src)[1] == "E_TIME_IMPLAUSIBLE"
    assert episode_spec({"offset": -90, "unit": "year", "ongoing": False}, 41, src)[1] == "E_TIME_IMPLAUSIBLE"
    assert episode_spec({"offset": None, "unit": None}, 41, src)[1] == "E_TIME_INCOMPLETE"


# -- perturbation filters ----------------------------------------------------------------------------------------


def test_rewrite_filter_rejects_close_rewrites_and_new_findings() -> None:
    old = "after the staff meeting at the school"
    assert too_close(old, "after the school staff meeting")
    assert not too_close(old, "during a family gathering on the weekend")
    kw = {"field": "situation", "allowed": set(), "similarity": None}
    assert rewrite_problem(old, "", **kw) == "missing"
    assert rewrite_problem(old, None, **kw) == "missing"
    assert rewrite_problem(old, "after the staff meeting at the school today", **kw) is not None
    assert rewrite_problem(old, "while hearing voices at a family gathering", **kw) is not None
    assert rewrite_problem(old, "during a family gathering on the weekend", **kw) is None
    assert rewrite_problem("afraid", "afraid", field="emotion", allowed=set(), similarity=None) is None
    assert (
        rewrite_problem(
            old, "during a quiet weekend", field="situation", allowed=set(), similarity=lambda a, b: 0.95
        )
        is not None
    )


# -- generation ----------------------------------------------------------------------------------------------------


def test_meta_text_and_markdown_are_stripped() -> None:
    raw = (
        "Sure! Here is the paragraph you asked for:\n\n## History\n**The patient** reported *low mood*.\n"
        "- She slept poorly.\n\nLet me know if you need anything else."
    )
    assert strip_meta(raw) == "The patient reported low mood. She slept poorly."
    assert strip_meta("```json\nThe patient was calm.\n```") == "The patient was calm."
    assert strip_meta("The patient was calm.") == "The patient was calm."


@given(st.text(alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=200))
@example("Sure, here it is:\nok")
def test_strip_meta_is_idempotent(text: str) -> None:
    once = strip_meta(text)
    assert strip_meta(once) == once


def test_roundtrip_reports_missing_diagnoses_and_current_symptoms() -> None:
    g = CaseGraph(
        case_id="rt",
        diagnoses=[
            Diagnosis(id="dx_mdd", label="Major Depressive Disorder", rule_id="major_depressive_disorder")
        ],
        symptoms=[
            Symptom(id="sx_dm", headword="depressed mood", current_symptom=True),
            Symptom(id="sx_in", headword="insomnia", current_symptom=True),
            Symptom(id="sx_old", headword="panic attack", current_symptom=False),
        ],
    )
    text = "The patient reported depressed mood for the past month. A diagnosis of major depressive disorder was made."
    assert [(g_.kind, g_.node_id) for g_ in roundtrip_gaps(g, text)] == [("symptom", "sx_in")]
    assert {x.node_id for x in roundtrip_gaps(g, "The patient was seen.")} == {"dx_mdd", "sx_dm", "sx_in"}


def test_scrub_remaining_audits_every_field_that_repeats_an_identifier() -> None:
    """The analyzer runs once per distinct text, yet each field holding it is scrubbed and audited on its own."""
    said = "She argued with Dr. Hallström at Riverside Clinic in 2019."
    g = CaseGraph(
        case_id="sc",
        symptoms=[
            Symptom(id="sx_a", headword="depressed mood", evidence_text=said, contexts=[STEB(situation=said)]),
            Symptom(id="sx_b", headword="insomnia", evidence_text=said),
            Symptom(id="sx_c", headword="anxiety", evidence_text="She feels tense most days."),
        ],
    )
    audit = Audit(case_id="sc", seed=0)
    out = scrub_remaining(g, audit)
    changed = sorted(c.path for c in audit.changes)
    assert changed == [
        "symptoms[sx_a].contexts[0].situation", "symptoms[sx_a].evidence_text", "symptoms[sx_b].evidence_text",
    ]
    texts = [out.symptoms[0].evidence_text, out.symptoms[0].contexts[0].situation, out.symptoms[1].evidence_text]
    assert len(set(texts)) == 1 and all("Hallström" not in t and "2019" not in t for t in texts)
    assert out.symptoms[2].evidence_text == "She feels tense most days."


# -- CLI options ---------------------------------------------------------------------------------------------------


def test_ablation_flags_reach_the_command_as_options() -> None:
    @click.command()
    @llm_ablation_options
    def cmd(llm_options: dict[str, bool]) -> None:
        click.echo(json.dumps(llm_options, sort_keys=True))

    runner = CliRunner()
    assert json.loads(runner.invoke(cmd, []).output) == ablation_options()
    assert json.loads(runner.invoke(cmd, ["--no-steb", "--no-retro"]).output) == {
        "no_retro": True,
        "no_steb": True,
    }
    assert "--no-steb" in runner.invoke(cmd, ["--help"]).output


def test_embedding_filter_uses_the_evaluation_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    from anonpsy.evaluate import embeddings

    class Fake:
        name = "fake"

        def encode(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] if "home" in t else [0.0, 1.0] for t in texts]

    monkeypatch.setenv("ANONPSY_LLM_EMBEDDINGS", "1")
    monkeypatch.setattr(embeddings, "load_encoder", lambda *a, **k: Fake())
    embedding_similarity.cache_clear()
    sim = embedding_similarity()
    assert sim is not None
    assert sim("at home", "back home") == pytest.approx(1.0)
    assert too_close("at home alone", "in a house by myself at home", sim)
    assert not too_close("at home alone", "during a long drive", sim)
