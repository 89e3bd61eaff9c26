"""Test-value finder and resampler: realistic phrases map to tests; resampling keeps the pool and the text."""

from __future__ import annotations

import math
import random
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.perturb.test_values import (
    AMBIGUOUS,
    OUT_OF_RANGE,
    UNKNOWN_TEST,
    UNKNOWN_UNIT,
    find_values,
    resample_values,
)
from anonpsy.rules.test_values import TestDef, UnitDef, alias_key, load_test_values

DEFS = load_test_values()
TESTS = sorted(DEFS.values(), key=lambda t: t.id)
SHARED_BP = {alias_key(a) for a in ("BP", "blood pressure", "NIBP", "arterial pressure")}

# -- finder: realistic phrases -------------------------------------------------------------------------------

PHRASES: list[tuple[str, list[tuple[str, str | None, str | None]]]] = [
    ("MMSE 22/30", [("22", "mmse", "mild impairment")]),
    ("MoCA: 19", [("19", "moca", "mild impairment")]),
    (
        "BP 132/86",
        [("132", "systolic_bp", "stage 1 hypertension"), ("86", "diastolic_bp", "stage 1 hypertension")],
    ),
    ("Li 0.8 mEq/L", [("0.8", "lithium_level", "therapeutic")]),
    ("lithium level of 1.1", [("1.1", "lithium_level", "therapeutic")]),
    ("TSH was 3.2", [("3.2", "tsh", "normal")]),
    ("HR 104 bpm", [("104", "heart_rate", "tachycardia")]),
    ("T 38.4 C", [("38.4", "temperature", "fever")]),
    ("glucose 6.1 mmol/L", [("6.1", "fasting_glucose", "impaired fasting glucose")]),
    ("glucose 110 mg/dL", [("110", "fasting_glucose", "impaired fasting glucose")]),
    ("On mini-mental status examination, he scored 22 out of 30.", [("22", "mmse", "mild impairment")]),
    (
        "She scored 19 on the MoCA and 24/30 on the MMSE on 3/4/2021.",
        [("19", "moca", "mild impairment"), ("24", "mmse", "normal cognition")],
    ),
    (
        "Temperature 98.1, pulse 60, respirations 18, blood pressure 95/54, oxygen saturation 95%",
        [
            ("98.1", "temperature", "normal"),
            ("60", "heart_rate", "normal"),
            ("18", "respiratory_rate", "normal"),
            ("95", "systolic_bp", "normal"),
            ("54", "diastolic_bp", "low"),
            ("95", "oxygen_saturation", "borderline low"),
        ],
    ),
    (
        "WBC 7.41, hemoglobin 13.8, hematocrit 43.1, and platelets 229,000.",
        [
            ("7.41", "wbc", "normal"),
            ("13.8", "hemoglobin", "normal"),
            ("43.1", None, None),
            ("229,000", "platelets", "normal"),
        ],
    ),
    (
        "lithium 900 mg daily; Li level 0.9 mmol/L 12 hours post dose",
        [("0.9", "lithium_level", "therapeutic")],
    ),
    (
        "PHQ-9 score of 14, GAD-7 12",
        [("14", "phq9", "moderate depression"), ("12", "gad7", "moderate anxiety")],
    ),
    ("HAM-D 17 at week 4", [("17", "hamd17", "moderate depression")]),
    ("HbA1c 48 mmol/mol", [("48", "hba1c", "diabetic range")]),
    (
        "K 4.1 (3.5-5.0), Na 128",
        [("4.1", "potassium", "normal"), ("128", "sodium", "moderate hyponatraemia")],
    ),
    ("Hb 132", [("132", "hemoglobin", "normal")]),
    ("ANC 1500 after 18 weeks of clozapine", [("1500", "anc", "normal")]),
    ("QTc 486 ms on ECG", [("486", "qtc", "prolonged")]),
    ("BMI 16.4 kg/m2", [("16.4", "bmi", "moderate underweight")]),
    ("SpO2 94% on RA", [("94", "oxygen_saturation", "borderline low")]),
    ("T 101.2 F", [("101.2", "temperature", "fever")]),
    (
        "CK 12,400 U/L, clozapine level 350 ng/mL",
        [("12,400", "ck", "severely elevated"), ("350", "clozapine_level", "therapeutic")],
    ),
    ("25-OH vitamin D 45 nmol/L", [("45", "vitamin_d", "deficiency")]),
    ("Admitted 2019; seen at 14:30 on March 3, 2021; sertraline 100 mg for 6 weeks", []),
    ("lithum 0.7", [("0.7", "lithium_level", "therapeutic")]),
    ("Creatinine and CBC were normal.,DIAGNOSES:  ,1.  Seasonal depression", []),
    (
        "AST/ALT 120/85 U/L",
        [("120", "ast", "moderately elevated (3-5x ULN)"), ("85", "alt", "mildly elevated (< 3x ULN)")],
    ),
    ("Sodium 128 mmol/L on 12/03/2023 at 0800", [("128", "sodium", "moderate hyponatraemia")]),
    ("Tómas gave his address: 3485", [("3485", None, None)]),
    (
        "EtOH 240 on arrival, BAC 0.08%",
        [("240", "blood_alcohol", "marked intoxication"), ("0.08", "blood_alcohol", "intoxicated")],
    ),
]


