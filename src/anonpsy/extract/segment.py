"""Segmentation of clinical text into sections and sentences with exact character offsets.

Handles prose case histories, SOAP notes with headers ("SUBJECTIVE:", "HISTORY OF PRESENT ILLNESS:",
"MENTAL STATUS EXAM:"), inline headers ("HPI: ...") and bulleted or numbered lists (each item is a sentence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SECTION_ALIASES: dict[str, tuple[str, ...]] = {
    "chief_complaint": ("chief complaint", "cc", "reason for referral", "reason for consultation",
                        "reason for visit", "presenting complaint", "identifying data", "identification"),
    "hpi": ("history of present illness", "hpi", "history of presenting illness", "present illness", "subjective",
            "interval history", "history", "clinical history", "presentation", "course"),
    "past_psych": ("past psychiatric history", "psychiatric history", "past psych history", "pph"),
    "past_medical": ("past medical history", "medical history", "pmh", "past history", "past surgical history"),
    "substance": ("substance use history", "substance use", "substance abuse history", "alcohol and drug history",
                  "drug and alcohol history", "substance history"),
    "medications": ("medications", "current medications", "meds", "medications on admission",
                    "allergies and medications", "medication list", "home medications"),
    "allergies": ("allergies",),
    "family_history": ("family history", "family psychiatric history", "fh", "family hx"),
    "social_history": ("social history", "sh", "developmental history", "personal history", "social hx"),
    "mse": ("mental status exam", "mental status examination", "mental status", "mse", "objective",
            "examination", "physical exam", "review of systems"),
    "labs": ("labs", "laboratory", "laboratory data", "laboratory results", "investigations", "results",
             "diagnostic data", "data", "imaging", "vital signs", "vitals", "testing", "psychological testing"),
    "assessment": ("assessment", "assessment and plan", "impression", "diagnosis", "diagnoses", "formulation",
                   "diagnostic impression", "impression and plan", "a/p", "summary"),
    "plan": ("plan", "recommendations", "disposition", "treatment plan", "hospital course"),
}
_ALIAS_TO_SECTION = {a: name for name, aliases in SECTION_ALIASES.items() for a in aliases}

_HEADER = re.compile(
    r"(?m)^[ \t]*(?P<name>[A-Z][A-Za-z /&'()-]{1,60}?)[ \t]*:[ \t]*",
)
_SENT_END = re.compile(r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)(?<!\be\.g)(?<!\bi\.e)"
                       r"(?<!\bvs)(?<!\bapprox)(?<!\bNo)[.!?](?=\s+[A-Z0-9\"'(])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str
    section: str
    index: int


@dataclass(frozen=True)
class Section:
    name: str
    start: int
    end: int


def _section_name(raw: str) -> str | None:
    key = re.sub(r"\s+", " ", raw.strip().lower())
    if key in _ALIAS_TO_SECTION:
        return _ALIAS_TO_SECTION[key]
    for alias, name in _ALIAS_TO_SECTION.items():
        if len(alias) > 3 and key.startswith(alias):
            return name
    return None


def sections(text: str) -> list[Section]:
    """Sections by recognised headers; text before the first header is 'hpi' (prose histories)."""
    marks: list[tuple[int, int, str]] = []
    for m in _HEADER.finditer(text):
        raw = m.group("name")
        name = _section_name(raw)
        if name is None:
            continue
        # A header is uppercase ("HPI:") or Title Case starting a line; avoid "Patient: states ..." prose lines.
        if not (raw.isupper() or raw.istitle() or raw.lower() in _ALIAS_TO_SECTION):
            continue
        marks.append((m.start(), m.end(), name))
    out: list[Section] = []
    if not marks or marks[0][0] > 0:
        out.append(Section("hpi", 0, marks[0][0] if marks else len(text)))
    for i, (_s, body_start, name) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        out.append(Section(name, body_start, end))
    return [s for s in out if s.end > s.start]


def sentences(text: str) -> list[Sentence]:
    """Sentences (and list items) with offsets and their section."""
    out: list[Sentence] = []
    for sec in sections(text):
        body = text[sec.start:sec.end]
        pos = 0
        for m in _SENT_END.finditer(body):
            end = m.end() if m.group(0) in ".!?" else m.start()
            _add(out, text, sec, sec.start + pos, sec.start + end)
            pos = m.end()
        _add(out, text, sec, sec.start + pos, sec.end)
    return out


def _add(out: list[Sentence], text: str, sec: Section, start: int, end: int) -> None:
    raw = text[start:end]
    stripped = raw.strip()
    lead = re.match(r"\s*(?:[-*•]|\d+[.)])?\s*", raw)
    s = start + (lead.end() if lead else 0)
    e = start + len(raw.rstrip())
    if e - s < 2 or not stripped:
        return
    out.append(Sentence(start=s, end=e, text=text[s:e], section=sec.name, index=len(out)))
