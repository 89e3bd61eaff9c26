"""The surrogate vault: persistent, keyed by HMAC, never holding raw values."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonpsy.errors import AnonpsyError
from anonpsy.phi.relex import Relexicalizer
from anonpsy.phi.spans import Span
from anonpsy.phi.vault import SurrogateVault

KEY = b"0123456789abcdef-test-key"


def test_clusters_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    with SurrogateVault(KEY, path) as v:
        vk = v.variant_key("PERSON", "adam wilson")
        cid = v.create_cluster("PERSON", {"first": "Eric", "last": "Sanders"}, [vk])
        assert v.lookup(vk) == [cid]
        assert len(v) == 1
    with SurrogateVault(KEY, path) as v:
        assert v.lookup(v.variant_key("PERSON", "adam wilson")) == [cid]
        assert v.surrogate(cid) == {"first": "Eric", "last": "Sanders"}
        assert next(iter(v.clusters()))[:2] == (cid, "PERSON")
        assert v.lookup(v.variant_key("PERSON", "beth wilson")) == []


def test_variant_keys_depend_on_key_and_type() -> None:
    a = SurrogateVault(KEY)
    b = SurrogateVault(b"another-secret-key-0000")
    assert a.variant_key("PERSON", "x") != b.variant_key("PERSON", "x")
    assert a.variant_key("PERSON", "x") != a.variant_key("LOCATION", "x")


def test_wrong_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    SurrogateVault(KEY, path).close()
    with pytest.raises(AnonpsyError) as err:
        SurrogateVault(b"another-secret-key-0000", path)
    assert err.value.code == "M101"


def test_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(AnonpsyError) as err:
        SurrogateVault(KEY, path)
    assert err.value.code == "M102"


def test_rollback_on_error(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    with pytest.raises(RuntimeError), SurrogateVault(KEY, path) as v:
        v.create_cluster("PERSON", {"first": "A", "last": "B"}, [v.variant_key("PERSON", "x")])
        raise RuntimeError("boom")
    with SurrogateVault(KEY, path) as v:
        assert len(v) == 0


_CONS = "bcdfghjklmnpqrstvwxz"
_word = st.text(alphabet=_CONS, min_size=6, max_size=10).map(str.capitalize)
_digits = st.text(alphabet=string.digits, min_size=9, max_size=10)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.tuples(_word, _word), min_size=1, max_size=4),
    mrns=st.lists(_digits, min_size=1, max_size=3),
    orgs=st.lists(_word, min_size=1, max_size=2),
)
def test_vault_never_stores_raw_values(
    tmp_path_factory: pytest.TempPathFactory,
    names: list[tuple[str, str]],
    mrns: list[str],
    orgs: list[str],
) -> None:
    path = tmp_path_factory.mktemp("vault") / "v.sqlite"
    parts: list[str] = []
    spans: list[Span] = []
    raw: list[str] = []

    def add(value: str, etype: str) -> None:
        start = sum(len(p) for p in parts)
        parts.append(value)
        spans.append(Span(start, start + len(value), etype))
        parts.append(" ; ")
        raw.append(value)

    for first, last in names:
        add(f"{first} {last}", "PERSON")
        add(last, "PERSON")
    for m in mrns:
        add(m, "MEDICAL_RECORD_NUMBER")
    for o in orgs:
        add(f"{o} Hospital", "ORGANIZATION")
    text = "".join(parts)
    with SurrogateVault(KEY, path) as v:
        Relexicalizer(v).relexicalize(text, spans)
    data = b"".join(p.read_bytes() for p in path.parent.iterdir())
    low = data.lower()
    for value in raw:
        for token in value.split():
            if token == "Hospital":
                continue
            assert token.lower().encode() not in low
