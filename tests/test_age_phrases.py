"""Ages at past events written as "N years of age" or "the age of N" are identifiers like "N-year-old".

When the present age is unknown nothing shifts the ages of a case, so a context fragment that carries one ("began to
experience migraines at 11 years of age") must lose it when scrubbed; when the age is known the phrase moves with
it; and the leak audit must see the phrase in an output.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.perturb.contexts import SourceIdentifiers, scrub_identifiers
from anonpsy.perturb.demographics import shift_age_mentions
from anonpsy.pipeline import leak_audit

FORMS = [
    "She began to experience migraines at {n} years of age.",
    "He started drinking at the age of {n}.",
    "At {n} years of age he was placed in foster care.",
    "She was {n} yrs of age when her father left.",
]


@given(n=st.integers(min_value=1, max_value=120), form=st.sampled_from(FORMS), with_source=st.booleans())
@example(n=11, form=FORMS[0], with_source=True)
def test_property_scrubbed_fragment_keeps_no_event_age(n: int, form: str, with_source: bool) -> None:
    text = form.format(n=n)
    source = SourceIdentifiers(text) if with_source else None
    out, kinds = scrub_identifiers(text, source=source)
    assert "AGE" in kinds
    assert not re.search(rf"(?<!\d){n}(?!\d)", out)
    assert "an earlier age" in out


def test_scrub_reads_the_whole_age_phrase_without_a_source() -> None:
    # The analyzer's AGE span is the bare number; replacing only it gave "A an earlier age-year-old man".
    out, _ = scrub_identifiers("A 34-year-old man was seen.")
    assert out == "A man was seen."


def test_years_of_age_moves_with_the_present_age() -> None:
    text = "She is 34 years of age; at 11 years of age she had migraines."
    assert shift_age_mentions(text, 34, 3) == "She is 37 years of age; at 14 years of age she had migraines."


def test_leak_audit_sees_years_of_age_in_the_output() -> None:
    source = "She reported that she began to experience migraines at 11 years of age."
    report = leak_audit(source, "Migraines began when she was 11 years of age.")
    assert [leak.kind for leak in report.leaks] == ["AGE"]


RANGE_FORMS = [
    ("Hydrocephalus manifested by macrocephaly by age 2-3 months.", "by an earlier age."),
    ("He spoke first words between 1 and 2 years of age.", "first words at an earlier age."),
    ("She used cannabis between ages 12 and 14.", "cannabis at an earlier age."),
    ("He drank from the ages of 15 to 18.", "from an earlier age."),
    # the unit after "the age of" goes with the age ("at an earlier age years" otherwise)
    ("He began drinking at the age of 14 years.", "drinking at an earlier age."),
    ("He began drinking at the age of 14 years old.", "drinking at an earlier age."),
]


def test_an_age_range_is_scrubbed_as_one_phrase() -> None:
    # Replacing only the first age of a range left "an earlier age-3 months", which reads as a negative age.
    for text, tail in RANGE_FORMS:
        for source in (None, SourceIdentifiers(text)):
            out, kinds = scrub_identifiers(text, source=source)
            assert "AGE" in kinds
            assert out.endswith(tail), out
            assert not re.search(r"\d", out)


def test_a_count_range_is_no_age() -> None:
    text = "She had 2 to 3 drinks a day."
    assert scrub_identifiers(text, source=SourceIdentifiers(text))[0] == text
