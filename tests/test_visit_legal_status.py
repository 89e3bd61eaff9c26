"""The visit's legal status: stated in the note (with the sentence as evidence) or only implied by the setting and
the way of arriving. A stated status is told faithfully, an implied one never. Synthetic texts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from tests.strategies import case_graphs

from anonpsy.extract import extract
from anonpsy.generate.templates import LEGAL_PHRASE, render
from anonpsy.graph import (
    LEGAL_IMPLIED_RULE,
    ArrivalMode,
    CaseGraph,
    Evidence,
    LegalStatus,
    Setting,
    VisitEvent,
    implied_legal_status,
    legal_status_stated,
)
from anonpsy.perturb import perturb
from anonpsy.perturb.check import check

STATED = ("PSYCHIATRIC ADMISSION NOTE\nHPI: A 30-year-old woman was referred by her doctor and admitted on a "
          "voluntary basis for low mood. She denies suicidal ideation.")
IMPLIED = ("OUTPATIENT PSYCHIATRY INTAKE\nHPI: A 30-year-old woman referred by her doctor for low mood. She denies "
           "suicidal ideation.")


def test_a_stated_status_is_told_even_where_the_arrival_implies_it() -> None:
    """Admitted on a clinician's referral implies voluntary; the note also says so, and the text keeps it."""
    g = extract(STATED)
    ve = g.visit_event
    assert (ve.setting, ve.arrival_mode, ve.legal_status) == (Setting.inpatient, ArrivalMode.referral,
                                                              LegalStatus.voluntary)
    assert implied_legal_status(ve.setting, ve.arrival_mode) == LegalStatus.voluntary
    ev = ve.legal_status_evidence
    assert ev is not None and ev.rule_id == "cue.legal_status.voluntary" and ev.section == "hpi"
    assert ev.start is not None and ev.end is not None and "voluntary" in STATED[ev.start:ev.end]
    assert legal_status_stated(ve)
    assert "on a voluntary basis" in render(g, seed=0)


def test_an_implied_status_is_recorded_as_implied_and_never_told() -> None:
    g = extract(IMPLIED)
    ve = g.visit_event
    assert ve.legal_status == LegalStatus.voluntary
    assert ve.legal_status_evidence == Evidence(rule_id=LEGAL_IMPLIED_RULE)
    assert not legal_status_stated(ve)
    assert "voluntary" not in render(g, seed=0)
    unknown = extract("DISCHARGE SUMMARY\nHOSPITAL COURSE: Improved on lithium.").visit_event
    assert unknown.legal_status == LegalStatus.unknown and unknown.legal_status_evidence is None


def test_a_graph_without_legal_evidence_reads_as_before() -> None:
    """A graph written before the field (or by hand) counts a status as stated when it is not the implied one."""
    base = dict(setting=Setting.outpatient, arrival_mode=ArrivalMode.scheduled)
    assert not legal_status_stated(VisitEvent(**base, legal_status=LegalStatus.voluntary))
    assert legal_status_stated(VisitEvent(**base, legal_status=LegalStatus.involuntary))
    assert not legal_status_stated(VisitEvent(**base, legal_status=LegalStatus.unknown))


def test_legal_evidence_is_consistent() -> None:
    with pytest.raises(ValidationError):
        VisitEvent(legal_status=LegalStatus.unknown, legal_status_evidence=Evidence(rule_id=LEGAL_IMPLIED_RULE))
    with pytest.raises(ValidationError):
        VisitEvent(legal_status=LegalStatus.voluntary,
                   legal_status_evidence=Evidence(start=0, end=5, rule_id=LEGAL_IMPLIED_RULE))


def test_check_reports_a_changed_legal_evidence() -> None:
    g = extract(STATED)
    out, _ = perturb(g, 3)
    assert check(g, out) == []
    implied = out.visit_event.model_copy(update={"legal_status_evidence": Evidence(rule_id=LEGAL_IMPLIED_RULE)})
    codes = {v.code for v in check(g, out.model_copy(update={"visit_event": implied}))}
    assert codes == {"CHECK_STATUS"}


@given(case_graphs(), st.booleans(), st.integers(0, 3))
def test_property_implied_legal_status_is_never_told(g: CaseGraph, stated: bool, seed: int) -> None:
    """Named invariant: a text made from a graph tells the legal status iff the graph records it as stated."""
    ve = g.visit_event
    if ve.legal_status == LegalStatus.unknown:
        return
    ev = Evidence(rule_id="cue.legal_status." + ve.legal_status.value) if stated else Evidence(
        rule_id=LEGAL_IMPLIED_RULE)
    g = g.model_copy(update={"visit_event": ve.model_copy(update={"legal_status_evidence": ev})})
    assert (LEGAL_PHRASE[ve.legal_status] in render(g, seed=seed)) == stated


def test_rendering_a_graph_reads_the_legal_status_without_the_extractor() -> None:
    """Whether a status was stated is the graph's own reading: the templates need no extractor module."""
    import subprocess
    import sys

    code = ("import sys\nfrom anonpsy.generate.templates import render\nfrom anonpsy.graph import CaseGraph, "
            "VisitEvent, LegalStatus, Setting\n"
            "g = CaseGraph(case_id='c', visit_event=VisitEvent(setting=Setting.inpatient, "
            "legal_status=LegalStatus.involuntary))\nrender(g, seed=0)\n"
            "print(sorted(m for m in sys.modules if m.startswith('anonpsy.extract')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
