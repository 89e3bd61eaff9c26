"""How recognised words sound: a phone distance, and street types heard as words that sound like them."""

from __future__ import annotations

import pytest

pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from anonpsy.audio import phonetic
from anonpsy.audio.detect import street_suffixes
from anonpsy.audio.phonetic import distance, phones, sounds_like


def test_a_close_phone_costs_half_and_any_other_edit_one() -> None:
    assert distance(("T", "EH", "R"), ("T", "EH", "R")) == 0
    assert distance(("K", "AE", "T"), ("G", "AE", "T")) == 0.5  # voiceless and voiced partners
    assert distance(("K", "AE", "T"), ("K", "IY", "T")) == 0.5  # vowel for vowel
    assert distance(("K", "AE", "T"), ("L", "AE", "T")) == 1
    assert distance(("R", "AE", "M"), ("R", "AE", "M", "P")) == 1
    assert distance((), ("A", "B")) == 2


def test_words_are_pronounced_from_the_dictionary_or_their_spelling() -> None:
    assert ("G", "R", "IY", "N") in phones("Green,")
    assert phones("terrace's") == (("T", "EH", "R", "AH", "S", "Z"),)  # a possessive the dictionary lacks
    assert phones("zarakovny") and all(len(p) >= 5 for p in phones("zarakovny"))


@pytest.mark.parametrize(
    ("word", "heard"),
    [("screen", True), ("Ram", True), ("Terri's", True), ("rode", True),
     ("last", False), ("son", False), ("mother", False), ("night", False), ("clinic", False)],
)
def test_street_types_heard_as_words_that_sound_like_them(word: str, heard: bool) -> None:
    assert (sounds_like(word, sorted(street_suffixes())) is not None) == heard


def test_nothing_sounds_like_anything_without_a_dictionary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phonetic, "pronunciations", dict)
    assert phones("green") == ()
    assert sounds_like("green", ["green"]) is None
