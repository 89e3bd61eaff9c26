"""Structured findings as plain clinical text: the mental status examination and the test results.

Both generation backends use these renderings; they are built from the graph's normalised values only, so no
sentence of the source can reappear through them.

Example::

    >>> from anonpsy.graph import Ideation, MentalStatus
    >>> mental_status_text(MentalStatus(mood="depressed", mood_quoted=True, affect="restricted",
    ...                                 suicidal_ideation=Ideation.absent, orientation="oriented x3"))
    'mood described by the patient as depressed; affect restricted; suicidal ideation denied; oriented x3'
"""

from __future__ import annotations

from anonpsy.graph import MSE_FIELDS, Ideation, MentalStatus, TestKind, TestValue

_IDEATION = {
    Ideation.absent: "denied", Ideation.passive: "passive", Ideation.present: "present",
    Ideation.plan: "present, with a plan", Ideation.intent: "present, with intent",
}
#: Headings of the test-result groups, in the order they are written.
TEST_GROUPS: tuple[tuple[str, tuple[TestKind, ...]], ...] = (
    ("Laboratory results", (TestKind.lab,)),
    ("Vital signs", (TestKind.vital,)),
    ("Rating scales and cognitive testing", (TestKind.rating_scale, TestKind.cognition)),
    ("Imaging", (TestKind.imaging,)),
    ("Other assessments", (TestKind.other,)),
)


def mental_status_text(ms: MentalStatus) -> str | None:
    """The examination as "domain finding" phrases joined by semicolons, or None when nothing was found."""
    return "; ".join(mental_status_parts(ms)) or None


def mental_status_parts(ms: MentalStatus) -> list[str]:
    """One "domain finding" phrase per reported domain, in the order of :data:`~anonpsy.graph.MSE_FIELDS`."""
    parts: list[str] = []
    for field in MSE_FIELDS:
        value = getattr(ms, field)
        if value is None:
            continue
        label = field.replace("_", " ")
        if isinstance(value, Ideation):
            parts.append(f"{label} {_IDEATION[value]}")
        elif field == "mood" and ms.mood_quoted:
            parts.append(f"mood described by the patient as {value}")
        elif field == "orientation":
            parts.append(value)
        else:
            parts.append(f"{label} {value}")
    if not parts and ms.mood_quoted:
        parts.append("mood described in the patient's own words")
    return parts


#: The age from which the vital-sign pools' bands (adult reference ranges) give a vital sign its meaning.
ADULT_AGE = 18


def value_text(v: TestValue, interpret: bool = True) -> str:
    """One result: "Serum lithium concentration 0.9 mmol/L (therapeutic)", "Urine drug screen negative"; without
    ``interpret`` the value's meaning is left out (the vital-sign pools' bands are adult bands: a child's heart rate
    of 143 is no "marked tachycardia")."""
    if v.value is not None:
        unit = f" {v.unit}" if v.unit and v.unit != "points" else ""
        meaning = f" ({v.interpretation})" if v.interpretation and interpret else ""
        return f"{v.name} {v.value}{unit}{meaning}"
    return f"{v.name} {v.result}" if v.result else v.name


def value_sentence(v: TestValue, interpret: bool = True) -> str:
    """One result as a sentence: "Serum lithium concentration was 0.9 mmol/L (therapeutic)."."""
    if v.value is not None:
        unit = f" {v.unit}" if v.unit and v.unit != "points" else ""
        meaning = f" ({v.interpretation})" if v.interpretation and interpret else ""
        return f"{v.name[:1].upper()}{v.name[1:]} was {v.value}{unit}{meaning}."
    result = f" was {v.result}" if v.result else " was recorded"
    return f"{v.name[:1].upper()}{v.name[1:]}{result}."


def results_text(values: list[TestValue]) -> dict[str, str]:
    """The results grouped under their headings (only the groups that have results)."""
    out: dict[str, str] = {}
    for heading, kinds in TEST_GROUPS:
        items = [value_text(v) for v in values if v.kind in kinds]
        if items:
            out[heading] = "; ".join(items)
    return out
