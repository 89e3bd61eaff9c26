"""Segmentation of clinical text into sections and sentences with exact character offsets.

Handles prose case histories, SOAP notes with headers ("SUBJECTIVE:", "HISTORY OF PRESENT ILLNESS:",
"MENTAL STATUS EXAM:", "S:"/"O:"/"A:"/"P:"), inline headers ("HPI: ...", "...,SOCIAL HISTORY:, ..."), headings on a
line of their own without a colon ("HOSPITAL COURSE"), header blocks of "Field: value" lines, and bulleted or
numbered lists (each item is a sentence).

Example::

    >>> [(s.section, s.text) for s in sentences("HPI: Low mood. Sleeps poorly.\\nPLAN:\\n- Start sertraline.")]
    [('hpi', 'Low mood.'), ('hpi', 'Sleeps poorly.'), ('plan', 'Start sertraline.')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SECTION_ALIASES: dict[str, tuple[str, ...]] = {
    "chief_complaint": ("chief complaint", "cc", "reason for referral", "reason for consultation", "reason for consult",
                        "reason for visit", "presenting complaint", "presenting problem", "identifying data",
                        "identification", "identifying information", "id", "reason for admission",
                        "reason for evaluation", "question", "consult question"),
    "hpi": ("history of present illness", "hpi", "history of presenting illness", "present illness", "subjective",
            "interval history", "history", "clinical history", "presentation", "course", "background",
            "case history", "adult history", "juvenile history", "s"),
    "past_psych": ("past psychiatric history", "psychiatric history", "past psych history", "pph", "psych hx",
                   "psychiatric hx", "past psychiatric hx"),
    "past_medical": ("past medical history", "medical history", "pmh", "past history", "past surgical history",
                     "medical", "medical hx"),
    "substance": ("substance use history", "substance use", "substance abuse history", "alcohol and drug history",
                  "drug and alcohol history", "substance history", "substance", "substances", "substance hx"),
    "medications": ("medications", "current medications", "meds", "medications on admission",
                    "allergies and medications", "medication list", "home medications", "discharge medications",
                    "current inpatient medications", "inpatient medications", "admission medications",
                    "outpatient medications"),
    "allergies": ("allergies",),
    "family_history": ("family history", "family psychiatric history", "fh", "family hx", "fhx"),
    "social_history": ("social history", "sh", "developmental history", "personal history", "social hx", "social",
                       "developmental and juvenile history", "psychosocial history"),
    "mse": ("mental status exam", "mental status examination", "mental status", "mse", "mental status at discharge",
            "discharge mental status", "mental status on admission", "behavioral observations and mental status",
            "behavioral observations", "mental state examination", "mental state exam"),
    "exam": ("objective", "examination", "physical exam", "physical examination", "exam", "o", "general observations",
             "vital signs and examination"),
    "ros": ("review of systems", "ros", "systems review"),
    "labs": ("labs", "laboratory", "laboratory data", "laboratory results", "investigations", "results",
             "diagnostic data", "data", "imaging", "vital signs", "vitals", "testing", "psychological testing",
             "admission findings", "pertinent results", "cognitive testing and results", "cognitive testing",
             "rating scales", "exam/labs", "sources of information"),
    "assessment": ("assessment", "assessment and plan", "impression", "diagnosis", "diagnoses", "formulation",
                   "diagnostic impression", "diagnostic impressions", "impression and plan", "a/p", "summary",
                   "diagnostic formulation", "formulation and diagnosis", "clinical formulation", "case formulation",
                   "discharge diagnoses", "discharge diagnosis", "admission diagnoses", "final diagnoses",
                   "final diagnosis", "a", "clinical impression", "clinical impressions", "impressions",
                   "diagnostic summary"),
    "plan": ("plan", "recommendations", "disposition", "treatment plan", "hospital course", "p",
             "interventions in ed", "follow-up", "follow up", "disposition and follow-up", "capacity"),
}
_ALIAS_TO_SECTION = {a: name for name, aliases in SECTION_ALIASES.items() for a in aliases}
#: One-letter SOAP headers are recognised only in capitals at the start of a line.
_SOAP_LETTERS = {"s", "o", "a", "p"}

_HEADER = re.compile(
    r"(?m)^[ \t]*(?P<name>[A-Z][A-Za-z /&'()-]{0,60}?)[ \t]*:[ \t,]*",
)
#: An inline capitalised header inside a line ("...,SOCIAL HISTORY:, ...").
_INLINE_HEADER = re.compile(r"(?:(?<=[,.;])|(?<=[,.;]\s)|(?<=\s\s))(?P<name>[A-Z][A-Z /&'()-]{2,60}[A-Z)])\s*:[ \t,]*")
#: A heading on a line of its own, in capitals, without a colon.
_BARE_HEADING = re.compile(r"(?m)^[ \t]*(?P<name>[A-Z][A-Z /&'()-]{2,70}[A-Z)])[ \t]*$")
_ABBREV = (r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bapprox)"
           r"(?<!\bNo)(?<!\ba\.m)(?<!\bp\.m)")
_SENT_END = re.compile(_ABBREV + r"[.!?][\"'”’)\]]?(?=\s+[A-Z0-9\"'“‘(])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)"
                       # "cooperative.,Appearance": list items run together with ".," in exported notes.
                       r"|(?<=[.!?]),(?=\s*[A-Z])")


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


def section_name(raw: str) -> str | None:
    """The canonical section a header names ("History of Present Illness" → ``hpi``), or None.

    >>> section_name("DEVELOPMENTAL AND JUVENILE HISTORY"), section_name("Psych hx"), section_name("Patient")
    ('social_history', 'past_psych', None)
    """
    key = re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", " ", raw).strip().lower()).strip(" -/")
    if key in _ALIAS_TO_SECTION:
        return _ALIAS_TO_SECTION[key]
    for alias, name in _ALIAS_TO_SECTION.items():
        if len(alias) > 3 and key.startswith(alias + " "):
            return name
    # "IDENTIFICATION AND REASON FOR ADMISSION", "SLEEP / PSYCHIATRY": the first part that names a section.
    for part in re.split(r"\s+(?:and|&)\s+|\s*/\s*|\s+-\s+", key):
        if part in _ALIAS_TO_SECTION and len(part) > 1:
            return _ALIAS_TO_SECTION[part]
    return None


_section_name = section_name


def _header_marks(text: str) -> list[tuple[int, int, str | None]]:
    """(start, body start, section or None) for every header or heading; None = a heading naming no section
    (a title line), which only ends the previous sentence."""
    marks: dict[int, tuple[int, int, str | None]] = {}
    for m in _HEADER.finditer(text):
        raw = m.group("name")
        name = section_name(raw)
        if name is None:
            continue
        if raw.strip().lower() in _SOAP_LETTERS and not raw.strip().isupper():
            continue
        # A header is uppercase ("HPI:") or Title Case starting a line; avoid "Patient: states ..." prose lines.
        if not (raw.isupper() or raw.istitle() or raw.lower() in _ALIAS_TO_SECTION or raw[:1].isupper()):
            continue
        marks[m.start("name")] = (m.start("name"), m.end(), name)
    for m in _INLINE_HEADER.finditer(text):
        raw = m.group("name")
        if len(raw) <= 3 or m.start("name") in marks or not re.search(r"[A-Z]{3}", raw):
            continue
        # An unknown capitalised header still ends the section before it ("ASSETS:", "GENERAL OBSERVATIONS:").
        marks[m.start("name")] = (m.start("name"), m.end(), section_name(raw) or "other")
    for m in _HEADER.finditer(text):
        raw = m.group("name").strip()
        if m.start("name") not in marks and raw.isupper() and len(raw) > 3 and section_name(raw) is None:
            marks[m.start("name")] = (m.start("name"), m.end(), "other")
    for m in _BARE_HEADING.finditer(text):
        if m.start("name") in marks or not re.search(r"[A-Z]{2}", m.group("name")):
            continue
        marks[m.start("name")] = (m.start("name"), m.end(), section_name(m.group("name")))
    return [marks[k] for k in sorted(marks)]


def sections(text: str) -> list[Section]:
    """Sections by recognised headers; text before the first header is 'hpi' (prose histories).

    A heading that names no section (a title line such as "DISCHARGE SUMMARY") keeps the current section.
    """
    marks = [(s, b, n) for s, b, n in _header_marks(text) if n is not None]
    out: list[Section] = []
    if not marks or marks[0][0] > 0:
        out.append(Section("hpi", 0, marks[0][0] if marks else len(text)))
    for i, (_s, body_start, name) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        assert name is not None
        out.append(Section(name, body_start, end))
    return [s for s in out if s.end > s.start]


def _line_breaks(text: str, start: int, end: int) -> list[int]:
    """Offsets of single newlines in ``text[start:end]`` that end a sentence: a header-block line ("Date: ..."),
    a title line, or a line ending in sentence punctuation followed by a capitalised line. A line wrapped in the
    middle of a sentence (the next line starts in lower case) is not a break."""
    out: list[int] = []
    for m in re.finditer(r"\n", text[start:end]):
        pos = start + m.start()
        nxt = text[pos + 1:end].lstrip(" \t")
        if not nxt or nxt[0] == "\n":
            continue
        prev_line = text[text.rfind("\n", 0, pos) + 1:pos].rstrip()
        if not prev_line:
            continue
        if nxt[0].islower():
            continue
        if (prev_line[-1] in ".:;!?\"')" or len(prev_line) <= 100 or prev_line.isupper()
                or re.match(r"[A-Z][\w /&'()-]{0,40}:", nxt)):
            out.append(pos)
    return out


def sentences(text: str) -> list[Sentence]:
    """Sentences (and list items, header-block lines and title lines) with offsets and their section."""
    out: list[Sentence] = []
    titles = [(s, b) for s, b, n in _header_marks(text) if n is None]
    for sec in sections(text):
        cuts: list[tuple[int, int]] = []  # (end of previous sentence, start of next), absolute offsets
        body = text[sec.start:sec.end]
        for m in _SENT_END.finditer(body):
            end = m.end() if m.group(0)[0] in ".!?" else m.start()
            cuts.append((sec.start + end, sec.start + m.end()))
        for pos in _line_breaks(text, sec.start, sec.end):
            cuts.append((pos, pos + 1))
        for s, b in titles:
            if sec.start <= s < sec.end:
                cuts.append((s, s))
                cuts.append((b, b))
        pos = sec.start
        for end, nxt in sorted(set(cuts)):
            if end < pos:
                continue
            _add(out, text, sec, pos, end)
            pos = max(pos, nxt)
        _add(out, text, sec, pos, sec.end)
    return out


def _add(out: list[Sentence], text: str, sec: Section, start: int, end: int) -> None:
    raw = text[start:end]
    stripped = raw.strip()
    lead = re.match(r"\s*(?:[-*•]|\d+[.)])?\s*", raw)
    s = start + (lead.end() if lead else 0)
    e = start + len(raw.rstrip().rstrip(",").rstrip())
    if e - s < 2 or not stripped:
        return
    out.append(Sentence(start=s, end=e, text=text[s:e], section=sec.name, index=len(out)))


# ---------------------------------------------------------------------------------------------------------------
# Clauses


_HARD_BREAK = re.compile(r";|\.\s|\s(?:but|however|although|though|whereas|yet)\s|:\s", re.I)


def clause_bounds(sentence: str, pos: int) -> tuple[int, int]:
    """[start, end) of the clause around ``pos``: split at semicolons, full stops and contrast words."""
    start, end = 0, len(sentence)
    for m in _HARD_BREAK.finditer(sentence):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


def segments(sentence: str) -> list[tuple[int, int]]:
    """Comma/semicolon-delimited segments (outside quotes) with offsets."""
    out: list[tuple[int, int]] = []
    start = 0
    quote = False
    for i, ch in enumerate(sentence):
        if ch in "\"“”":
            quote = not quote if ch == '"' else ch == "“"
        elif ch in ",;:" and not quote:
            out.append((start, i))
            start = i + 1
    out.append((start, len(sentence)))
    return [(a, b) for a, b in out if sentence[a:b].strip()]


def segment_index(segs: list[tuple[int, int]], pos: int) -> int:
    for i, (a, b) in enumerate(segs):
        if a <= pos < b:
            return i
    return max(0, len(segs) - 1)


def title_line(text: str) -> str:
    """The note's first non-empty line (its title)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""
