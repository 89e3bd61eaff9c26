"""k-anonymization of the document–entity table: the invariants as properties, the steps as examples."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

pytest.importorskip("sklearn", exc_type=ImportError, reason="needs the twin extra: pip install -e '.[twin]'")

from anonpsy.twin.anonymize import (
    DELETED_FLOOR,
    GENERALISED,
    KEPT,
    STATUSES,
    anonymize,
    global_recoding,
    information_loss,
    item_for,
    shared_items,
    verify,
)
from anonpsy.twin.mentions import default_hierarchy
from strategies import twin_tables

H = default_hierarchy()


def _closure(items: frozenset[str]) -> frozenset[str]:
    return frozenset(a for c in items for a in H.lineage(c))


@given(twin_tables(), st.integers(1, 6))
@example({"d0": frozenset({"rx:sertraline"}), "d1": frozenset({"rx:fluoxetine"})}, 2)
@example({"d0": frozenset({"rx:sertraline"})}, 2)
def test_anonymize_keeps_k_anonymity_for_any_table(sets: dict[str, frozenset[str]], k: int) -> None:
    result = anonymize(sets, H, k)
    check = verify(sets, result.published, H, k)
    assert check["ok"], check["problems"]
    for d, pub in result.published.items():
        assert pub <= _closure(sets[d])  # nothing invented
        for c, o in result.outcomes[d].items():
            assert o.status in STATUSES
            if o.item is not None:
                assert o.item in pub and o.item in H.lineage(c)


@given(twin_tables(max_docs=25), st.integers(1, 4))
def test_anonymize_is_deterministic_whatever_the_input_order(sets: dict[str, frozenset[str]], k: int) -> None:
    a = anonymize(sets, H, k)
    b = anonymize(dict(reversed(list(sets.items()))), H, k)
    assert a.published == b.published


def test_floor_generalises_a_rare_drug_to_its_class_when_the_class_survives() -> None:
    sets = {"a": frozenset({"rx:fluvoxamine"}), "b": frozenset({"rx:paroxetine"}),
            "c": frozenset({"rx:sertraline"}), "d": frozenset({"rx:sertraline"})}
    image = global_recoding(sets, H, 2)
    assert image["rx:sertraline"] == "rx:sertraline"
    assert image["rx:fluvoxamine"] == image["rx:paroxetine"] == "rx.class:ssri"


def test_floor_deletes_when_no_generalisation_reaches_it() -> None:
    sets = {"a": frozenset({"rx:fluvoxamine"}), "b": frozenset({"sx:insomnia"}), "c": frozenset({"sx:insomnia"})}
    image = global_recoding(sets, H, 2)
    assert image["rx:fluvoxamine"] is None
    result = anonymize(sets, H, 2)
    assert result.outcomes["a"]["rx:fluvoxamine"].status == DELETED_FLOOR
    assert not result.published["a"]


def test_two_documents_on_different_ssris_publish_the_class() -> None:
    sets = {"a": frozenset({"rx:sertraline", "sx:insomnia"}), "b": frozenset({"rx:citalopram", "sx:insomnia"})}
    result = anonymize(sets, H, 2, floor=1)
    assert result.published["a"] == result.published["b"] == frozenset({"rx.class:ssri", "sx:insomnia"})
    assert result.outcomes["a"]["rx:sertraline"].status == GENERALISED
    assert result.outcomes["a"]["sx:insomnia"].status == KEPT


def test_shared_items_keeps_a_further_member_of_a_class() -> None:
    got = shared_items([frozenset({"rx:sertraline", "rx:fluoxetine"}), frozenset({"rx:sertraline", "rx:citalopram"})],
                       H)
    assert got == frozenset({"rx:sertraline", "rx.class:ssri"})
    assert item_for("rx:citalopram", got, H) == "rx.class:ssri"


def test_more_k_than_documents_publishes_nothing() -> None:
    sets = {"a": frozenset({"sx:insomnia"}), "b": frozenset({"sx:insomnia"})}
    result = anonymize(sets, H, 3)
    assert not any(result.published.values())
    assert verify(sets, result.published, H, 3)["ok"]


def test_verify_catches_a_small_class_and_an_invented_concept() -> None:
    sets = {"a": frozenset({"sx:insomnia"}), "b": frozenset({"sx:insomnia"}), "c": frozenset({"tx:cbt"})}
    bad = {"a": frozenset({"sx:insomnia"}), "b": frozenset({"sx:insomnia", "rx:sertraline"}),
           "c": frozenset({"tx:cbt"})}
    check = verify(sets, bad, H, 2)
    assert not check["ok"]
    assert any("fewer than 2" in p for p in check["problems"])
    assert any("neither a concept" in p for p in check["problems"])


@given(twin_tables(), st.integers(1, 5))
def test_information_loss_accounts_for_every_entity(sets: dict[str, frozenset[str]], k: int) -> None:
    result = anonymize(sets, H, k)
    loss = information_loss(sets, result, H)
    assert loss["all"]["occurrences"] == sum(len(s) for s in sets.values())
    assert sum(loss["all"][s] for s in STATUSES) == loss["all"]["occurrences"]
    for row in loss["per_type"].values():
        assert row["information_retained"] is None or 0.0 <= row["information_retained"] <= 1.0 + 1e-9
    if k == 1:
        assert loss["all"]["kept"] == loss["all"]["occurrences"]
