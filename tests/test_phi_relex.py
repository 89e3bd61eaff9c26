"""Relexicalization: person clustering, type-valid surrogates, consistency within and across documents."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonpsy.phi import relex
from anonpsy.phi.relex import Relexicalizer, cluster_people, infer_gender
from anonpsy.phi.spans import Span
from anonpsy.phi.vault import SurrogateVault

KEY = b"0123456789abcdef-test-key"


def _doc(*items: tuple[str, str | None]) -> tuple[str, list[Span]]:
    text = ""
    spans = []
    for value, etype in items:
        if etype:
            spans.append(Span(len(text), len(text) + len(value), etype))
        text += value
    return text, spans


def _relex(text: str, spans: list[Span], r: Relexicalizer | None = None) -> list[str]:
    r = r or Relexicalizer(SurrogateVault(KEY))
    return r.relexicalize(text, spans)


def test_variants_of_one_person_form_one_cluster() -> None:
    assert cluster_people(["Dr. Adam Wilson", "Wilson", "A. Wilson", "Adam"]) == [[0, 1, 2, 3]]
    assert cluster_people(["Wilson", "Dr. Adam Wilson", "A. Wilson", "Adam"]) == [[0, 1, 2, 3]]


def test_two_wilsons_with_different_first_names_are_two_people() -> None:
    groups = cluster_people(["Adam Wilson", "Beth Wilson", "Mrs. Wilson"], [0, 50, 100])
    assert sorted(map(sorted, groups)) == [[0], [1, 2]]


def test_fuzzy_variants_join() -> None:
    assert cluster_people(["Katherine Johansson", "Katherine Johanson"]) == [[0, 1]]


def test_person_surrogates_are_consistent_within_a_document() -> None:
    text, spans = _doc(
        ("Dr. Adam Wilson", "PERSON"),
        (" saw her. ", None),
        ("Wilson", "PERSON"),
        (" wrote that ", None),
        ("Adam", "PERSON"),
        (" and ", None),
        ("A. Wilson", "PERSON"),
        (" agreed.", None),
    )
    full, last, first, initial = _relex(text, spans)
    m = re.fullmatch(r"Dr\. (\w+) (\w+)", full)
    assert m is not None
    assert last == m.group(2) and first == m.group(1)
    assert initial == f"{m.group(1)[0]}. {m.group(2)}"
    assert "Wilson" not in full and "Adam" not in full


@pytest.mark.parametrize(("name", "gender"), [("Adam Wilson", "male"), ("Margaret Wilson", "female")])
def test_surrogate_first_names_keep_gender(name: str, gender: str) -> None:
    text, spans = _doc((name, "PERSON"))
    out = _relex(text, spans)[0]
    assert infer_gender(out.split()[0]) in (gender, "unknown")
    assert infer_gender(name.split()[0]) == gender


def test_titles_infer_gender() -> None:
    assert infer_gender("", "Mrs.") == "female"
    assert infer_gender("", "Mr") == "male"
    assert infer_gender("Jordan") == "unknown"


def test_name_shape_is_kept() -> None:
    text, spans = _doc(("WILSON, ADAM", "PERSON"), ("; ", None), ("Anna S.", "PERSON"))
    caps, initial = _relex(text, spans)
    assert re.fullmatch(r"[A-Z]+, [A-Z]+", caps)
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z]\.", initial)


@pytest.mark.parametrize(
    ("value", "etype", "pattern"),
    [
        ("(555) 123-4567", "TELEPHONE_NUMBER", r"\(\d{3}\) \d{3}-\d{4}"),
        ("555.123.4567", "FAX_NUMBER", r"\d{3}\.\d{3}\.\d{4}"),
        ("AB-1234567", "MEDICAL_RECORD_NUMBER", r"[A-Z]{2}-\d{7}"),
        ("123-45-6789", "SSN_OR_TAXPAYER", r"\d{3}-\d{2}-\d{4}"),
        ("02115", "ZIP_CODE", r"\d{5}"),
        ("adam.wilson@gmail.com", "EMAIL", r"[a-z]+\.[a-z]+@[\w.-]+\.[a-z]+"),
        ("https://www.example.org/a/b1", "URL", r"https://www\.[\w.-]+/[a-z]/[a-z]\d"),
        ("192.168.10.4", "IP_ADDRESS", r"\d{1,3}(\.\d{1,3}){3}"),
        ("Methodist Hospital", "ORGANIZATION", r".+ Hospital"),
        ("Lakeside Clinic", "ORGANIZATION", r".+ Clinic"),
        ("Cedar Row Pharmacy", "PHARMACY", r".+ Pharmacy"),
        ("University of Ohio", "ORGANIZATION", r"University of .+"),
        ("Boston, MA 02115", "ADDRESS", r"[A-Za-z .'-]+, [A-Z]{2} \d{5}"),
        ("1142 Larkspur Lane", "ADDRESS", r"\d+ .+"),
    ],
)
def test_surrogates_are_type_valid(value: str, etype: str, pattern: str) -> None:
    text, spans = _doc((value, etype))
    out = _relex(text, spans)[0]
    assert re.fullmatch(pattern, out), out
    assert out != value


def test_locations_keep_their_kind() -> None:
    by_name, by_abbr, _countries, cities, _ = relex._geo()
    text, spans = _doc(
        ("Texas", "LOCATION"), (", ", None), ("TX", "LOCATION"), (", ", None), ("Denver", "LOCATION")
    )
    state, abbr, city = _relex(text, spans)
    assert state.lower() in by_name and state != "Texas"
    assert abbr.lower() in by_abbr
    assert city in cities and city != "Denver"


def test_card_numbers_keep_a_valid_luhn_digit() -> None:
    text, spans = _doc(("4111 1111 1111 1111", "CREDIT_DEBIT_NUMBER"))
    out = _relex(text, spans)[0]
    assert relex._luhn_ok(re.sub(r"\D", "", out))
    assert re.fullmatch(r"\d{4} \d{4} \d{4} \d{4}", out)


def test_same_phone_in_two_formats_gets_one_surrogate() -> None:
    text, spans = _doc(
        ("(555) 123-4567", "TELEPHONE_NUMBER"), (" or ", None), ("555-123-4567", "TELEPHONE_NUMBER")
    )
    a, b = _relex(text, spans)
    assert re.sub(r"\D", "", a) == re.sub(r"\D", "", b)


def test_quasi_identifiers_are_masked_not_invented() -> None:
    text, spans = _doc(("married", "MARITAL_STATUS"))
    assert _relex(text, spans) == ["[MARITAL_STATUS]"]


def test_report_has_no_raw_values_unless_asked() -> None:
    r = Relexicalizer(SurrogateVault(KEY))
    text, spans = _doc(("Adam Wilson", "PERSON"), (" ", None), ("Wilson", "PERSON"))
    r.relexicalize(text, spans, document_id="d1")
    rep = r.report_json()
    assert "Wilson" not in rep and "Adam" not in rep
    data = r.report()
    assert data["entities"] == 2 and data["clusters"] == 1
    r2 = Relexicalizer(SurrogateVault(KEY), collect_values=True)
    r2.relexicalize(text, spans)
    assert "Adam Wilson" in r2.report_json(include_values=True)


def test_cross_document_linking(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    with SurrogateVault(KEY, path) as v:
        r = Relexicalizer(v)
        t1, s1 = _doc(("Dr. Adam Wilson", "PERSON"))
        first = r.relexicalize(t1, s1)[0]
    with SurrogateVault(KEY, path) as v:  # a later run
        r = Relexicalizer(v)
        t2, s2 = _doc(("Dr. Wilson", "PERSON"), (" called.", None))
        dr = r.relexicalize(t2, s2)[0]
        t3, s3 = _doc(("Adam Wilson", "PERSON"), (" and ", None), ("Beth Wilson", "PERSON"))
        again, beth = r.relexicalize(t3, s3)
    assert dr.split()[-1] == first.split()[-1]
    assert again == first.removeprefix("Dr. ")
    assert beth != again
    assert beth.split()[-1] != again.split()[-1]


_CONS = "bcdfghjklmnpqrstvwxz"
_word = st.text(alphabet=_CONS, min_size=5, max_size=9).map(str.capitalize)
_entity = st.one_of(
    st.tuples(st.tuples(_word, _word).map(" ".join), st.just("PERSON")),
    st.tuples(st.text(string.digits, min_size=7, max_size=10), st.just("MEDICAL_RECORD_NUMBER")),
    st.tuples(_word.map(lambda w: f"{w} Clinic"), st.just("ORGANIZATION")),
    st.tuples(
        st.text(string.digits, min_size=10, max_size=10).map(lambda d: f"{d[:3]}-{d[3:6]}-{d[6:]}"),
        st.just("TELEPHONE_NUMBER"),
    ),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entities=st.lists(_entity, min_size=1, max_size=6, unique_by=lambda e: e[0]),
    docs=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=5), min_size=2, max_size=4),
)
def test_surrogates_consistent_across_documents(
    tmp_path_factory: pytest.TempPathFactory, entities: list[tuple[str, str]], docs: list[list[int]]
) -> None:
    path = tmp_path_factory.mktemp("v") / "v.sqlite"
    seen: dict[str, str] = {}
    for run in range(2):
        with SurrogateVault(KEY, path) as v:
            r = Relexicalizer(v)
            for picks in docs:
                items: list[tuple[str, str | None]] = []
                for p in picks:
                    value, etype = entities[p % len(entities)]
                    items += [(value, etype), (" was noted. ", None)]
                text, spans = _doc(*items)
                for span, out in zip(spans, r.relexicalize(text, spans), strict=True):
                    value = text[span.start : span.end]
                    assert out != value
                    assert seen.setdefault(value, out) == out, (run, value)