@pytest.mark.parametrize(("text", "expected"), PHRASES)
def test_finder_maps_realistic_phrases(text: str, expected: list[tuple[str, str | None, str | None]]) -> None:
    got = [(m.text, m.test_id, m.interpretation) for m in find_values(text)]
    assert got == expected
    for m in find_values(text):
        assert text[m.start : m.end] == m.text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("BP 132", AMBIGUOUS),
        ("EtOH 52", AMBIGUOUS),
        ("sodium 138 mg/dL", UNKNOWN_UNIT),
        ("MMSE 34/30", OUT_OF_RANGE),
        ("BUN of 24", UNKNOWN_TEST),
        ("PANSS positive 22", UNKNOWN_TEST),
    ],
)
def test_finder_reason_codes(text: str, reason: str) -> None:
    (m,) = find_values(text)
    assert m.test_id is None and m.reason == reason and not m.mapped


def test_unit_inference_and_written_units() -> None:
    (m,) = find_values("glucose 6.1")
    assert (m.unit, m.unit_written) == ("mmol/L", False)
    (m,) = find_values("glucose 6.1 mmol/l")
    assert (m.unit, m.unit_written) == ("mmol/L", True)
    (m,) = find_values("Creatinine 80 umol/L")
    assert m.unit == "µmol/L" and m.interpretation == "normal"


def test_denominator_stays_and_only_digits_change() -> None:
    new, changes, unmapped = resample_values("MMSE 22/30 (mild).", random.Random(3))
    assert unmapped == []
    (c,) = changes
    assert new == f"MMSE {c.new}/30 (mild)."
    assert c.new != "22" and 18 <= int(c.new) <= 23


def test_singleton_pool_keeps_value() -> None:
    new, changes, _ = resample_values("CGI-S 4", random.Random(1))
    assert new == "CGI-S 4" and changes[0].old == changes[0].new == "4"


def test_blood_pressure_keeps_order() -> None:
    for seed in range(30):
        _, changes, _ = resample_values("BP 125/120", random.Random(seed))
        sbp, dbp = (int(c.new) for c in changes)
        assert sbp > dbp and 120 <= sbp < 130 and 120 <= dbp < 200


def test_unmapped_positions_refer_to_new_text() -> None:
    text = "Na 128, BUN of 24, K 3.1"
    new, changes, unmapped = resample_values(text, random.Random(5))
    (u,) = unmapped
    assert new[u.start : u.end] == "24" and u.reason == UNKNOWN_TEST
    for c in changes:
        assert new[c.start : c.end] == c.new


# -- properties ----------------------------------------------------------------------------------------------


