"""Test results as structured values: laboratory values, vital signs, rating-scale and cognitive scores, imaging.

:func:`parse_results` reads a test-results text (a labs section, an imaging line, a sentence reporting a score) and
returns one :class:`~anonpsy.graph.TestValue` per result:

* a number :func:`~anonpsy.perturb.test_values.find_values` maps to a test of ``rules/test_values`` becomes a
  value with that test's name, the unit, the pool it falls in (``interpretation``), a reference flag and the rule
  id ``test_values.<id>``, so that perturbation resamples it inside the same pool;
* a number no test maps keeps the words before it as its name and has no rule id (it is never changed);
* a qualitative result ("urine drug screen positive for cannabinoids", "HCV RNA undetectable", "CT head: no
  acute abnormality") becomes a value with a short lower-case ``result``.

What reads as none of these is not carried: it is returned as an :class:`~anonpsy.graph.Omission` (word count and
offsets), never as text. Neither is a name or result written from the text that holds a rare proper-noun anchor
(:func:`anonpsy.perturb.anchors.find_anchors`: a clinic, a school, a person): such a value is omitted (reason
``ANCHOR``), since structured values are never scrubbed.

Example::

    >>> values, omitted = parse_results("Lithium 0.9 mmol/L; TSH 2.1; UDS positive for cannabinoids.", "labs")
    >>> [(v.name, v.value, v.unit, v.interpretation, v.flag.value) for v in values][:1]
    [('Serum lithium concentration', '0.9', 'mmol/L', 'therapeutic', 'normal')]
    >>> (values[2].name, values[2].result, values[2].flag.value)
    ('UDS', 'positive for cannabinoids', 'positive')
"""

from __future__ import annotations

import re
from typing import Literal

from anonpsy.caseless import Caseless
from anonpsy.graph import Evidence, Omission, ReferenceFlag, TestKind, TestValue
from anonpsy.perturb.anchors import find_anchors
from anonpsy.perturb.test_values import ValueMention, counted_noun, find_values, unit_at
from anonpsy.rules.test_values import load_test_values

ResultField = Literal["labs", "imaging", "other"]

#: Pool interpretations → reference flag, first matching keyword wins (checked against every pool by a test).
_FLAG_WORDS: tuple[tuple[str, ReferenceFlag], ...] = (
    ("no active", ReferenceFlag.normal), ("unlikely", ReferenceFlag.normal), ("low-risk", ReferenceFlag.normal),
    ("below provisional", ReferenceFlag.normal), ("below therapeutic", ReferenceFlag.low),
    ("below legal", ReferenceFlag.abnormal), ("elevated", ReferenceFlag.high), ("raised", ReferenceFlag.high),
    ("positive", ReferenceFlag.positive), ("negative", ReferenceFlag.negative),
    ("subtherapeutic", ReferenceFlag.low), ("above therapeutic", ReferenceFlag.high),
    ("therapeutic", ReferenceFlag.normal), ("abnormal", ReferenceFlag.abnormal),
    ("normal", ReferenceFlag.normal), ("no depression", ReferenceFlag.normal), ("minimal", ReferenceFlag.normal),
    ("none", ReferenceFlag.normal), ("average", ReferenceFlag.normal), ("superior", ReferenceFlag.normal),
    ("borderline", ReferenceFlag.abnormal), ("not ill", ReferenceFlag.normal),
    ("deficien", ReferenceFlag.low), ("insufficien", ReferenceFlag.low), ("hypo", ReferenceFlag.low),
    ("low", ReferenceFlag.low), ("bradycardia", ReferenceFlag.low), ("hypotension", ReferenceFlag.low),
    ("underweight", ReferenceFlag.low),
    ("elevated", ReferenceFlag.high), ("high", ReferenceFlag.high), ("above", ReferenceFlag.high),
    ("hyper", ReferenceFlag.high), ("diabet", ReferenceFlag.high), ("prediabet", ReferenceFlag.high),
    ("impaired fasting", ReferenceFlag.high), ("tachycardia", ReferenceFlag.high), ("fever", ReferenceFlag.high),
    ("overweight", ReferenceFlag.high), ("obes", ReferenceFlag.high), ("prolonged", ReferenceFlag.high),
    ("crisis", ReferenceFlag.high), ("toxic", ReferenceFlag.high), ("alert level", ReferenceFlag.high),
    ("mild", ReferenceFlag.abnormal), ("moderate", ReferenceFlag.abnormal), ("severe", ReferenceFlag.abnormal),
    ("impair", ReferenceFlag.abnormal), ("ill", ReferenceFlag.abnormal), ("likely", ReferenceFlag.abnormal),
    ("extremely", ReferenceFlag.abnormal), ("withdrawal", ReferenceFlag.abnormal),
    ("probable", ReferenceFlag.abnormal), ("clinical", ReferenceFlag.abnormal),
    ("euthymic", ReferenceFlag.normal), ("normocytic", ReferenceFlag.normal), ("sufficient", ReferenceFlag.normal),
    ("macrocytic", ReferenceFlag.high), ("microcytic", ReferenceFlag.low), ("raised", ReferenceFlag.high),
    ("leukocytosis", ReferenceFlag.high), ("thrombocytosis", ReferenceFlag.high), ("leukopenia", ReferenceFlag.low),
    ("dementia", ReferenceFlag.abnormal), ("extreme", ReferenceFlag.abnormal), ("hazardous", ReferenceFlag.abnormal),
    ("harmful", ReferenceFlag.abnormal), ("dependence", ReferenceFlag.abnormal), ("possible", ReferenceFlag.abnormal),
)


