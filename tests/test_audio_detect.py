"""Identifiers in a cased transcript: capitalised words no English dictionary lists are names."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import pytest

pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")
from hypothesis import example, given
from hypothesis import strategies as st
from tests.strategies import cased_transcripts

from anonpsy.audio.asr import Word
from anonpsy.audio.cues import default_cues
from anonpsy.audio.detect import (
    WordHit,
    digit_list_hits,
    house_number_hits,
    misheard_month_date_hits,
    month_year_hits,
    name_extensions,
    number_bridge_hits,
    number_edge_hits,
    place_hits,
    possessive_unsure_hits,
    proper_noun_hits,
    scattered_digit_hits,
    spoken_date_hits,
    street_address_hits,
    subject_hits,
    unsure_extensions,
    unsure_subject_hits,
)

KNOWN = frozenset({"she", "reports", "low", "mood", "her", "sister", "called", "the", "clinic", "maria", "in",
                   "takes", "mr", "i", "de", "la", "croix", "and", "lives", "with", "started", "is", "a", "esther",
                   "name", "my"})


def _words(text: str) -> list[Word]:
    return [Word(w, i * 0.5, i * 0.5 + 0.4) for i, w in enumerate(text.split())]


def _texts(words: list[Word], hits: Iterable[WordHit]) -> list[str]:
    """The words of each hit, joined as the recogniser wrote them."""
    return [" ".join(w.text for w in words[h.first : h.last + 1]) for h in hits]


def _marked(text: str, known: frozenset[str] = KNOWN) -> list[tuple[str, str]]:
    words = _words(text)
    return [(" ".join(w.text for w in words[h.first : h.last + 1]), h.type) for h in proper_noun_hits(words, known)]


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("Her sister, Esther, and Zoramathan called the clinic.", [("Zoramathan", "PERSON")]),
        ("My name is Maria Okonkwo and", [("Maria Okonkwo", "PERSON")]),
        ("Her sister, Shimon de La Croix, called", [("Shimon de La Croix,", "PERSON")]),
        ("She lives with her sister in Beringham.", [("Beringham.", "LOCATION")]),
        ("Started Vraylar. Mr. Mvk called", [("Mvk", "PERSON")]),  # a brand-name drug of the safelist is not a name
        ("She takes Lexapro and Wellbutrin.", []),
        ("She reports low mood.", []),
    ],
)
def test_unknown_capitalised_words_are_names(text: str, marked: list[tuple[str, str]]) -> None:
    assert _marked(text) == marked


def test_needs_a_dictionary() -> None:
    assert _marked("Her sister Zoramathan called", frozenset()) == []


@given(cased_transcripts())
@example(["she", "zoramathan", "called"])
def test_proper_nouns_need_capitals(words: list[str]) -> None:
    lower = [w.lower() for w in words]
    assert proper_noun_hits(_words(" ".join(lower)) if lower else [], KNOWN) == []


@given(cased_transcripts())
@example(["Her", "sister,", "Zoramathan", "called", "the", "clinic."])
@example(["Zoramathan", "I", "Okonkwo"])
def test_proper_noun_hits_are_ordered_disjoint_and_hold_an_unknown_word(words: list[str]) -> None:
    ws = _words(" ".join(words)) if words else []
    hits = proper_noun_hits(ws, KNOWN)
    for a, b in itertools.pairwise(hits):
        assert a.last < b.first
    for h in hits:
        assert 0 <= h.first <= h.last < len(ws)
        span = [w.text.strip(".,;:!?\"()[]{}").lower() for w in ws[h.first : h.last + 1]]
        assert any(x.replace("'s", "") not in KNOWN for x in span)


def _extended(text: str, hits: list[tuple[int, int, str]], known: frozenset[str] = KNOWN) -> list[str]:
    words = _words(text)
    given = [WordHit(a, b, t, "phi", "rules:test") for a, b, t in hits]
    return sorted(" ".join(w.text for w in words[h.first : h.last + 1])
                  for h in name_extensions(words, given, default_cues(), known))


@pytest.mark.parametrize(
    ("text", "hits", "joined"),
    [
        # the rest of a name heard as particles and a word
        ("Collateral from Santiago de la Aqua, per case", [(2, 4, "PERSON")], ["Santiago de la Aqua,"]),
        # a comma the recogniser put inside a name, before a short fragment
        ("Her husband, Ingrid Lindk, mist brought her", [(2, 3, "PERSON")], ["Ingrid Lindk, mist"]),
        # a comma before a clause word ends the name
        ("Her husband, Ingrid Lindk, and she", [(2, 3, "PERSON")], []),
        # a surname spelled as a lower-case word no dictionary lists; dictionary words are not taken
        ("Cheriff's affax in a twenty one year", [(0, 0, "PERSON")], ["Cheriff's affax"]),
        ("Cheriff's house in a", [(0, 0, "PERSON")], []),
        # a chain of short fragments the recogniser separated by commas
        ("Opposedment, Ices, part, as over, brought her", [(0, 0, "PERSON")], ["Opposedment, Ices, part, as over,"]),
        ("Opposedment, Ices, and she was tired", [(0, 0, "PERSON")], ["Opposedment, Ices,"]),
        # only short fragments: a list of longer words ends the chain
        ("Opposedment, appetite, energy, she", [(0, 0, "PERSON")], []),
        # from a name cue over dictionary words to the first name-like word
        ("The patient's name in use of Miller. Her", [(6, 6, "PERSON")], ["in use of Miller."]),
        ("She was seen by Dr. Lopez in the clinic.", [], ["Lopez"]),
        # "my name | is": the longer cue reaches from the next word, so "is" stays audible
        ("My name is Zoramathan and", [], ["Zoramathan"]),
        ("My name is in the chart. She", [], []),
        # a short lower-case word closed by a comma right after the name-like word is its last syllable
        ("Mr. said, Look over, report, spore sleep.", [], ["said, Look over,"]),
        ("Mr. Lopez was, she said", [], ["Lopez"]),
        ("Mr. Lopez, over, report", [], ["Lopez,"]),
        # a name's first syllable heard as "and" after a comma, before a name-like word
        ("Dick, take it by, and re-agassion nurse practitioner", [(5, 5, "PERSON")], ["and re-agassion"]),
        ("with her sister and Esther today", [(4, 4, "PERSON")], []),
        ("by, and Esther, nurse", [(2, 2, "PERSON")], ["and Esther,"]),
        ("by, and maria, nurse", [(2, 2, "PERSON")], []),
        # the capitalised words that go on a name mid-sentence; "I", months and a sentence end do not
        ("one to Kathleen Lord Rickson. The plan", [(2, 2, "PERSON")], ["Kathleen Lord Rickson."]),
        ("she told Maria I was in March", [(2, 2, "PERSON")], []),
        ("she told Maria Lexapro helps", [(2, 2, "PERSON")], []),
        ("she told Maria. Then", [(2, 2, "PERSON")], []),
        # a name set off by commas runs to its closing comma; a clause word or a sentence end comes first
        ("The emergency contact is the brother, Attavio again, Acquisienne, and", [(6, 6, "PERSON")],
         ["Attavio again,"]),
        ("She told her sister, Maria was tired, and", [(4, 4, "PERSON")], []),
        ("She told her sister, Maria. Then later, she", [(4, 4, "PERSON")], []),
        # an article after a cue that names a report's source, before a made-up word: the name's first syllable
        ("Dictated by the masclerct, no strac", [], ["the masclerct,"]),
        ("Referred by the emergency department", [], []),
        ("Dictated by the. Masclerct", [], []),
        # a street type after an address
        ("He lives on Cedar the court in Spokane", [(3, 4, "ADDRESS")], ["Cedar the court"]),
        ("She reports low mood.", [], []),
    ],
)
def test_name_extensions_join_split_names(text: str, hits: list[tuple[int, int, str]], joined: list[str]) -> None:
    known = KNOWN | {"per", "case", "husband", "her", "brought", "mist", "patient's", "use", "of", "miller",
                     "was", "seen", "by", "dr", "lopez", "chart", "he", "on", "cedar", "court", "spokane",
                     "collateral", "from", "santiago", "aqua", "ingrid", "a", "twenty", "one", "year", "house",
                     "ices", "part", "as", "over", "appetite", "energy", "tired", "were", "to", "told",
                     "helps", "then", "dick", "take", "it", "nurse", "practitioner", "today", "said",
                     "look", "report", "spore", "sleep", "mr"}
    assert _extended(text, hits, known) == joined


def _paused(text: str) -> list[Word]:
    """Words 0.1 s apart; a "|" puts a pause of one second before the next word."""
    out: list[Word] = []
    t = 0.0
    for w in text.split():
        if w == "|":
            t += 1.0
            continue
        out.append(Word(w, t, t + 0.4))
        t += 0.5
    return out


@pytest.mark.parametrize(
    ("text", "hit", "joined"),
    [
        # a name's last syllable heard as "and", with nothing after it: part of the name
        ("The patient's name is Jane Perlin, and | concentration is poor.", (4, 5), ["Jane Perlin, and"]),
        ("Her sister is Jane Perlin and", (3, 4), ["Jane Perlin and"]),
        # "and" that goes on to what it joins is a conjunction
        ("The patient's name is Jane Perlin, and she is tired.", (4, 5), []),
        # a word that can end a phrase is not taken
        ("Her sister Jane Perlin called | the clinic", (2, 3), []),
    ],
)
def test_a_phrase_opener_left_dangling_after_an_identifier_is_part_of_it(
    text: str, hit: tuple[int, int], joined: list[str]
) -> None:
    words = _paused(text)
    given = [WordHit(hit[0], hit[1], "PERSON", "phi", "rules:test")]
    found = [h for h in name_extensions(words, given, default_cues(), KNOWN | {"jane", "perlin"})
             if h.detector == "rules:audio.dangling-function-word"]
    assert _texts(words, found) == joined


@pytest.mark.parametrize(
    ("text", "hit", "joined"),
    [
        # a place's last syllables heard as "where he", then a pause: part of the place
        ("a hospital in Sofo, Burning, where he | He has been drinking", (3, 4), ["Sofo, Burning, where he"]),
        ("a hospital in Sofo, Burning, where he", (3, 4), ["Sofo, Burning, where he"]),
        # the clause goes on: a relative clause, not the place
        ("a hospital in Sofo, Burning, where he worked | for years", (3, 4), []),
        # a comma between the two words parts them
        ("a hospital in Sofo, Burning, where, he | He has", (3, 4), []),
        # a word that can end a phrase is not taken
        ("a hospital in Sofo, Burning, near here | He has", (3, 4), []),
        # a conjunction and its subject: a speaker pauses after them
        ("a hospital in Sofo, Burning, and he | was there", (3, 4), []),
    ],
)
def test_a_clause_opener_left_dangling_after_an_identifier_is_part_of_it(
    text: str, hit: tuple[int, int], joined: list[str]
) -> None:
    words = _paused(text)
    given = [WordHit(hit[0], hit[1], "LOCATION", "phi", "rules:test")]
    found = [h for h in name_extensions(words, given, default_cues(), KNOWN | {"sofo", "burning"})
             if h.detector == "rules:audio.dangling-clause-opener"]
    assert _texts(words, found) == joined


@given(cased_transcripts(), st.data())
@example(["Perlin", "and"], None)
def test_dangling_extension_adds_one_phrase_opener_before_a_pause(words: list[str], data: Any) -> None:
    ws = _words(" ".join(words)) if words else []
    if not ws:
        return
    a = data.draw(st.integers(0, len(ws) - 1)) if data is not None else 0
    b = data.draw(st.integers(a, len(ws) - 1)) if data is not None else 0
    given = [WordHit(a, b, "PERSON", "phi", "rules:test")]
    for h in name_extensions(ws, given, default_cues(), KNOWN):
        assert 0 <= h.first <= h.last < len(ws)
        if h.detector == "rules:audio.dangling-function-word":
            assert h.last == len(ws) - 1  # _words leaves no pause between words: only the last word dangles
            assert ws[h.last].text.strip(".,;:!?").lower() in {"and", "or", "nor", "of", "the", "a", "an", "to",
                                                                 "in", "with", "for", "at", "from", "by", "on"}


def _dates(text: str) -> list[str]:
    words = _words(text)
    return _texts(words, spoken_date_hits(words))


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        # small words of a date misheard: the day and year around the month are still the date
        ("Follow up is scheduled for March that twenty seventh. Lizzie", ["March that twenty seventh."]),
        ("scheduled for the fifteen some June, we discussed", ["the fifteen some June,"]),
        ("seen on the twenty-third of June. He", ["the twenty-third of June."]),
        ("born on the 14th of March, 1982. She", ["the 14th of March, 1982."]),
        ("born June twenty first two thousand and five, she", ["June twenty first two thousand and five,"]),
        # "of" heard as "and" after an ordinal day; after a cardinal "and" still parts two numbers from the month
        ("scheduled for the sixth and February. He", ["the sixth and February."]),
        ("She saw six and February was quiet.", []),
        # the day or the year's last word misheard as words that close the sentence
        ("Follow up his schedule for June that wales. She was seen", ["June that wales."]),
        ("born on February the Fourteenth, two thousand, chairman. Mrs. Lee", ["February the Fourteenth, two "
                                                                             "thousand, chairman."]),
        ("born on June three, ninety, maybe. She", ["June three, ninety, maybe."]),
        # words that go on a date, or a clause, are not its misheard rest
        ("She has been sober since June last year.", []),
        ("Her mood was low in June and she", []),
        ("It started in June, slowly.", []),
        # a month alone, a clause word between, and "may"/"march" as ordinary words are not dates here
        ("She may march in March and twenty patients came", []),
        ("She was seen in May. Twenty two were", []),
        ("Her mood in June was low.", []),
    ],
)
def test_spoken_dates_take_the_day_and_year_around_the_month(text: str, dates: list[str]) -> None:
    assert _dates(text) == dates


@given(cased_transcripts())
@example(["the", "fifteen", "some", "June,", "nineteen"])
def test_spoken_date_hits_hold_a_month_and_stay_in_range(words: list[str]) -> None:
    from anonpsy.audio.spoken import MONTHS

    ws = _words(" ".join(words)) if words else []
    for h in spoken_date_hits(ws):
        assert 0 <= h.first <= h.last < len(ws)
        assert any(w.text.strip(".,;:!?\"()[]{}").lower() in MONTHS for w in ws[h.first : h.last + 1])


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        # the month misheard as one or two words between the day and the year
        ("It was on the twenty six sonship timber, nineteen forty three. He", ["the twenty six sonship timber, "
                                                                             "nineteen forty three."]),
        ("born the fourth of Octo, two thousand and five, she", ["the fourth of Octo, two thousand and five,"]),
        ("born twelfth Jabber 1982 in", ["twelfth Jabber 1982"]),
        # a clause word, a date follower or a sentence end between is no month; numbers alone are no date
        ("She drank twenty beers and nineteen ninety was", []),
        ("about ten years ago, nineteen eighty", []),
        ("on the fifth. Nineteen forty", []),
        ("twenty six nineteen forty three", []),
        ("She had twenty six sessions, some nineteen hours", []),
    ],
)
def test_a_day_and_a_year_hold_the_misheard_month_between_them(text: str, dates: list[str]) -> None:
    words = _words(text)
    assert _texts(words, misheard_month_date_hits(words)) == dates


@given(cased_transcripts())
@example(["the", "twenty", "six", "timber,", "nineteen", "forty", "three."])
@example(["the", "fifth", "timber", "nineteen.", "forty", "three."])
@example(["ten-thoregist,", "nineteen", "fifty", "six."])
def test_misheard_month_dates_hold_a_year_and_stay_in_range(words: list[str]) -> None:
    ws = _words(" ".join(words)) if words else []
    for h in misheard_month_date_hits(ws):
        assert 0 <= h.first <= h.last < len(ws)
        assert h.last - h.first >= 2
        assert not any(w.text.rstrip().endswith((".", "?", "!")) for w in ws[h.first : h.last])


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        # the day heard as ordinary words, single letters among them, between the month and the year
        ("he was last seen on March, but T. s. nineteen fifty nine referred", ["March, but T. s. nineteen fifty "
                                                                              "nine"]),
        ("born in June, the whelp, 1982. She", ["June, the whelp, 1982."]),
        # a sentence end, more than four words, or no year after the month: no date here
        ("seen in March. Nineteen forty patients", []),
        ("in June she and her sister and mother moved in nineteen ninety", []),
        ("in June, the whelp, twenty two", []),
    ],
)
def test_a_month_and_a_year_hold_the_misheard_day_between_them(text: str, dates: list[str]) -> None:
    words = _words(text)
    assert _texts(words, month_year_hits(words)) == dates


def test_a_month_and_a_year_too_far_apart_in_time_are_two_things() -> None:
    words = [Word("June,", 0.0, 0.4), Word("then", 0.5, 0.8), Word("nineteen", 3.0, 3.4), Word("forty", 3.5, 3.8)]
    assert month_year_hits(words) == []


@given(cased_transcripts())
@example(["March,", "but", "T.", "nineteen", "fifty"])
def test_month_year_hits_run_from_a_month_to_a_year_in_one_sentence(words: list[str]) -> None:
    from anonpsy.audio.spoken import MONTHS

    ws = _words(" ".join(words)) if words else []
    for h in month_year_hits(ws):
        assert 0 <= h.first < h.last < len(ws)
        assert ws[h.first].text.strip(".,;:!?").lower() in MONTHS
        assert not any(w.text.rstrip().endswith((".", "?", "!")) and len(w.text.strip()) != 2
                       for w in ws[h.first : h.last])


def _found(fn: Any, text: str) -> list[str]:
    words = _words(text)
    return _texts(words, fn(words))


@pytest.mark.parametrize(
    ("text", "places"),
    [
        # a place heard as ordinary capitalised words
        ("She grew up in West Chase. Question", ["West Chase."]),
        ("rarer place in Pow. He smokes", ["Pow."]),
        ("He lives in Santiago de Chile now", ["Santiago de Chile"]),
        # the wider place after the place's comma, when it closes its own phrase
        ("a hospital in Sofo, Burning, where he", ["Sofo, Burning,"]),
        ("She grew up in Salem, Oregon. She", ["Salem, Oregon."]),
        ("She grew up in Salem, Mary came along.", ["Salem,"]),
        ("She grew up in Salem, she said.", ["Salem,"]),
        # a place's first syllable written as an initial
        ("transferred from a hospital in M. Till please call", ["M. Till"]),
        ("She was seen in B. ward", []),
        # a preposition closed by a comma: the words up to a name-like word within three are the place
        ("transferred from a hospital in, cast him at Peck-de-Bromo, affect", ["cast him at Peck-de-Bromo,"]),
        ("she was seen in, cast him at the clinic by", []),
        ("she was seen in, cast. Peck-de-Bromo", []),
        ("she was seen in, well, Lexapro trials", []),
        # a lower-case word no dictionary or clinical lexicon lists, after the preposition or one short word
        ("He lives on Einzro in his kinaporgal. She", ["his kinaporgal."]),
        ("He was born in zarakovny, she", ["zarakovny,"]),
        # ... and the place's next word heard as an ordinary word when it closes the sentence
        ("He lives on, wolf springs in, barrague burgers. He was calm", ["barrague burgers."]),
        ("He was born in zarakovny burgers and fries.", ["zarakovny"]),
        ("improvement in akathisia and in hypomanic states, started in sertraline", []),
        ("she lives in the basement", []),
        ("she is in his, kinaporgal", []),
        # months, abbreviations, drug names of the safelist, sentence openings and lower case are not places
        ("He attends meetings in AA and in March he was in Lexapro trials.", []),
        ("She was seen in. Clinic today", []),
        ("he grew up in west chase", []),
    ],
)
def test_capitalised_words_after_a_place_preposition_are_places(text: str, places: list[str]) -> None:
    assert _found(place_hits, text) == places


def test_a_cue_phrase_after_a_preposition_is_not_a_place() -> None:
    """ "from Social Work" says that a name comes before it; it is no place (the cue rules name the phrase)."""
    words = _words("The plan was discussed with Emily Lucoso from Social Work. She moved from Social Circle.")
    found = _texts(words, place_hits(words, default_cues()))
    assert found == ["Social Circle."]
    assert "Social Work." in _found(place_hits, "discussed with Emily Lucoso from Social Work.")


@pytest.mark.parametrize(
    ("text", "addresses"),
    [
        # the street name heard as ordinary words between the house number and the street type, and the unit
        ("found Jim outside, fifteen thirty six, no Melangust Street apartment, twenty five, the last night,",
         ["fifteen thirty six, no Melangust Street apartment, twenty five, the"]),
        ("lives at 412 Oak Street with her", ["412 Oak Street"]),
        ("he limb on, Farkas Terrace in, Rome", ["Farkas Terrace"]),
        # a house number glued to a street name the dictionary does not know, in one hyphenated word
        ("Police found him outside twenty-three-thirty-tenmy parkway last night.",
         ["twenty-three-thirty-tenmy parkway"]),
        # an unstressed syllable of the street name heard as "and", after a house number
        ("Police found him outside eighty-seven cents and crescent, unit thirty-five-may, last night.",
         ["eighty-seven cents and crescent, unit thirty-five-may,"]),
        ("She took twenty pills and drove to the court.", []),
        ("Ten minutes and a drive home.", []),
        # a street type heard as a word that sounds like it, after a house number and a capitalised name
        ("Police found him outside, five hundred Philip's screen last night.",
         ["five hundred Philip's screen"]),
        ("She lives at 9877 North Robbers and Ram with her mother.", ["9877 North Robbers and Ram"]),
        # ... never without a capitalised name, nor after a dose
        ("outside, five hundred philip's screen last night.", []),
        ("He was started on five milligrams, Worms daily.", []),
        ("She drank five beers a night.", []),
        # ... nor after a number longer than a house number
        ("Social security number 10897 3690 Speeches normal in rate and volume.", []),
        # a street name heard as two syllable words right after a house number of two number words or more
        ("She lived at seven, seven, nine, zero, nine, and a row with her mother.",
         ["seven, seven, nine, zero, nine, and a row"]),
        ("She missed three in a row.", []),
        # a street type word in ordinary speech is not an address
        ("She walks in the park every day.", []),
        ("She is over the hill and tired.", []),
        ("He has a twenty-minute drive to work and a ten-minute walk.", []),
    ],
)
def test_street_addresses_by_their_grammar(text: str, addresses: list[str]) -> None:
    assert _found(street_address_hits, text) == addresses


@given(cased_transcripts())
@example(["Street", "Street"])
@example(["one", "Oak", "Street", "apartment", "two"])
def test_grammar_hits_stay_in_range(words: list[str]) -> None:
    ws = _words(" ".join(words)) if words else []
    for fn in (place_hits, street_address_hits):
        for h in fn(ws):
            assert 0 <= h.first <= h.last < len(ws)


def test_a_gap_next_to_an_identifier_is_muted_with_it() -> None:
    from anonpsy.audio.gaps import classify_rules, find_gaps

    # "transferred from a hospital in Major [...]": the rest of the place name is voiced but not written
    words = _words("transferred from a hospital in Major. She")
    words[-1] = Word("She", 4.0, 4.3)
    voiced = [(0.0, 3.2), (4.0, 4.3)]
    gaps = find_gaps(voiced, words)
    assert len(gaps) == 1 and gaps[0].before == 5
    place = WordHit(5, 5, "LOCATION", "phi", "rules:test")
    (verdict,) = classify_rules(gaps, words, default_cues(), [place])
    assert verdict.phi and verdict.type == "LOCATION"
    assert verdict.detector == "rules:audio.gap-next-to-identifier"
    # the same gap after an ordinary word stays audible, and so does a long one
    (plain,) = classify_rules(gaps, words, default_cues(), [WordHit(0, 0, "PERSON", "phi", "rules:test")])
    assert not plain.phi
    long_gaps = find_gaps([(0.0, 6.0)], words[:-1])
    assert not classify_rules(long_gaps, words[:-1], default_cues(), [place])[0].phi


@pytest.mark.parametrize(
    ("text", "names", "addresses"),
    [
        # the street type heard as a short function word after a name the other rules found
        ("Police found him outside, two hundred Jason and last night,", ["Jason"], ["two hundred Jason and"]),
        # or not heard at all; the name may run over a few words
        ("She lives at eighty five Hawkins Ring, apartment ten", ["Hawkins Ring,"], ["eighty five Hawkins Ring,"]),
        # a made-up lower-case word after the number is the street's name as heard
        ("Police found him outside forty two zarakovny last night", [], ["forty two zarakovny"]),
        # the street type heard as a word that sounds like it, or written together with the name's last letter
        ("Police found him outside forty two zarakovny rode last night", [], ["forty two zarakovny rode"]),
        ("Police found him outside fifty mariaters away last night", [], ["fifty mariaters away"]),
        ("Police found him outside fifty mariaters alone last night", [], ["fifty mariaters"]),
        # a street name written as syllables joined by hyphens that no dictionary lists as one word
        ("Police found him outside ten hundred nickel-a-ro, last night", [], ["ten hundred nickel-a-ro,"]),
        ("She lives with her two mother-in-law and a dog", [], []),
        ("She sees her two-year-old day-to-day", [], []),
        # a comma after the number, a name that no number precedes, an ordinary word: no address
        ("She is forty two, Jason called", ["Jason"], []),
        ("Her brother Jason and her mother called", ["Jason"], []),
        ("She has two children and a dog", [], []),
    ],
)
def test_a_house_number_before_a_street_name_is_an_address(text: str, names: list[str], addresses: list[str]) -> None:
    words = _words(text)
    hits = []
    for name in names:
        n = len(name.split())
        first = next(k for k in range(len(words)) if " ".join(w.text for w in words[k : k + n]) == name)
        hits.append(WordHit(first, first + n - 1, "PERSON", "phi", "rules:test"))
    found = _texts(words, house_number_hits(words, hits))
    assert found == addresses


@given(cased_transcripts(), st.data())
@example(["one", "Jason"], None)
def test_house_number_hits_start_on_a_number_and_stay_in_range(words: list[str], data: Any) -> None:
    from anonpsy.audio.cues import is_number_word

    ws = _words(" ".join(words)) if words else []
    hits = []
    if ws and data is not None:
        k = data.draw(st.integers(0, len(ws) - 1))
        hits.append(WordHit(k, k, "PERSON", "phi", "rules:test"))
    for h in house_number_hits(ws, hits):
        assert 0 <= h.first < h.last < len(ws)
        assert is_number_word(ws[h.first].text.strip(".,;:?!").lower())


def test_street_types_follow_the_usps_suffix_list() -> None:
    from anonpsy.audio.detect import street_suffixes

    assert {"gardens", "garden", "valleys", "ramp", "crescent", "street"} <= street_suffixes()
    assert _found(street_address_hits, "She lives at three six one, dragon Valleys with her") == [
        "three six one, dragon Valleys"]


@pytest.mark.parametrize(
    ("text", "hits", "bridged"),
    [
        # a digit misheard as ordinary words between two parts of one number
        ("call the back on, four, three, or one for it, twelve, twenty five, after five.", [(4, 7), (10, 12)],
         ["for it,"]),
        # not across a sentence end, not over three words, not between a number and a name
        ("it was four three one two. For it, twelve twenty five", [(2, 5), (8, 10)], []),
        ("four three one two and then a twelve twenty five", [(0, 3), (7, 9)], []),
        ("four three one two for Maria Lopez", [(0, 3), (5, 6)], []),
    ],
)
def test_number_bridge_joins_two_numbers_over_a_misheard_digit(
    text: str, hits: list[tuple[int, int]], bridged: list[str]
) -> None:
    words = _words(text)
    given_hits = [WordHit(a, b, "OTHER_ID", "phi", "rules:test") for a, b in hits]
    found = number_bridge_hits(words, given_hits)
    assert _texts(words, found) == bridged


@given(cased_transcripts())
@example(["one", "two", "three", "x", "four", "five", "six"])
def test_number_bridge_hits_stay_between_two_hits(words: list[str]) -> None:
    ws = _words(" ".join(words)) if words else []
    n = len(ws)
    given_hits = [WordHit(k, min(n - 1, k + 2), "OTHER_ID", "phi", "rules:test") for k in range(0, n, 4)]
    for h in number_bridge_hits(ws, given_hits):
        assert 0 < h.first <= h.last < n - 1
        assert any(g.last == h.first - 1 for g in given_hits) and any(g.first == h.last + 1 for g in given_hits)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        # digits said one by one, some misheard as ordinary words that break the number apart
        # (its first item from the first word written for a digit: "For" may be "four")
        ("Her sal is five, salmon, five, salmon, one, eight, salmon, I know four, extension, one, four, three, and she",
         ["five, salmon, five, salmon, one, eight, salmon, I know four, extension, one, four, three,"]),
        ("For sal is five, salmon, five, one, eight, two, and she",
         ["For sal is five, salmon, five, one, eight, two,"]),
        ("call her back on, to free my night one, one, six, seven, three, zero, after five. Concentration",
         ["to free my night one, one, six, seven, three, zero,"]),
        ("She lives at seven, eight, four, three, four, Colemanville", ["seven, eight, four, three, four,"]),
        # fewer than four digits said alone, a long item, a sentence end, or no comma list: no number
        ("She sleeps four to five hours a night, and wakes early, one, two, three.", []),
        ("It was one, two. Three, four, and five", []),
        ("for suicidal ideation, she was admitted", []),
    ],
)
def test_digits_said_one_at_a_time_are_one_number(text: str, numbers: list[str]) -> None:
    assert _found(digit_list_hits, text) == numbers


@given(st.lists(st.sampled_from(("one,", "two,", "three.", "for", "it,", "to", "at", "Maria,", "and", "twelve,",
                                 "after", "salmon,")), max_size=30))
@example(["at", "one,", "salmon,", "two,", "three.", "one,", "two,", "twelve,", "one,"])
def test_digit_list_hits_end_on_a_number_within_a_sentence(words: list[str]) -> None:
    from anonpsy.audio.cues import is_numberish

    ws = _words(" ".join(words)) if words else []
    for h in digit_list_hits(ws):
        assert 0 <= h.first <= h.last < len(ws)
        assert is_numberish(ws[h.last].text.rstrip(".,").lower())
        assert not any(ws[k].text.endswith(".") for k in range(h.first, h.last))
        assert sum(1 for w in ws[h.first : h.last + 1] if w.text.rstrip(".,") in ("one", "two", "three", "twelve")) >= 4


@pytest.mark.parametrize(
    ("text", "hit", "edge"),
    [
        # digits at the start heard as "for it to", at the end as "this, and twelve"
        ("Here's a list for it to 7 to 3, 8 to 12, and cheek", (6, 11), "for it to 7 to 3, 8 to 12,"),
        ("call me at two, seven, zero, two, six, three, six, this, and twelve. Lydia", (3, 10),
         "two, seven, zero, two, six, three, six, this, and twelve."),
        # the preposition that opens the number, a sentence end, a name and short numbers stay out
        ("reached at four three one two. For it, to", (2, 5), None),
        ("reached at four three one two for Maria Lopez today", (2, 5), "four three one two for"),
        ("sleeps four to five hours", (1, 3), None),
        ("call her back on four three one two after five.", (4, 7), None),
    ],
)
def test_number_edges_take_digits_misheard_as_words(text: str, hit: tuple[int, int], edge: str | None) -> None:
    words = _words(text)
    found = number_edge_hits(words, [WordHit(hit[0], hit[1], "OTHER_ID", "phi", "rules:test")])
    assert _texts(words, found) == ([edge] if edge else [])


@given(st.lists(st.sampled_from(("one", "two,", "three.", "for", "it", "to", "at", "Maria", "and", "twelve.")),
                max_size=24), st.data())
@example(["for", "it", "to", "one", "two", "three", "one", "it", "twelve."], None)
def test_number_edge_hits_grow_a_hit_within_its_sentence(words: list[str], data: Any) -> None:
    ws = _words(" ".join(words)) if words else []
    n = len(ws)
    if n == 0:
        return
    first = data.draw(st.integers(0, n - 1)) if data else 3
    last = data.draw(st.integers(first, n - 1)) if data else 6
    given_hit = WordHit(first, last, "OTHER_ID", "phi", "rules:test")
    for h in number_edge_hits(ws, [given_hit]):
        assert 0 <= h.first <= first and last <= h.last < n
        assert (h.first, h.last) != (first, last)
        outside = [*range(h.first, first), *range(last, h.last)]
        assert not any(ws[k].text.endswith(".") for k in outside)


@given(st.floats(0.0, 0.5), st.floats(0.0, 0.5), st.sampled_from(["PERSON", "DATE", "ADDRESS"]))
@example(0.05, 0.05, "PERSON")
def test_name_words_get_the_name_end_extra_and_other_identifiers_do_not(
    end_extra: float, name_extra: float, kind: str
) -> None:
    import numpy as np

    from anonpsy.audio.pipeline import _word_intervals
    from anonpsy.audio.signal import Audio

    audio = Audio(np.zeros((16000 * 4, 1), dtype=np.int16), 16000, "WAV", "PCM_16", "FILE")
    words = [Word("Becky", 1.0, 1.4)]
    (iv,) = _word_intervals(words, [WordHit(0, 0, kind, "phi", "rules:test")], audio, 0.2, end_extra, name_extra)
    want = 1.4 + 0.2 + end_extra + (name_extra if kind == "PERSON" else 0.0)
    assert abs(iv.end - want) <= 1.0 / 16000 + 1e-4


def test_the_margin_reaches_only_a_little_into_a_sure_unmarked_neighbour() -> None:
    import numpy as np

    from anonpsy.audio.pipeline import _word_intervals
    from anonpsy.audio.signal import Audio

    audio = Audio(np.zeros((16000 * 4, 1), dtype=np.int16), 16000, "WAV", "PCM_16", "FILE")

    def interval(before: float | None, after: float | None, marked: bool = False) -> tuple[float, float]:
        words = [Word("call", 0.5, 1.0, before), Word("Okafor", 1.0, 1.5, 0.4), Word("today", 1.5, 2.0, after)]
        hits = [WordHit(1, 1, "PERSON", "phi", "rules:test")]
        if marked:
            hits.append(WordHit(2, 2, "PERSON", "phi", "rules:test"))
        iv = _word_intervals(words, hits, audio, 0.2, 0.05, 0.05, sure_above=0.95, sure_margin=0.1)[0]
        return iv.start, iv.end

    tol = 1.0 / 16000 + 1e-4
    start, end = interval(0.99, 0.97)  # both neighbours sure: 0.1 s into each, the end extras kept
    assert abs(start - 0.9) <= tol and abs(end - 1.6) <= tol
    start, end = interval(0.9, None)  # unsure or without a confidence: the whole margin
    assert abs(start - 0.8) <= tol and abs(end - 1.8) <= tol
    start, end = interval(0.99, 0.99, marked=True)  # a neighbour a rule marks is no ordinary speech
    assert abs(start - 0.9) <= tol and abs(end - 1.8) <= tol


_RUN_ON_WORDS = ("her", "husband,", "husband", "sister", "Raffailey", "knows", "it", "alone,", "brought", "home.",
                 "called", "and", "my", "little", "old", "wolf,", "by", "phone.")


@given(st.lists(st.sampled_from(_RUN_ON_WORDS), max_size=24))
@example(["her", "husband,", "Raffailey", "knows", "it", "alone,", "brought", "her"])
def test_a_cue_region_runs_on_only_to_punctuation(words: list[str]) -> None:
    """Past ``reach_words`` a region takes at most ``phrase_reach_words`` more, and then ends at punctuation."""
    ws = _words(" ".join(words)) if words else []
    for m in default_cues().spans(ws):
        size = m.last - m.first + 1
        if size <= m.rule.reach_words:
            continue
        assert size <= m.rule.reach_words + m.rule.phrase_reach_words
        assert ws[m.last].text.endswith((",", ";", ".", "?", "!"))


@given(st.lists(st.sampled_from(("his", "partner", "and", "an", "Salvo,", "salvo", "her", "mother", "who", "is",
                                 "I", "came.")), max_size=20))
@example(["his", "partner", "and", "Salvo,", "who", "is"])
def test_a_region_opens_on_a_stop_word_only_before_a_capitalised_name(words: list[str]) -> None:
    """A person cue's region starts with a stop word only as a name's first syllable before a capitalised word."""
    ws = _words(" ".join(words)) if words else []
    for m in default_cues().spans(ws):
        if _core_text(ws[m.first].text) not in m.rule.stop_words:
            continue
        assert m.rule.type == "PERSON" and m.first < m.last
        assert ws[m.first + 1].text[0].isupper() and ws[m.first + 1].text != "I"


def _core_text(text: str) -> str:
    return text.strip(".,;:!?\"()[]{}").lower()


def test_capitalised_words_after_a_pause_start_a_sentence_not_a_name() -> None:
    """A server transcript without punctuation: the capitalised word after a pause opens the next sentence."""
    words = _paused("her sister Esther Okafor | Date of birth")
    given = [WordHit(2, 3, "PERSON", "phi", "rules:test")]
    assert name_extensions(words, given, default_cues(), KNOWN | {"date", "of", "birth", "okafor"}) == []
    words = _paused("her sister Esther Okafor Date of birth")
    got = name_extensions(words, given, default_cues(), KNOWN | {"date", "of", "birth", "okafor"})
    assert [(h.first, h.last) for h in got] == [(2, 4)]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Millicent Eraslan in a forty three year old man seen for anxiety.", ["Millicent Eraslan"]),
        ("Intact. With a pigman in pole is a 20-year-old woman", ["With a pigman in pole"]),
        ("Mister Fang is a sixty-five-year-old man", ["Fang"]),
        # the full stop before the sentence heard as a comma: capitalised words after it are the name
        ("She was calm with the Macdude, old iPhone, Miko Clement, in a thirty eight year old man",
         ["Miko Clement,"]),
        ("She was calm with the old iPhone, Clement in a thirty eight year old man", ["Clement"]),
        # lower-case words, "I", or more than three words after the comma are no name
        ("She was calm with the dog, her sister in a forty year old woman", []),
        ("She was calm with the dog, I am a forty year old", []),
        ("She was calm with the dog, Anna Maria Lopez Garcia is a forty year old woman", []),
        # a pronoun, a noun that names no one, a clause around the subject, no age, a sentence too far back
        ("She is a forty two year old woman", []),
        ("The patient is a 40-year-old man", []),
        ("Then she said that John is a forty year old", []),
        ("He took a year off.", []),
        ("Rita is a year-old", []),
        ("one two three four five six seven is a forty year old", []),
    ],
)
def test_the_words_opening_a_sentence_before_an_age_are_the_name(text: str, names: list[str]) -> None:
    words = _words(text)
    assert _texts(words, subject_hits(words)) == names


@given(cased_transcripts())
@example(["Maria", "is", "a", "forty", "year", "old"])
@example(["Well.", "in", "a", "20-year-old"])
def test_age_subject_hits_end_before_the_age_within_one_sentence(words: list[str]) -> None:
    ws = _words(" ".join(words)) if words else []
    cores = [w.text.strip(".,;:?!").lower() for w in ws]
    for h in subject_hits(ws):
        assert 0 <= h.first <= h.last < len(ws) - 3
        assert len(cores[h.last + 1]) <= 3 and cores[h.last + 2] in ("a", "an")
        assert h.first == 0 or ws[h.first - 1].text.endswith((".", "?", "!")) or cores[h.first - 1] in (
            "doctor", "dr", "mister", "mr", "missus", "mrs", "miss", "ms", "prof", "st") or (
            ws[h.first - 1].text.endswith(",") and h.last - h.first < 3
            and all(w.text[:1].isupper() for w in ws[h.first : h.last + 1]))
        assert not any(ws[k].text.endswith((".", "?", "!")) for k in range(h.first, h.last + 1))


@pytest.mark.parametrize(
    ("text", "hit", "edge"),
    [
        # "nine" heard as "I'm", "eight" as "it" right beside a long number
        ("back on. I'm four five, three four seven, seven six or eight, after five.", (3, 11),
         "I'm four five, three four seven, seven six or eight,"),
        ("number. It it for it six, three four five one.", (3, 8), "It it for it six, three four five one."),
        # but not beside a short one
        ("I'm forty. It is", (1, 1), None),
    ],
)
def test_digits_run_into_a_word_at_a_long_numbers_edge(text: str, hit: tuple[int, int], edge: str | None) -> None:
    words = _words(text)
    found = number_edge_hits(words, [WordHit(hit[0], hit[1], "OTHER_ID", "phi", "rules:test")])
    assert _texts(words, found) == ([edge] if edge else [])


def test_a_house_number_before_an_address_crosses_an_unpaused_full_stop() -> None:
    words = _words("Police found him outside, 682. A waka drive, apartment 21d, last night.")
    hit = WordHit(5, 9, "ADDRESS", "phi", "rules:test")
    found = _texts(words, house_number_hits(words, [hit]))
    assert found and all(f.startswith("682. A") for f in found)
    paused = [*words[:5], Word(words[5].text, 3.2, 3.6), *(Word(w.text, w.start + 1.0, w.end + 1.0) for w in words[6:])]
    assert house_number_hits(paused, [hit]) == []
    assert house_number_hits(words, [WordHit(5, 9, "DATE", "phi", "rules:test")]) == []


def test_a_place_takes_the_rest_of_it_spelled_as_made_up_words() -> None:
    known = KNOWN | {"i", "spoke", "with", "her", "daughter", "sis", "in", "by", "phone"}
    assert _extended("I spoke with her daughter, sis, in bysoder, agba, by phone.", [(6, 7, "LOCATION")], known) \
        == ["in bysoder, agba,"]


@pytest.mark.parametrize(
    ("text", "name", "address"),
    [
        # a digit heard as a word inside the house number, or run into one
        ("Police found him outside, 750 for Shirley Place, last night.", "Shirley Place,", "750 for Shirley Place,"),
        ("outside, five salmon-six to salmon Jefferson Hill last night", "salmon Jefferson Hill",
         "five salmon-six to salmon Jefferson Hill"),
        # but the number starts on a number word, and an article that opens a number stays out
        ("she said for Shirley Place", "Shirley Place", None),
    ],
)
def test_a_house_number_holds_the_digits_heard_as_words(text: str, name: str, address: str | None) -> None:
    words = _words(text)
    n = len(name.split())
    first = next(k for k in range(len(words)) if " ".join(w.text for w in words[k : k + n]) == name)
    hits = house_number_hits(words, [WordHit(first, first + n - 1, "PERSON", "phi", "rules:test")])
    assert _texts(words, hits) == ([address] if address else [])


def test_a_compass_word_and_a_first_syllable_open_a_street_or_place() -> None:
    known = KNOWN | {"he", "limbs", "on", "south", "in", "here", "husband", "brought", "to", "lives", "boston", "today"}
    assert _extended("He limbs on south, Selamon, Bouleymar, in Breland", [(4, 5, "LOCATION")], known) == [
        "south, Selamon, Bouleymar,"]
    assert _extended("Here husband, in Umdemoclean, brought her", [(3, 3, "LOCATION")], known) == [
        "in Umdemoclean,"]
    assert _extended("She lives in Boston today", [(3, 3, "LOCATION")], known) == []


def test_a_function_word_after_a_name_cue_before_a_made_up_word_is_the_names_first_syllable() -> None:
    assert _extended("He lives with his partner and sourdough, who is supportive.", []) == ["and sourdough,"]
    # an ordinary word after it, or no name cue before it: nothing
    assert _extended("He lives with his partner and children, who are supportive.", []) == []
    assert _extended("He lives with sugar and sourdough, who knew.", []) == []


def test_an_article_before_a_name_is_its_first_syllable() -> None:
    text = "The plan was disclosed with an Olivia Salo from social work."
    known = frozenset(text.lower().replace(".", "").split())
    assert _extended(text, [(6, 7, "PERSON")], known) == ["an Olivia Salo"]
    # only before a capitalised name word, and never over a comma
    assert _extended(text.replace("Olivia Salo", "olivia salo"), [(6, 7, "PERSON")], known) == []
    assert _extended(text.replace("an Olivia", "an, Olivia"), [(6, 7, "PERSON")], known) == []


def test_a_plural_ordinal_before_a_month_is_its_day() -> None:
    assert _dates("Follow up in schedule for the twenty sixths of August. Here,") == ["the twenty sixths of August."]


def test_a_units_number_misheard_as_short_words_stays_with_the_address() -> None:
    text = "outside twenty-five sixty-two oxalo-rulimar apartment, soy the eight last night."
    assert _extended(text, [(1, 3, "ADDRESS")]) == ["twenty-five sixty-two oxalo-rulimar apartment, soy the eight"]
    assert _extended("at twelve Oak Street apartment, and then she left", [(1, 3, "ADDRESS")]) == []


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        # a day or a month said as a number right before a year: the recogniser lost the month's name
        ("Daytonburg, four. 1933 Effect is constricted", ["four. 1933"]),
        ("She was born four, nineteen thirty three. Effect", ["four, nineteen thirty three."]),
        ("seen on the fourteenth 2003 for anxiety", ["fourteenth 2003"]),
        # a year said as "twenty nineteen", a longer number, a number past 31, a pause after a full stop: no date
        ("She moved here in twenty nineteen forty", []),
        ("call five five 2019 now", []),
        ("She drank forty 1990s sodas", []),
    ],
)
def test_a_day_right_before_a_year_is_a_date(text: str, dates: list[str]) -> None:
    from anonpsy.audio.detect import day_year_hits

    words = _words(text)
    found = _texts(words, day_year_hits(words))
    assert found == dates
    paused = [Word(w.text, w.start + (1.0 if k > 1 else 0.0), w.end + (1.0 if k > 1 else 0.0))
              for k, w in enumerate(_words("Daytonburg, four. 1933 Effect"))]
    assert day_year_hits(paused) == []


def test_a_day_written_with_its_misheard_month_before_a_year_is_a_date() -> None:
    words = _words("Kate Hoggworth, ten-thoregist, nineteen fifty six, referred by")
    found = _texts(words, misheard_month_date_hits(words))
    assert found == ["ten-thoregist, nineteen fifty six,"]
    words = _words("a well-known, nineteen fifty six")
    assert misheard_month_date_hits(words) == []


@pytest.mark.parametrize(
    ("text", "towns"),
    [
        # the town after an address's "in" or comma, heard as ordinary words up to the sentence's end
        ("He lives on North Oscarlaine in our heavy. The account", ["our heavy."]),
        ("Her address is four Oak Street, Salem Mass. She", ["Salem Mass."]),
        # an ordinary phrase, a clause or a sentence that goes on is no town
        ("He lives on North Oscarlaine in his car. The", []),
        ("He lives on North Oscarlaine in a shelter. The", []),
        ("He lives on North Oscarlaine in our heavy rain and wind today. The", []),
        ("He lives on North Oscarlaine, she said. The", []),
        # capitalised words a comma closes where the recogniser missed the full stop after the town
        ("Her address is four Oak Street, Wrexham, the plan was discussed", ["Wrexham,"]),
        ("Her address is four Oak Street, Monday, the plan was discussed", []),
        ("Her address is four Oak Street, Mary said, the plan was discussed", []),
    ],
)
def test_the_town_after_an_address(text: str, towns: list[str]) -> None:
    from anonpsy.audio.detect import address_town_hits

    words = _words(text)
    street = next(k for k, w in enumerate(words) if w.text.strip(",") in ("Oscarlaine", "Street"))
    address = WordHit(street - 2, street, "ADDRESS", "phi", "rules:test")
    found = _texts(words, address_town_hits(words, [address]))
    assert found == towns
    assert all(h.type == "LOCATION" for h in address_town_hits(words, [address]))


@pytest.mark.parametrize(
    ("text", "probs", "towns"),
    [
        # a town the recogniser did not know, every word of it unsure: four words and clause words are taken
        ("six waist, John Ramp, it's a bit tilinger. He was", [0.98, 0.4, 0.84, 0.61, 0.51, 0.51, 0.51, 0.51,
                                                             1.0, 1.0], ["it's a bit tilinger."]),
        # heard with confidence: an ordinary clause after the address
        ("six waist, John Ramp, it's a bit tighter. He was", [0.98, 0.4, 0.84, 0.61, 0.9, 0.9, 0.9, 0.9, 1.0,
                                                            1.0], []),
        # one word heard with confidence among them: not all of them unsure
        ("six waist, John Ramp, it's a bit tilinger. He was", [0.98, 0.4, 0.84, 0.61, 0.51, 0.51, 0.9, 0.51,
                                                             1.0, 1.0], []),
        # five words: a sentence, not a town
        ("six waist, John Ramp, it's a bit tilinger here. He", [0.98, 0.4, 0.84, 0.61, 0.5, 0.5, 0.5, 0.5, 0.5,
                                                              1.0], []),
    ],
)
def test_a_town_heard_as_unsure_words_after_an_address(text: str, probs: list[float], towns: list[str]) -> None:
    from anonpsy.audio.detect import address_town_hits

    words = _scored(text, probs)
    address = WordHit(0, 3, "ADDRESS", "phi", "rules:test")
    assert _texts(words, address_town_hits(words, [address])) == towns


def _scored(text: str, probs: list[float | None]) -> list[Word]:
    return [Word(w, i * 0.3, i * 0.3 + 0.28, p) for i, (w, p) in enumerate(zip(text.split(), probs, strict=True))]


_ADDRESS = "She leaves at nine hundred five what kings part with her mother."


@pytest.mark.parametrize(
    ("probs", "span"),
    [
        # three unsure words after the house number: the street name heard as ordinary words
        ([1.0, 0.9, 0.9, 0.7, 0.96, 0.7, 0.19, 0.39, 0.25, 0.95, 0.9, 0.9], (3, 8)),
        # only two unsure words: as often ordinary speech misheard, nothing added
        ([1.0, 0.9, 0.9, 0.7, 0.96, 0.7, 0.19, 0.39, 0.95, 0.95, 0.9, 0.9], None),
        # no confidences (PocketSphinx, the moonshine-cpp library): nothing added
        ([None] * 12, None),
    ],
)
def test_unsure_run_joins_the_address_it_touches(probs: list[float | None], span: tuple[int, int] | None) -> None:
    words = _scored(_ADDRESS, probs)
    hits = [WordHit(3, 5, "ADDRESS", "phi", "rules:audio.house-number")]
    got = unsure_extensions(words, hits)
    assert [(h.first, h.last, h.type) for h in got] == ([(*span, "ADDRESS")] if span else [])


def test_unsure_run_away_from_identifiers_or_past_a_sentence_is_not_joined() -> None:
    words = _scored("He is Smith. And they feel sleepy now", [1.0, 1.0, 0.9, 0.2, 0.2, 0.2, 0.2, 1.0])
    # the run after the full stop does not continue the name; a run touching no identifier is left alone
    assert unsure_extensions(words, [WordHit(2, 2, "PERSON", "phi", "rules:x")]) == []
    assert unsure_extensions(words, []) == []
    # and a date is not continued: only names, places and addresses are heard as ordinary words this way
    assert unsure_extensions(words, [WordHit(3, 3, "DATE", "phi", "rules:x")]) == []
    assert [(h.first, h.last) for h in unsure_extensions(words, [WordHit(3, 3, "PERSON", "phi", "rules:x")])] == [
        (3, 6)
    ]


@pytest.mark.parametrize(
    ("text", "probs", "span"),
    [
        # one word the recogniser was surer of between the name and the rest of it heard as unsure words
        ("with her, Christie, I'm more an ex, oop, my phone.", [0.74, 0.91, 0.48, 0.93, 0.27, 0.33, 0.16, 0.2,
                                                               0.83, 0.8], "Christie, I'm more an ex, oop,"),
        # two words between: ordinary speech after the name
        ("with her, Christie, I'm very more an ex, oop, my phone.", [0.74, 0.91, 0.48, 0.93, 0.9, 0.27, 0.33,
                                                                    0.16, 0.2, 0.83, 0.8], None),
        # a full stop between: the next sentence
        ("with her, Christie. I'm more an ex, oop, my phone.", [0.74, 0.91, 0.48, 0.93, 0.27, 0.33, 0.16, 0.2,
                                                               0.83, 0.8], None),
    ],
)
def test_unsure_run_one_word_from_a_name_joins_it(text: str, probs: list[float], span: str | None) -> None:
    words = _scored(text, probs)
    got = _texts(words, unsure_extensions(words, [WordHit(2, 2, "PERSON", "phi", "rules:x")]))
    assert got == ([span] if span else [])


def _timed(*parts: tuple[str, float]) -> list[Word]:
    """Words of 0.25 s each, each after the pause given with it."""
    out, t = [], 0.0
    for text, pause in parts:
        t += pause
        out.append(Word(text, t, t + 0.25))
        t += 0.25
    return out


def test_a_pause_after_a_spoken_number_ends_a_cue_region() -> None:
    said = [("the", 0.0), ("account", 0.05), ("number", 0.05), ("is", 0.05)]
    digits = [("four,", 0.05), ("four,", 0.2), ("six,", 0.2), ("seven,", 0.2), ("five,", 0.2), ("nine,", 0.2)]
    after = [("question,", 0.4), ("upon", 0.05), ("fifty", 0.05), ("milligrams", 0.05)]
    spans = [m for m in default_cues().spans(_timed(*said, *digits, *after)) if m.rule.id == "audio.telephone.spoken"]
    assert [(m.first, m.last) for m in spans] == [(4, 9)]
    # the same pause inside the number, or after a number of fewer words, does not end it
    short = [("four,", 0.05), ("four,", 0.2), ("six,", 0.2), ("seven,", 0.4), ("five,", 0.2), ("nine,", 0.2)]
    spans = [m for m in default_cues().spans(_timed(*said, *short)) if m.rule.id == "audio.telephone.spoken"]
    assert [(m.first, m.last) for m in spans] == [(4, 9)]
    spans = [m for m in default_cues().spans(_timed(*said, *digits[:2], ("fine", 0.4), ("so", 0.05)))
             if m.rule.id == "audio.telephone.spoken"]
    assert [(m.first, m.last) for m in spans] == [(4, 7)]


def test_a_rating_scales_score_is_no_spoken_identifier() -> None:
    cues = default_cues()
    score = [w.text for w in _words("her score on the Ph. Q. nine, one, eighteen, down from twenty-two.")]
    assert not [m for m in cues.number_spans(score) if m.rule.id == "audio.number.spoken-id"]
    spelled = [w.text for w in _words("first floor on the Ph. Q. nine, one, eighteen, down from twenty-two.")]
    assert not [m for m in cues.number_spans(spelled) if m.rule.id == "audio.number.spoken-id"]
    phone = [w.text for w in _words("her score was fine. call two five three five five five zero one two seven")]
    assert [m for m in cues.number_spans(phone) if m.rule.id == "audio.number.spoken-id"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # a phone number the recogniser wrote in digit groups was said a digit at a time
        ("Their sales vary to 723-8112 and cheaper Thursday.", True),
        ("call me at 555-0127 please", True),
        # a range of years, a short group: not a number said digit by digit
        ("She worked there 1990-2005 and then retired.", False),
        ("She worked there 12-14 hours a day.", False),
    ],
)
def test_a_number_written_in_digit_groups_counts_its_digits_as_words(text: str, found: bool) -> None:
    words = [w.text for w in _words(text)]
    assert bool([m for m in default_cues().number_spans(words) if m.rule.id == "audio.number.spoken-id"]) is found


def test_nine_heard_as_i_stays_inside_a_cued_number() -> None:
    words = _words("Medical record number six, I, I know, I know six. Condition was intact.")
    spans = [m for m in default_cues().spans(words) if m.rule.id == "audio.id.record-number"]
    assert [(m.first, m.last) for m in spans] == [(3, 9)]


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        # nine digits said digit by digit (a misheard one among them): the tenth heard as a word before a comma
        ("call the Maccon. six, five, eight, zero, one, two, three, hind, two, salmon, after five.",
         "six, five, eight, zero, one, two, three, hind, two, salmon,"),
        # ten digits already, or no comma after the word, or a clause word: nothing more
        ("call six, five, eight, zero, one, two, three, nine, two, seven, salmon, after five.", None),
        ("call six, five, eight, zero, one, two, three, hind, two, salmon after five.", None),
        ("call six, five, eight, zero, one, two, three, hind, two, and, after five.", None),
    ],
)
def test_a_phone_number_one_digit_short_takes_the_word_after_it(text: str, edge: str | None) -> None:
    words = _words(text)
    first = next(k for k, w in enumerate(words) if w.text == "six,")
    last = max(k for k, w in enumerate(words) if w.text in ("two,", "seven,"))
    found = number_edge_hits(words, [WordHit(first, last, "OTHER_ID", "phi", "rules:test")])
    assert _texts(words, found) == ([edge] if edge else [])


@pytest.mark.parametrize(
    ("probs", "edge"),
    [
        # a word the recogniser was unsure of before the digit it misheard at a phone number's start
        ([0.23, 0.6, 0.26, 0.65, 0.69, 0.59], "vary to 723-8112"),
        # sure of it: ordinary speech
        ([0.23, 0.6, 0.96, 0.65, 0.69, 0.59], "to 723-8112"),
    ],
)
def test_an_unsure_word_beside_a_misheard_digit_of_a_phone_number_is_a_digit(probs: list[float],
                                                                           edge: str) -> None:
    words = _scored("Their sales vary to 723-8112 and", probs)
    found = number_edge_hits(words, [WordHit(4, 4, "OTHER_ID", "phi", "rules:test")])
    assert _texts(words, found) == [edge]
    # a number of fewer digits, or no misheard digit taken at that edge: the unsure word stays audible
    short = _scored("Their sales vary to 723-81 and", probs)
    assert [" ".join(w.text for w in short[h.first : h.last + 1])
            for h in number_edge_hits(short, [WordHit(4, 4, "OTHER_ID", "phi", "rules:test")])] == ["to 723-81"]
    bare = _scored("Their sales vary 723-8112 and", probs[:2] + probs[3:])
    assert number_edge_hits(bare, [WordHit(3, 3, "OTHER_ID", "phi", "rules:test")]) == []


@pytest.mark.parametrize(
    ("text", "probs", "street"),
    [
        # a house number after "at" and three words the recogniser was unsure of: the street heard as words
        ("She leaves at nine hundred five what kings part with her mother.",
         [0.92, 0.56, 0.74, 0.68, 0.96, 0.69, 0.19, 0.39, 0.25, 0.65, 0.9, 0.9],
         "at nine hundred five what kings part"),
        # two unsure words, one number word (a time), no street preposition, or sure words: no address
        ("She leaves at nine hundred five what kings part with her mother.",
         [0.92, 0.56, 0.74, 0.68, 0.96, 0.69, 0.19, 0.39, 0.95, 0.65, 0.9, 0.9], None),
        ("She leaves at nine what kings part with her mother.",
         [0.92, 0.56, 0.74, 0.68, 0.19, 0.39, 0.25, 0.65, 0.9, 0.9], None),
        ("She drank only nine hundred five what kings part with her mother.",
         [0.92, 0.56, 0.74, 0.68, 0.96, 0.69, 0.19, 0.39, 0.25, 0.65, 0.9, 0.9], None),
        ("She leaves at nine hundred five what kings part with her mother.", [0.95] * 12, None),
    ],
)
def test_a_house_number_after_a_street_preposition_and_unsure_words_is_an_address(
    text: str, probs: list[float], street: str | None
) -> None:
    from anonpsy.audio.detect import unsure_street_hits

    words = _scored(text, probs)
    found = [" ".join(w.text for w in words[h.first - 1 : h.last + 1]) for h in unsure_street_hits(words)]
    assert found == ([street] if street else [])


def test_an_unsure_clause_word_does_not_stop_the_name_before_an_age() -> None:
    text = "Intact. She renal willow in a twenty-eight year old man"
    sure = _scored(text, [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9])
    unsure = _scored(text, [1.0, 0.41, 0.11, 0.75, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9])
    assert subject_hits(sure) == []
    assert [(h.first, h.last) for h in subject_hits(unsure)] == [(1, 3)]


@pytest.mark.parametrize(
    ("text", "probs", "name"),
    [
        # "Einari Novais is a" heard as "I are in ovaries in a": "I" before an unsure word is the name's sound
        ("four. I are in ovaries in a forty year old man", [1.0, 0.69, 0.28, 0.89, 0.81, 0.47, 0.8, 0.99, 0.74,
                                                           0.99, 0.88], "I are in ovaries"),
        # "I am a forty year old man": the speaker
        ("four. I am a forty year old man", [1.0, 0.69, 0.28, 0.8, 0.99, 0.74, 0.99, 0.88], None),
        # "I" before a word the recogniser was sure of is the speaker
        ("four. I saw him in a forty year old man", [1.0, 0.9, 0.95, 0.9, 0.9, 0.8, 0.99, 0.74, 0.99, 0.88], None),
    ],
)
def test_i_before_an_unsure_word_opening_the_name_before_an_age(text: str, probs: list[float], name: str | None
                                                                ) -> None:
    words = _scored(text, probs)
    assert _texts(words, subject_hits(words)) == ([name] if name else [])


def test_a_conjunction_opening_the_sentence_does_not_stop_the_name_before_an_age() -> None:
    words = _scored("Intact. And the land-crown in a seventy three year old man",
                    [1.0, 0.86, 0.41, 0.42, 0.49, 0.82, 1.0, 0.56, 0.57, 0.95, 0.98])
    # the conjunction is muted with the name: it is as often the name's first syllable
    assert [(h.first, h.last) for h in subject_hits(words)] == [(1, 3)]
    # a sure pronoun after it is still no name
    words = _scored("Intact. And she is a seventy three year old man", [1.0] * 10)
    assert subject_hits(words) == []


@pytest.mark.parametrize(
    ("text", "probs", "span"),
    [
        # a name heard as a stop word the recogniser was unsure of, right after the cue
        ("seen today by doctor, who, in the clinic", [0.9, 0.9, 0.9, 0.64, 0.16, 0.99, 0.9, 0.9], "who,"),
        # the same word heard with confidence is the stop word it reads as
        ("seen today by doctor, who, in the clinic", [0.9, 0.9, 0.9, 0.64, 0.9, 0.99, 0.9, 0.9], None),
        # an unsure stop word that opens the next cue ("her brother") is not taken for the name
        ("I spoke with her sister, Alan.", [0.9, 0.9, 0.9, 0.3, 0.9, 0.9], "Alan."),
        # before an ``after`` cue: from the unsure stop word right before it, the name runs back as usual
        ("the plan was discussed will tend to it from social work", [0.9] * 7 + [0.34, 0.97, 1.0, 1.0],
         "will tend to it"),
        # and further back: each unsure stop word within the reach is a syllable of the name
        ("tainted by, as me, angek, nurse practitioner.", [0.27, 0.96, 0.44, 0.75, 0.07, 0.96, 0.97], "as me, angek,"),
    ],
)
def test_an_unsure_stop_word_beside_a_cue_is_the_name(text: str, probs: list[float], span: str | None) -> None:
    words = _scored(text, probs)
    got = [" ".join(w.text for w in words[m.first : m.last + 1]) for m in default_cues().spans(words)
           if m.rule.type == "PERSON"]
    assert got == ([span] if span else [])


@pytest.mark.parametrize(
    ("text", "probs", "subject"),
    [
        # the relative and their name heard as ordinary words the recogniser was unsure of
        ("affair. Posse sat hand or called the clinic", [0.24, 0.34, 0.19, 0.6, 0.29, 0.59, 0.95, 0.94],
         "Posse sat hand or"),
        # heard with confidence: ordinary words
        ("affair. Posse sat hand or called the clinic", [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.95, 0.94], None),
        # one unsure word is as often a clipped ordinary word
        ("Intact. Her sister Harriet called the clinic", [0.9, 0.9, 0.9, 0.3, 0.9, 0.95, 0.94], None),
        # a pronoun the recogniser was sure of is no name
        ("Intact. She then rang and called the clinic", [0.9, 0.95, 0.3, 0.3, 0.3, 0.9, 0.95, 0.94], None),
        # no sentence start within five words
        ("and we saw one two three four five called", [0.9] * 3 + [0.3] * 5 + [0.9], None),
        # a relative named in apposition, the relation misheard too: the subject starts at the earlier comma
        ("for sleep, persistor, catering, called the clinic", [0.99, 0.99, 0.57, 0.32, 0.68, 0.68, 0.9],
         "persistor, catering,"),
        # the relation heard right: only the name between the commas, one unsure word, is no misheard subject
        ("therapy. The sister, Amber, called the clinic", [1.0, 0.45, 0.95, 0.49, 0.99, 0.74, 0.37], None),
    ],
)
def test_an_unsure_subject_before_a_persons_verb_is_a_name(text: str, probs: list[float], subject: str | None) -> None:
    words = _scored(text, probs)
    got = _texts(words, unsure_subject_hits(words))
    assert got == ([subject] if subject else [])


@pytest.mark.parametrize(
    ("text", "probs", "name"),
    [
        # "his partner, Lajos, who" heard as ordinary words the recogniser was unsure of
        ("lives with his parlor, large of who is", [0.8, 0.5, 0.99, 0.32, 0.44, 0.48, 0.59, 0.31],
         "parlor, large of"),
        # heard with confidence: a belonging or a body part
        ("lives with his parlor, large of who is", [0.8, 0.5, 0.99, 0.9, 0.9, 0.9, 0.9, 0.9], None),
        # two unsure words are as often clipped ordinary words
        ("took her pills, and slept", [0.9, 0.9, 0.3, 0.3, 0.9], None),
        # the possessive closes its phrase: the run is not what it owns
        ("we saw her. Quetiapine ariprazole five", [0.9, 0.9, 0.9, 0.3, 0.3, 0.3], None),
        # no possessive before the run
        ("was started on quetiapine ariprazole five", [0.9, 0.9, 0.9, 0.3, 0.3, 0.3], None),
        # the run ends at the sentence end
        ("with my nught, or memorella. In the", [0.9, 0.96, 0.14, 0.47, 0.29, 0.3, 0.9], "nught, or memorella."),
    ],
)
def test_an_unsure_run_after_a_possessive_is_a_name(text: str, probs: list[float], name: str | None) -> None:
    words = _scored(text, probs)
    got = _texts(words, possessive_unsure_hits(words))
    assert got == ([name] if name else [])


@pytest.mark.parametrize(
    ("text", "date"),
    [
        # "nineteen thirty" heard as "nineteenth early": the year's rest is the next word
        ("went for an hour, March fifteenth, nineteenth early, like several", "March fifteenth, nineteenth early,"),
        # the ordinal closes its phrase: nothing more is taken
        ("on March fifteenth, nineteenth. Early on she", "March fifteenth, nineteenth."),
    ],
)
def test_a_year_heard_as_an_ordinal_and_a_word_is_part_of_the_date(text: str, date: str) -> None:
    words = _words(text)
    assert _texts(words, spoken_date_hits(words)) == [date]


@pytest.mark.parametrize(
    ("text", "probs", "number"),
    [
        # digits heard as ordinary words the recogniser was unsure of continue the number
        ("medical record number four, four, eight, six, so dilate, or, she sleeps",
         [0.94, 0.94, 0.99, 0.43, 0.72, 0.99, 0.99, 0.37, 0.31, 0.37, 0.98, 0.9],
         "four, four, eight, six, so dilate, or,"),
        # heard with confidence they are the words after the number
        ("medical record number four, four, eight, six, so dilate, or, she sleeps",
         [0.94, 0.94, 0.99, 0.43, 0.72, 0.99, 0.99, 0.9, 0.9, 0.9, 0.98, 0.9], "four, four, eight, six,"),
        # a capitalised word starts the next sentence the recogniser did not close
        ("social security number 113687136 Her account", [0.88, 0.74, 0.97, 0.59, 0.34, 0.98], "113687136"),
    ],
)
def test_unsure_words_inside_a_cued_number_are_misheard_digits(text: str, probs: list[float], number: str) -> None:
    words = _scored(text, probs)
    got = [" ".join(w.text for w in words[m.first : m.last + 1]) for m in default_cues().spans(words)
           if m.rule.numbers_only]
    assert got == [number]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        # a phone number with misheard digits between the heard ones, some joined with hyphens
        ("Horse-a-leaves, seven o'er thine, five-four thine, two-five breeded, extension two-six seven, and cheaper",
         "seven o'er thine, five-four thine, two-five breeded, extension two-six seven,"),
        # digits written in digits count too, up to three at a time
        ("call her on six, that 258 so oh two nine fine today", "six, that 258 so oh two nine"),
        # a preposition of time or amount parts the number from what follows
        ("call her on six five eight two, nine one oh, after five.", "six five eight two, nine one oh,"),
        # six digits: a dose, a score and a count in one sentence
        ("seven days of five milligrams, two or three times, four to one", None),
        # tens, teens and hundreds are no single digits
        ("one twenty eight over eighty four, two hundred, five hundred, nine ninety nine", None),
        # a sentence end parts two numbers
        ("one two three four. Five six seven", None),
        # more than two words between digits parts them
        ("one two three, and then we saw, four five six seven", None),
    ],
)
def test_scattered_digits_are_a_number(text: str, number: str | None) -> None:
    words = _words(text)
    got = _texts(words, scattered_digit_hits(words))
    assert got == ([number] if number else [])


def test_scattered_digits_part_at_a_pause() -> None:
    words = [Word(w, i * 0.3, i * 0.3 + 0.28) for i, w in enumerate(["one", "two", "three", "four", "five", "six"])]
    assert _texts(words, scattered_digit_hits(words)) == []  # six digits
    words += [Word("seven", 3.0, 3.2)]
    assert _texts(words, scattered_digit_hits(words)) == []
    words[-1] = Word("seven", 1.9, 2.1)
    assert _texts(words, scattered_digit_hits(words)) == ["one two three four five six seven"]