def _representable(
    t: TestDef, unit: UnitDef, decimals: int, low: float, high: float
) -> tuple[int, int] | None:
    """Smallest and largest k >= 0 with k / 10**decimals (in ``unit``) inside [low, high) canonically."""
    scale = 10**decimals
    a = max(0, math.floor(unit.from_canonical(low) * scale) - 3)
    b = math.ceil(unit.from_canonical(high) * scale) + 3
    ks = [
        k for k in (a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6) if low <= unit.to_canonical(k / scale) < high
    ]
    ke = [k for k in range(b, b - 7, -1) if k >= 0 and low <= unit.to_canonical(k / scale) < high]
    if not ks or not ke or ks[0] > ke[0]:
        return None
    return ks[0], ke[0]


def _spell(k: int, decimals: int, grouped: bool) -> str:
    s = str(k).rjust(decimals + 1, "0")
    whole, frac = (s[:-decimals], s[-decimals:]) if decimals else (s, "")
    if grouped:
        whole = f"{int(whole):,}"
    return f"{whole}.{frac}" if decimals else whole


@st.composite
def written_values(draw: st.DrawFn) -> tuple[str, TestDef, UnitDef, str]:
    """One test value as a short phrase: ``"<alias> <value> <unit>"`` or ``"<alias>: <value><unit>"``.

    Returns (phrase, test, unit, value as written); the value lies in a pool, written in any of the test's
    units with 0-3 decimals.
    """
    t = draw(st.sampled_from(TESTS), label="test")
    pool = draw(st.sampled_from(t.pools), label="pool")
    unit = draw(st.sampled_from(t.units), label="unit")
    options = [(d, r) for d in range(4) if (r := _representable(t, unit, d, pool.low, pool.high))]
    if not options:
        unit = t.canonical_unit
        options = [(d, r) for d in range(4) if (r := _representable(t, unit, d, pool.low, pool.high))]
    decimals, (k_lo, k_hi) = draw(st.sampled_from(options), label="decimals")
    k = draw(st.integers(k_lo, k_hi), label="k")
    grouped = decimals == 0 and k >= 1000 and draw(st.booleans())
    value = _spell(k, decimals, grouped)
    aliases = [a for a in t.aliases if alias_key(a) not in SHARED_BP]
    alias = draw(st.sampled_from(aliases), label="alias")
    spelling = draw(st.sampled_from(unit.names), label="unit spelling")
    if spelling[0].isdigit() or draw(st.booleans()):  # "110^9/L" would glue the value to the unit
        phrase = f"{alias} {value} {spelling}"
    else:
        phrase = f"{alias}: {value}{spelling}"
    return phrase, t, unit, value


@given(written_values(), st.integers(0, 2**32))
@example(("MMSE 24 points", DEFS["mmse"], DEFS["mmse"].units[0], "24"), 0)
@example(("T: 100.4°F", DEFS["temperature"], DEFS["temperature"].units[1], "100.4"), 1)
@example(("Plt 150,000 /µL", DEFS["platelets"], DEFS["platelets"].units[1], "150,000"), 2)
def test_resample_keeps_pool(item: tuple[str, TestDef, UnitDef, str], seed: int) -> None:
    phrase, t, unit, value = item
    (m,) = find_values(phrase)
    assert m.test_id == t.id and m.unit == unit.unit and m.text == value, m
    pool = t.pool_for(unit.to_canonical(float(value.replace(",", ""))))
    assert pool is not None and m.interpretation == pool.interpretation

    new, changes, unmapped = resample_values(phrase, random.Random(seed))
    assert unmapped == []
    (c,) = changes
    assert c.test_id == t.id and c.interpretation == pool.interpretation and c.old == value
    new_canonical = unit.to_canonical(float(c.new.replace(",", "")))
    assert pool.contains(new_canonical)
    assert new == phrase[: m.start] + c.new + phrase[m.end :]
    decimals = len(value.split(".")[1]) if "." in value else 0
    assert (len(c.new.split(".")[1]) if "." in c.new else 0) == decimals
    low, high = t.draw_window(pool, unit.to_canonical(float(value.replace(",", ""))))
    assert low - 1e-9 <= new_canonical < high + 1e-9, "an edge pool's redraw stays near the value"
    alternatives = _representable(t, unit, decimals, low, high)
    if alternatives is not None and alternatives[1] > alternatives[0]:
        assert c.new != c.old


