"""Temporal engine: unit conversion, expressions, Allen relations and graph normalisation."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tests.strategies import case_graphs

from anonpsy.graph import CaseGraph, Duration, Symptom, Unit
from anonpsy.temporal import (
    _ANY_PATTERN,
    _PATTERNS,
    Relation,
    _may_hold_expression,
    _spec,
    allen,
    covered_days,
    finalize_spans,
    merge_intervals,
    node_intervals,
    normalize,
    parse_expression,
    reconcile,
    temporal,
)

CONVERSE = {
    Relation.before: Relation.after, Relation.meets: Relation.met_by, Relation.overlaps: Relation.overlapped_by,
    Relation.starts: Relation.started_by, Relation.during: Relation.contains,
    Relation.finishes: Relation.finished_by, Relation.equal: Relation.equal,
}
CONVERSE.update({v: k for k, v in list(CONVERSE.items())})

intervals = st.tuples(st.integers(-50, 50), st.integers(1, 30)).map(lambda t: (t[0], t[0] + t[1]))


@pytest.mark.parametrize(
    ("expr", "age", "expected"),
    [
        ("low mood for two weeks", None, (-2, None, Unit.week, True)),
        ("over the past 3 months", None, (-3, None, Unit.month, True)),
        ("first hospitalised at age 15", 34, (-19, 1, Unit.year, False)),
        ("enuresis in childhood", 30, (-25, 8, Unit.year, False)),
        ("two days before admission", None, (-2, 1, Unit.day, False)),
        ("she took the pills yesterday", None, (-1, 1, Unit.day, False)),
        ("recently more withdrawn", None, (-1, 1, Unit.month, False)),
        ("has been drinking for several years", None, (-3, None, Unit.year, True)),
        ("the day after admission", None, (1, 1, Unit.day, False)),
        ("for the past week", None, (-1, None, Unit.week, True)),
    ],
)
def test_parse_expression_examples(expr: str, age: int | None, expected: tuple[object, ...]) -> None:
    spec = parse_expression(expr, age=age)
    assert spec is not None
    assert (spec.offset, spec.span, spec.unit, spec.ongoing) == expected


def test_parse_expression_unknown_is_none() -> None:
    assert parse_expression("the patient is calm", age=40) is None
    assert parse_expression("at age 50", age=40) is None  # an age after the present cannot be an event


def test_allen_named_cases() -> None:
    assert allen((0, 5), (5, 9)) == Relation.meets
    assert allen((0, 4), (5, 9)) == Relation.before
    assert allen((0, 6), (5, 9)) == Relation.overlaps
    assert allen((0, 9), (2, 5)) == Relation.contains
    assert allen((2, 5), (2, 5)) == Relation.equal
    assert allen((2, 5), (2, 9)) == Relation.starts
    assert allen((4, 9), (2, 9)) == Relation.finishes


@given(intervals, intervals)
def test_allen_relation_has_converse(a: tuple[int, int], b: tuple[int, int]) -> None:
    assert allen(b, a) == CONVERSE[allen(a, b)]


@given(st.lists(intervals, max_size=8))
@example([(0, 2), (2, 4)])  # adjacent half-open intervals merge
def test_merge_intervals_keeps_days_and_is_disjoint(ivs: list[tuple[int, int]]) -> None:
    merged = merge_intervals(ivs)
    assert covered_days(merged) == covered_days(ivs)
    for (_s1, e1), (s2, _e2) in itertools.pairwise(merged):
        assert e1 < s2  # disjoint and not adjacent


def _node_days(g: CaseGraph) -> dict[str, set[int]]:
    return {n.id: covered_days(node_intervals(g, n.id)) for n in g.temporal_nodes()}


@given(case_graphs())
def test_reconciliation_keeps_covered_days(g: CaseGraph) -> None:
    before = _node_days(finalize_spans(g))
    after = _node_days(reconcile(g))
    assert before == after


@given(case_graphs())
def test_reconciliation_is_idempotent(g: CaseGraph) -> None:
    once = reconcile(g)
    assert reconcile(once) == once


@given(case_graphs())
def test_normalize_is_idempotent(g: CaseGraph) -> None:
    once = normalize(g)
    assert normalize(once) == once


@given(case_graphs())
def test_normalized_graph_invariants(g: CaseGraph) -> None:
    n = normalize(g)
    dmap = n.duration_map()
    used = {i for node in n.temporal_nodes() for i in node.duration_ids}
    assert used == set(dmap), "every duration is referenced and every reference resolves"
    for s in n.symptoms:
        assert len(s.duration_ids) <= 1, "one node per episode"
        ivs = node_intervals(n, s.id)
        if ivs:
            assert s.current_symptom == any(a <= 0 < b for a, b in ivs)
    pw = {e.target for e in n.edges if e.type.value == "PRESENTS_WITH"}
    assert pw == {s.id for s in n.symptoms if s.current_symptom}
    # No STEB frame is lost or invented when symptoms split into episodes.
    assert sum(len(s.contexts) for s in n.symptoms) == sum(len(s.contexts) for s in g.symptoms)


def test_split_pairs_steb_by_temporal_order() -> None:
    from anonpsy.graph import STEB

    g = CaseGraph(
        case_id="t1",
        symptoms=[Symptom(id="sx_a", headword="depressed mood",
                          contexts=[STEB(situation="first"), STEB(situation="second")],
                          duration_ids=["late", "early"])],
        durations=[Duration(id="late", offset=-2, span=3, unit=Unit.week, ongoing=True),
                   Duration(id="early", offset=-2, span=1, unit=Unit.year)],
    )
    n = normalize(g)
    assert [s.id for s in n.symptoms] == ["sx_a", "sx_a_e2"]
    assert n.symptoms[0].contexts[0].situation == "first"  # earliest episode gets the first frame
    assert n.symptoms[1].contexts[0].situation == "second"
    assert n.symptoms[1].current_symptom and not n.symptoms[0].current_symptom
    assert temporal(n, "sx_a", "sx_a_e2") == Relation.before


def test_ongoing_span_reaches_horizon() -> None:
    g = CaseGraph(
        case_id="t2",
        symptoms=[Symptom(id="sx_a", headword="insomnia", duration_ids=["d1"]),
                  Symptom(id="sx_b", headword="paranoia", duration_ids=["d2"])],
        durations=[Duration(id="d1", offset=-3, unit=Unit.month, ongoing=True),
                   Duration(id="d2", offset=-1, span=3, unit=Unit.week)],
    )
    n = normalize(g)
    d1 = n.duration_map()["d1"]
    assert d1.span is not None and d1.interval()[1] >= 14
    assert n.symptoms[0].current_symptom


_ASCII = st.characters(min_codepoint=32, max_codepoint=126)


@given(st.from_regex(_ANY_PATTERN, alphabet=_ASCII))
@example("For Years")
@example("LONGSTANDING")
@example("at 19 YO")
@example("in adolescence")
def test_needed_words_prefilter_keeps_every_ascii_match(expr: str) -> None:
    """Property (prefilter is necessary): every ASCII text that holds a temporal expression passes the word
    prefilter, so skipping the full search when it fails changes no result."""
    assert _ANY_PATTERN.search(expr) is not None
    assert _may_hold_expression(expr)


@given(st.lists(st.sampled_from(["for", "the", "past", "3", "two", "weeks", "ago", "since", "age", "of", "14", "at",
                                "in", "childhood", "last", "night", "yesterday", "recently", "chronic", "years",
                                "\u017fince", "We\u212aS", "ye\u017fterday", ",", "."]), max_size=12).map(" ".join))
@example("for the pa\u017ft 3 weeks")
def test_parse_expression_equals_unfiltered_search(expr: str) -> None:
    """Property (prefilter is transparent): parse_expression returns what the full search alone returns."""
    expected = None
    if _ANY_PATTERN.search(expr):
        for pattern, kind in _PATTERNS:
            m = pattern.search(expr)
            if m and (spec := _spec(kind, m, 40)) is not None:
                expected = spec
                break
    assert parse_expression(expr, age=40) == expected