def flag_for(interpretation: str | None) -> ReferenceFlag:
    """The reference flag a pool interpretation implies ("therapeutic" → normal, "mildly elevated" → high).

    >>> flag_for("level 1 hypoglycaemia").value, flag_for("moderate depression").value
    ('low', 'abnormal')
    """
    if not interpretation:
        return ReferenceFlag.unknown
    low = interpretation.lower()
    for word, flag in _FLAG_WORDS:
        if word in low:
            return flag
    return ReferenceFlag.unknown


_SEGMENT = re.compile(r"[^;\n]+")
_ITEM_BREAK = re.compile(r",(?!\d{3})|\.(?:\s|$)")
_NAME_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9'/+-]*")
_QUALITATIVE = re.compile(
    r"^(?:(?:and|or)\s+)?(?P<name>[A-Za-z][\w /+-]{0,40}?)\s*(?::|\bwas\b|\bwere\b|\bis\b|\bare\b)?\s*"
    r"(?:(?:all|both|each|also|otherwise)\s+)?"
    r"(?P<result>(?:positive|negative)(?:\s+for\s+[\w ,/-]{2,60})?|undetectable|not detected|unremarkable|"
    r"within normal limits|wnl|normal|abnormal|elevated|low|high|pending)\s*$", re.I)
_IMAGING = re.compile(r"^(?P<name>(?:CT|MRI|EEG|ECG|EKG|CXR|X-ray|ultrasound|chest x-ray|chest film|PET|SPECT|"
                      r"echocardiogram|[A-Za-z ]{0,20}(?:ultrasound|CT|MRI|imaging|scan))[\w /-]{0,30}?)\s*:\s*"
                      r"(?P<result>.+)$", re.I)
_WRITTEN_FLAG = re.compile(r"^\s*(?:\(\s*)?(?P<f>H|L|high|low|elevated|normal|WNL|abnormal)\b(?:\s*\))?", re.I)
_MAX_RESULT_WORDS = 12


def _short(text: str) -> str | None:
    """A qualitative result as a short normalised value (lower case, allowed characters only), or None."""
    t = re.sub(r"[^a-z0-9 ,;/()+'%<>=-]", " ", text.lower())
    t = re.sub(r"\s+", " ", t).strip(" ,;-")
    if not t or len(t.split()) > _MAX_RESULT_WORDS or len(t) > 80 or not t[0].isalnum():
        return None
    return t


def _result_flag(result: str) -> ReferenceFlag:
    low = result.lower()
    if low.startswith("positive"):
        return ReferenceFlag.positive
    if low.startswith(("negative", "undetectable", "not detected")):
        return ReferenceFlag.negative
    if low.startswith(("normal", "unremarkable", "within normal", "wnl", "no acute", "no ")):
        return ReferenceFlag.normal
    if low.startswith(("abnormal",)):
        return ReferenceFlag.abnormal
    if low.startswith(("elevated", "high")):
        return ReferenceFlag.high
    if low.startswith("low"):
        return ReferenceFlag.low
    return ReferenceFlag.unknown