SEPARATORS = ["; ", ", ", "\n", " and ", ". "]


@given(
    st.lists(written_values(), min_size=1, max_size=5),
    st.lists(st.sampled_from(SEPARATORS), min_size=5, max_size=5),
    st.integers(0, 2**32),
)
@example(
    [("BP 132/86 mmHg", DEFS["systolic_bp"], DEFS["systolic_bp"].units[0], "132")],
    ["; "] * 5,
    0,
)
def test_resample_changes_only_digits(
    items: list[tuple[str, TestDef, UnitDef, str]], seps: list[str], seed: int
) -> None:
    text = "Results: " + "".join(p + seps[i] for i, (p, *_) in enumerate(items)) + "repeat in 3 months."
    mentions = find_values(text)
    new, changes, unmapped = resample_values(text, random.Random(seed))
    assert len(changes) + len(unmapped) == len(mentions)
    rebuilt, pos = [], 0
    mapped = [m for m in mentions if m.mapped]
    assert len(mapped) == len(changes)
    for m, c in zip(mapped, changes, strict=True):
        assert re.fullmatch(r"[\d,.]+", c.new) and c.old == m.text
        assert c.new.count(".") == c.old.count(".")
        rebuilt.append(text[pos : m.start] + c.new)
        pos = m.end
        assert new[c.start : c.end] == c.new
    rebuilt.append(text[pos:])
    assert "".join(rebuilt) == new
    assert re.sub(r"[\d,.]", "", new) == re.sub(r"[\d,.]", "", text)


@given(st.lists(written_values(), min_size=1, max_size=4), st.integers(0, 2**32))
def test_resample_deterministic(items: list[tuple[str, TestDef, UnitDef, str]], seed: int) -> None:
    text = "; ".join(p for p, *_ in items)
    first = resample_values(text, random.Random(seed))
    second = resample_values(text, random.Random(seed))
    assert first == second
    assert find_values(text) == find_values(text)


# -- clinical bands, written independently of the pool table ---------------------------------------------------

# Cut-offs a clinician reads from a value, in each test's canonical unit, taken from the guidelines cited in
# rules/test_values (ADA, KDIGO, ATA, EXTRIP, Hiemke, NIAAA, critical-value surveys) and kept here by hand so
# that a pool which straddles one fails the property below even when the rule file's own cut-offs agree with
# its pools.
CLINICAL_CUTS: dict[str, tuple[float, ...]] = {
    "fasting_glucose": (40, 54, 70, 100, 126, 200, 250, 400, 600),
    "hba1c": (5.7, 6.5, 7.0, 8.0, 9.0, 10.0),
    "tsh": (0.1, 0.4, 4.0, 10.0, 20.0, 50.0),
    "free_t4": (0.8, 1.8, 2.7, 3.6, 5.4),
    "sodium": (120, 125, 130, 135, 146, 150, 160),
    "potassium": (2.5, 3.5, 5.5, 6.5),
    "creatinine": (1.3, 2.0, 4.0, 8.0, 15.0),
    "alt": (40, 120, 200, 600, 1000, 5000),
    "ast": (40, 120, 200, 600, 1000, 5000),
    "ck": (200, 1000, 5000, 15000, 50000),
    "wbc": (4.0, 11.0, 50.0, 100.0),
    "platelets": (10, 50, 100, 150, 450, 1000),
    "hemoglobin": (8.0, 11.0, 12.0),
    "prolactin": (25.0, 200.0, 500.0),
    "vitamin_d": (12, 20, 30, 100, 150),
    "lithium_level": (0.6, 1.2, 1.5, 2.5, 4.0),
    "valproate_level": (50, 100, 120, 450, 900),
    "carbamazepine_level": (4.0, 10.0, 20.0, 40.0),
    "clozapine_level": (350, 600, 1000),
    "ammonia": (50, 100, 200, 500),
    "blood_alcohol": (0.08, 0.15, 0.3, 0.4),
    "oxygen_saturation": (88, 92, 94, 96),
    "qtc": (450, 470, 500),
}
BANDED = [t for t in TESTS if t.id in CLINICAL_CUTS]


