"""The synthetic dictation scripts: varied enough that rules cannot be written on their names and forms.

Pure text (no espeak-ng): the scripts are checked, not their audio.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from anonpsy.testing.dictation import dictation_script


def _segments(seeds: range) -> dict[str, list[str]]:
    by_type: dict[str, list[str]] = defaultdict(list)
    for s in seeds:
        for sentence in dictation_script(s):
            for seg in sentence:
                by_type[seg.phi or "-"].append(seg.text)
    return by_type


def test_scripts_draw_names_places_and_forms_from_open_lists() -> None:
    by_type = _segments(range(300))
    names = {w for t in by_type["PERSON"] for w in t.split()}
    assert len(names) >= 300, "names come from many locales, not a short hand-written list"
    assert len(set(by_type["LOCATION"])) >= 60
    streets = {t for t in by_type["ADDRESS"]}
    assert len(streets) >= 60
    assert len({t.split()[-1] for t in streets}) >= 10, "street types vary"
    dates = by_type["DATE"]
    assert any(t.startswith("the ") for t in dates) and any(" the " in t for t in dates)
    assert any(re.fullmatch(r"[a-z ,]+", t) for t in dates), "month/day/year said as numbers"
    phones = by_type["TELEPHONE_NUMBER"]
    assert any("double" in t for t in phones) and any("oh" in t.split() for t in phones)
    assert any("extension" in t for t in phones)
    # "area code" is said before some numbers but is not part of the identifier
    assert "area code" in by_type["-"] and not any("area code" in t for t in phones)
    assert {"SSN", "ZIP", "MEDICAL_RECORD_NUMBER"} <= set(by_type)
    carriers = {seg for seg in by_type["-"] if seg.strip(" .,")}
    assert len(carriers) >= 60


def test_scripts_are_plain_ascii_and_deterministic() -> None:
    a = [[(s.text, s.phi) for s in sent] for sent in dictation_script(11)]
    assert a == [[(s.text, s.phi) for s in sent] for sent in dictation_script(11)]
    for texts in _segments(range(100)).values():
        for t in texts:
            assert t.isascii() and t == t.strip(), t