def _written_flag(word: str) -> ReferenceFlag:
    """A flag written after a value: "H"/"high"/"elevated", "L"/"low", "normal"/"WNL", "abnormal"."""
    low = word.lower()
    if low in ("h", "high", "elevated"):
        return ReferenceFlag.high
    if low in ("l", "low"):
        return ReferenceFlag.low
    return ReferenceFlag.normal if low in ("normal", "wnl") else ReferenceFlag.abnormal


def _kind(field: ResultField, category: str | None) -> TestKind:
    if category is not None:
        return TestKind(category)
    return {"labs": TestKind.lab, "imaging": TestKind.imaging, "other": TestKind.other}[field]


_FILLER = frozenset({"about", "approximately", "around", "nearly", "over", "under", "of", "was", "were", "is",
                     "are", "the", "a", "an", "at", "on", "with", "and", "or", "to", "score", "scored", "total",
                     "his", "her", "their", "by", "for", "in", "level", "value", "result", "which", "that", "it",
                     "this"})


#: An unmapped value is a result only in a short item whose words before it name it: a name holding a verb
#: ("Code is as follows: 49") or an item that is a whole sentence of prose ("The Confidence Index associated with
#: ADHD was over 58 percent that ...") names nothing.
_PROSE_NAME = re.compile(r"\b(?:is|are|was|were|has|have|had|as follows|showed|shows|reported|indicated)\b", re.I)
_PROSE_WORDS = 14
#: An item of a list that only names a test ("Electrolytes", "uric acid", "alkaline phosphatase"), and the last
#: item that gives the verdict of the whole list ("and magnesium were all normal").
_BARE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9'/+-]*(?:\s+[A-Za-z0-9'/+-]+){0,3}")
_LIST_VERDICT = re.compile(r"(?:and|or)\s+.*\b(?:were|are)\s+(?:all|both|each)?", re.I)
_RELATIVE_LEAD = re.compile(r"\s*(?:which|that)\s+(?:is|was|are|were|has\s+been|had\s+been|remains|remained)\b", re.I)
_RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
#: A blood pressure taken in a posture or on a limb ("Sitting BP 112/84, standing after two minutes 130/90",
#: "151/102 in the right arm and 152/104 in the left arm"): the words before the reading name the posture or the
#: limb, not a test, and the reading is a vital sign, never a laboratory result.
_POSTURE = re.compile(r"\b(?:sitting|seated|standing|supine|lying|upright|orthostatics?|recumbent|"
                      r"(?:right|left|both|each) (?:arms?|legs?|upper extremit(?:y|ies)|lower extremit(?:y|ies)|"
                      r"wrists?|thighs?|ankles?))\b", re.I)
_PAIR_AFTER = re.compile(r"\s*/\s*\d{2,3}\b")
#: A number that is a part of a written date ("from 11/07", "on 3/14/2021"): the digits and slash before it, or
#: a slash and digits after it that are not a second reading of a pair (a blood pressure goes through
#: :data:`_POSTURE`).
_DATE_PART = re.compile(r"\d[/-]$")
_DATE_REST = re.compile(r"[/-]\d{1,2}[/-]\d{2,4}\b")


#: A value told in a clause ("LDH was elevated to 1925", "Calcium was also slightly low at 8.8", "total protein and
#: albumin were both low at 6.2 and 3.4 g/dL respectively"): the test is the subject before the verb, and the words
#: after it are a flag, never part of the name.
_TOLD_VALUE = re.compile(
    r"(?P<name>[A-Za-z][\w'/+ -]*?)\s+(?:was|were|is|are)\s+(?:(?:also|both|all|still|now|only|slightly|mildly|"
    r"minimally|moderately|markedly|significantly|severely|very|quite|somewhat|again)\s+)*"
    r"(?P<flag>elevated|high|raised|increased|low|decreased|reduced|normal|abnormal)\s+(?:at|to|of|with)?\s*$", re.I)