def clinical_band(test_id: str, canonical: float) -> int:
    """Index of the clinical band a canonical value lies in (0 below the first cut-off)."""
    return sum(1 for c in CLINICAL_CUTS[test_id] if canonical >= c - 1e-9)


@st.composite
def banded_values(draw: st.DrawFn) -> tuple[str, TestDef, UnitDef, str]:
    """A written value of a test whose clinical bands :data:`CLINICAL_CUTS` lists, in its canonical unit."""
    t = draw(st.sampled_from(BANDED), label="test")
    pool = draw(st.sampled_from(t.pools), label="pool")
    unit = t.canonical_unit
    k_lo, k_hi = _representable(t, unit, t.decimals, pool.low, pool.high) or (0, 0)
    k = draw(st.integers(k_lo, k_hi), label="k")
    value = _spell(k, t.decimals, False)
    alias = next(a for a in t.aliases if alias_key(a) not in SHARED_BP)
    spelling = unit.unit
    phrase = f"{alias} {value}{spelling}" if spelling == "%" else f"{alias} {value} {spelling}"
    return phrase, t, unit, value


def test_clinical_cuts_name_known_tests() -> None:
    assert set(CLINICAL_CUTS) <= set(DEFS)
    for tid, cuts in CLINICAL_CUTS.items():
        assert list(cuts) == sorted(set(cuts)), tid


@given(banded_values(), st.integers(0, 2**32))
@example(("TSH 12.50 mIU/L", DEFS["tsh"], DEFS["tsh"].units[0], "12.50"), 0)
@example(("CK 6200 U/L", DEFS["ck"], DEFS["ck"].units[0], "6200"), 0)
@example(("creatinine 5.00 mg/dL", DEFS["creatinine"], DEFS["creatinine"].units[0], "5.00"), 0)
@example(("glucose 130 mg/dL", DEFS["fasting_glucose"], DEFS["fasting_glucose"].units[0], "130"), 0)
@example(("lithium 1.60 mmol/L", DEFS["lithium_level"], DEFS["lithium_level"].units[0], "1.60"), 0)
def test_resample_keeps_clinical_band(item: tuple[str, TestDef, UnitDef, str], seed: int) -> None:
    """A resampled value stays in the clinical band of its source value (normal, mild, severe, toxic ...)."""
    phrase, t, unit, value = item
    _, changes, _ = resample_values(phrase, random.Random(seed))
    (c,) = changes
    assert c.test_id == t.id and c.old == value
    old_canonical = unit.to_canonical(float(value))
    new_canonical = unit.to_canonical(float(c.new.replace(",", "")))
    assert clinical_band(t.id, new_canonical) == clinical_band(t.id, old_canonical), (t.id, c.old, c.new)


@pytest.mark.parametrize(("phrase", "low", "high"), [
    ("pulse 130 and regular", 130, 160),   # marked tachycardia: within the tachycardia band's width (30)
    ("HR 45", 35, 49),                     # marked bradycardia: within the bradycardia band's width (10)
])
def test_an_edge_pool_is_redrawn_near_the_value(phrase: str, low: int, high: int) -> None:
    """An edge pool reaches the physically possible range (heart rate up to 250): a pulse of 130 must not
    become 207. Its redraw stays within the neighbouring band's width."""
    seen = {int(resample_values(phrase, random.Random(seed))[1][0].new) for seed in range(300)}
    assert min(seen) >= low and max(seen) <= high and len(seen) > 5


def test_a_count_before_a_cell_name_is_not_the_test_named_before() -> None:
    """"…, 82 neutrophils, 8 lymphocytes": the 8 counts lymphocytes, it is no neutrophil count (MTSamples
    shape, CC0); a list of values written before their next name still reads ("Na 140 K 4.0")."""
    found = find_values("WBC 9200, differential with 82 neutrophils, 8 lymphocytes, 6 monocytes, and 4 eosinophils.")
    assert [(m.test_id, m.text) for m in found if m.mapped] == [("wbc", "9200")]
    assert [(m.test_id, m.text) for m in find_values("Na 140 K 4.0")] == [("sodium", "140"), ("potassium", "4.0")]