#: The words before a number that give a reference range, not a test ("(upper normal 670)", "normal range 4-10",
#: "upper limit of normal 40", "reference 12"): the number is no result.
_REFERENCE = re.compile(r"\b(?:(?:upper|lower)\s+(?:limits?\s+of\s+)?normal|"
                        r"normal\s+(?:range|limits?|is|up\s+to|being)|"
                        r"reference(?:\s+range)?|ULN|LLN|range)\s*(?:is|of|:)?\s*$", re.I)
_SUBJECT_LEAD = frozenset({"and", "or", "the", "a", "an", "his", "her", "their", "also", "then"})
_TOLD_FLAG = {"elevated": "high", "high": "high", "raised": "high", "increased": "high", "low": "low",
               "decreased": "low", "reduced": "low", "normal": "normal", "abnormal": "abnormal"}


def _told_value(item: str, pos: int, lo: int = 0) -> tuple[str, ReferenceFlag] | None:
    """The test named as the subject of a clause that tells the value at ``pos`` (:data:`_TOLD_VALUE`), with the
    flag the clause gives it."""
    m = _TOLD_VALUE.search(item, lo, pos)
    if m is None:
        return None
    words = _NAME_WORDS.findall(m.group("name"))
    while words and words[0].lower() in _SUBJECT_LEAD:
        words.pop(0)
    if not words or len(words) > 6 or _PROSE_NAME.search(" ".join(words)):
        return None
    return " ".join(words), _written_flag(_TOLD_FLAG[m.group("flag").lower()])


def _name_before(item: str, pos: int, lo: int = 0) -> str | None:
    """The words naming an unmapped value: up to four words right before it in its item and after the value
    before it (``lo``: "Hemoglobin 10.7 and hematocrit 31.2" names 31.2 "hematocrit"), without filler words at
    either end ("about 6" has no name)."""
    words = _NAME_WORDS.findall(item[lo:pos])[-4:]
    while words and words[-1].lower() in _FILLER and len(words) > 1 and words[-1].lower() not in ("level",):
        words.pop()
    while words and words[0].lower() in _FILLER:
        words.pop(0)
    if not words or all(w.lower() in _FILLER for w in words):
        return None
    return " ".join(words)[:100]


def _mapped_value(m: ValueMention, field: ResultField, evidence: Evidence) -> TestValue:
    test = load_test_values()[m.test_id or ""]
    return TestValue(
        id="tv", kind=_kind(field, test.category), name=test.name, value=m.text.replace(",", ""), unit=m.unit,
        flag=flag_for(m.interpretation), interpretation=m.interpretation, rule_id=f"test_values.{test.id}",
        evidence=evidence,
    )


def parse_results(
    text: str, field: ResultField, *, offset: int | None = None, section: str | None = None,
    rule_id: str = "default",
) -> tuple[list[TestValue], list[Omission]]:
    """Structured values of a test-results text, and what could not be structured.

    Each value's evidence names ``section`` and ``rule_id`` and, when ``offset`` (where ``text`` starts in the
    source narrative) is known, spans the item it was read from; a migrated field has no source offsets. Value
    ids are placeholders (``tv``): the caller numbers them with :func:`number_values`.
    """
    values: list[TestValue] = []
    omitted: list[Omission] = []
    mentions = find_values(text)
    anchors: set[str] | None = None

    def anchored(*written: str | None) -> bool:
        nonlocal anchors
        if anchors is None:
            anchors = {text[a.start:a.end].strip() for a in find_anchors(text)}
        return any(re.search(rf"(?<!\w){re.escape(a)}(?!\w)", w, re.I) for a in anchors if a for w in written if w)

    def evidence(a: int, b: int) -> Evidence:
        if offset is None:
            return Evidence(section=section, rule_id=rule_id)
        return Evidence(start=offset + a, end=offset + b, section=section, rule_id=rule_id)

    def omit(a: int, b: int, reason: str = "UNPARSED") -> None:
        words = len(re.findall(r"\w+", text[a:b]))
        if words:
            span = {"start": offset + a, "end": offset + b} if offset is not None else {}
            omitted.append(Omission(field=field, words=words, reason=reason, **span))

    for seg in _SEGMENT.finditer(text):
        # the bare names of a list whose verdict comes with its last item (start, end, name, omission index)
        listed: list[tuple[int, int, str, int]] = []
        items: list[tuple[int, int]] = []
        pos = seg.start()
        for brk in _ITEM_BREAK.finditer(text, seg.start(), seg.end()):
            items.append((pos, brk.start()))
            pos = brk.end()
        items.append((pos, seg.end()))
        for a, b in items:
            item = text[a:b]
            if not item.strip():
                continue
            inside = [m for m in mentions if a <= m.start < b]
            pending_names: list[str] = []
            pending_flag = ReferenceFlag.unknown
            if inside:
                # "INR, which is still 8.8": a relative clause gives the value of the bare name before it
                relative = listed[-1] if listed and _RELATIVE_LEAD.match(item) else None
                if relative is not None:
                    del omitted[relative[3]]
                listed.clear()
                for k, m in enumerate(inside):
                    if m.mapped:
                        values.append(_mapped_value(m, field, evidence(a, b)))
                        continue
                    if _DATE_PART.search(text, max(0, m.start - 3), m.start) or _DATE_REST.match(text, m.end):
                        omit(m.start, m.end, "UNNAMED_VALUE")  # a part of a date ("labs from 11/07"), no result
                        continue
                    lo = inside[k - 1].end - a if k else 0
                    if _REFERENCE.search(item, lo, m.start - a):
                        omit(m.start, m.end, "REFERENCE_RANGE")  # "(upper normal 670)": the range, not a result
                        continue
                    counted = counted_noun(text, m.end)  # "82 neutrophils"; "3 cells" is named before
                    told = None if counted else _told_value(item, m.start - a, lo)
                    if told is None and k == 0 and relative is not None:
                        told = (relative[2], ReferenceFlag.unknown)
                    if told is not None and len(inside) > 1 and _RESPECTIVELY.search(item):
                        # "total protein and albumin were both low at 6.2 and 3.4 g/dL respectively": one name each
                        names = re.split(r"\s*,\s*|\s+and\s+", told[0])
                        told = (names[0], told[1]) if len(names) == len(inside) else None
                        pending_names = names[1:] if told else []
                        pending_flag = told[1] if told else ReferenceFlag.unknown
                    elif told is None and k and pending_names:
                        told = (pending_names.pop(0), pending_flag)
                    name: str | None
                    told_flag: ReferenceFlag | None = None
                    if told is not None:
                        name, told_flag = told
                    else:
                        name = counted if counted and counted.lower() not in ("cell", "cells") else _name_before(
                            item, m.start - a, lo)
                    if name is None or anchored(name):
                        omit(m.start, m.end, "UNNAMED_VALUE" if name is None else "ANCHOR")
                        continue
                    if _PROSE_NAME.search(name) or len(item.split()) > _PROSE_WORDS:
                        omit(m.start, m.end, "UNNAMED_VALUE")  # a number in a sentence, not a named result
                        continue
                    if _POSTURE.search(name) and _PAIR_AFTER.match(text, m.end):
                        omit(m.start, m.end, "UNNAMED_VALUE")  # an orthostatic blood pressure, not a test named
                        continue
                    unit = unit_at(text, m.end)
                    rest = text[m.end:b]
                    if unit is not None:
                        rest = rest[rest.find(unit) + len(unit):]
                    written = _WRITTEN_FLAG.match(rest)
                    flag = _written_flag(written.group("f")) if written else told_flag or ReferenceFlag.unknown
                    values.append(TestValue(id="tv", kind=_kind(field, None), name=name,
                                            value=m.text.replace(",", ""), unit=unit, flag=flag,
                                            evidence=evidence(a, b)))
                continue
            stripped = item.strip(" .:-")
            q = _IMAGING.match(stripped) if field == "imaging" or ":" in stripped else None
            q = q or _QUALITATIVE.match(stripped)
            result = _short(q.group("result")) if q else None
            if q is None or result is None:
                omit(a, b)
                if _BARE_NAME.fullmatch(stripped) and not anchored(stripped):
                    listed.append((a, b, " ".join(stripped.split()), len(omitted) - 1))
                else:
                    listed.clear()
                continue
            if anchored(q.group("name"), q.group("result")):
                omit(a, b, "ANCHOR")
                continue
            name = " ".join(q.group("name").split())[:60]
            kind = TestKind.imaging if (field == "imaging" or _IMAGING.match(stripped)) else _kind(field, None)
            if listed and _LIST_VERDICT.match(stripped):
                # "Electrolytes, BUN, creatinine, and magnesium were all normal": the verdict is every item's
                for la, lb, lname, _ in listed:
                    values.append(TestValue(id="tv", kind=kind, name=lname, result=result,
                                            flag=_result_flag(result), evidence=evidence(la, lb)))
                dropped = {k for *_, k in listed}
                omitted[:] = [o for k, o in enumerate(omitted) if k not in dropped]
            listed.clear()
            values.append(TestValue(id="tv", kind=kind, name=name, result=result, flag=_result_flag(result),
                                    evidence=evidence(a, b)))
    return values, omitted


def number_values(values: list[TestValue], start: int = 1) -> list[TestValue]:
    """The values with ids ``tv_<n>`` in order."""
    return [v.model_copy(update={"id": f"tv_{i}"}) for i, v in enumerate(values, start)]


#: A drug screen ("urine drug screen", "tox screen", "UDS", "toxicology"): its result names substances it found or
#: did not find, which is a test result, not a use or a denial of use.
_SCREEN = (r"(?:\b(?:urine|serum|blood|u)\s*)?(?:\b(?:drug|tox|toxicology|drugs of abuse|substance)\s*"
           r"(?:screens?|screening|panel|studies|study|tests?|testing)|\butox\b|\bUDS\b|\btoxicology\b)")
_VERDICT = r"(?:positive|negative|pos|neg|\+|-)"
#: "UDS was positive for cocaine and marijuana", "tox screen: negative for opiates", "positive urine drug screen
#: for THC": the list after the verdict.
_SCREEN_THEN_LIST = re.compile(
    rf"{_SCREEN}\s*(?:[:,(]\s*|\b(?:was|were|is|are|came back|returned|remains?|also|again|(?:only |)showed)\s+)*"
    rf"(?:(?:only|also|again|strongly|weakly)\s+)?{_VERDICT}\s*(?:only\s+)?(?:for|to|with|including|showing)?\b"
    rf"|{_VERDICT}\s+{_SCREEN}\s*(?:for|with|including|showing)\b", re.I)
#: "positive for cocaine on urine drug screen": the list before the screen.
_LIST_THEN_SCREEN = re.compile(rf"\b{_VERDICT}\s+for\b(?P<list>[^.;]{{1,80}}?)\b(?:on|in|by)\s+(?:the\s+|a\s+|his\s+|"
                               rf"her\s+|their\s+)?{_SCREEN}", re.I)
#: The list of a screen's result ends at a clause of its own.
_LIST_END = re.compile(r"[.;]|\b(?:but|however|which|although|though|while|and (?:he|she|they|the patient|"
                       r"patient|was|is|has|had|will))\b|\bon (?:the |a |)(?:admission|arrival)\b", re.I)


_SCREEN_CUE = Caseless(re.compile(r"screen|tox|UDS|panel", re.I))


def screen_result_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that list what a drug screen found or did not find ("Urine drug screen was positive for
    cocaine and marijuana": "cocaine and marijuana"). A substance named there is a test's result: the patient's
    use of it (or its denial) is for other words of the note to tell.

    >>> t = "Urine drug screen was positive for cocaine and marijuana, and he was admitted."
    >>> [t[a:b] for a, b in screen_result_spans(t)]
    [' cocaine and marijuana, ']
    >>> screen_result_spans("He was positive for cocaine use in the past.")
    []
    """
    if not _SCREEN_CUE.search(text):
        return []
    out: list[tuple[int, int]] = []
    for m in _SCREEN_THEN_LIST.finditer(text):
        end = _LIST_END.search(text, m.end())
        out.append((m.end(), end.start() if end else len(text)))
    for m in _LIST_THEN_SCREEN.finditer(text):
        out.append((m.start("list"), m.end("list")))
    return out


def in_screen_result(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Does ``start:end`` lie inside one of :func:`screen_result_spans`?"""
    return any(a <= start and end <= b for a, b in spans)
