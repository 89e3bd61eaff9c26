"""Segmentation of clinical text into sections and sentences with exact character offsets.

The sections, their header names, the sub-headers that stay inside a section and the short answers a field may be
given are rules (``rules/sections/sections.yaml``). Handles prose case histories, SOAP notes with headers
("SUBJECTIVE:", "HISTORY OF PRESENT ILLNESS:", "MENTAL STATUS EXAM:", "S:"/"O:"/"A:"/"P:"), inline headers
("HPI: ...", "...,SOCIAL HISTORY:, ..."), sub-headers inside a section ("MOOD:" in the mental status examination,
"HEENT:" in the physical examination, "AXIS I:" in a diagnosis list), headings on a line of their own without a
colon ("HOSPITAL COURSE"), header blocks of "Field: value" lines, notes written all in capitals, and bulleted or
numbered lists (each item is a sentence).

Each sentence also says whether it is a form field or a question and how it was answered: a leading field label
("Suicidal/Homicidal:") or a question ("Do you smoke?") asserts nothing by itself; the answer ("None.", "No.",
"Unknown.") decides (see :attr:`Sentence.answer`). A section whose whole body is such an answer ("LEGAL ISSUES:
None.") is one sentence whose label is the header.

Example::

    >>> [(s.section, s.text) for s in sentences("HPI: Low mood. Sleeps poorly.\\nPLAN:\\n- Start sertraline.")]
    [('hpi', 'Low mood.'), ('hpi', 'Sleeps poorly.'), ('plan', 'Start sertraline.')]
    >>> s = sentences("LEGAL HISTORY:  None.")[0]
    >>> (s.text, s.text[:s.label_end].strip(), s.answer)
    ('LEGAL HISTORY:  None.', 'LEGAL HISTORY:', 'negative')
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pydantic import Field

from anonpsy.caseless import Caseless
from anonpsy.lexicon import _FileHeader, _Strict, load_doc

Answer = Literal["negative", "unknown", "positive"]
MedicationList = Literal["current", "home", "past", "once"]


class SectionRule(_Strict):
    """One canonical section and the headers that name it."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    tier: int = Field(ge=0, le=9)
    aliases: tuple[str, ...]
    history: bool = False
    medication_list: MedicationList | None = None
    treatment_decisions: bool = False
    note: str | None = None
    source: str | None = None


class SubsectionRule(_Strict):
    """Headers that stay inside ``parent`` (fields of the mental status examination, systems of an examination)."""

    parent: str
    aliases: tuple[str, ...]


class AnswerRules(_Strict):
    negative: tuple[str, ...]
    unknown: tuple[str, ...]
    positive: tuple[str, ...]


class SectionRules(_FileHeader):
    default_section: str
    sections: tuple[SectionRule, ...]
    subsections: tuple[SubsectionRule, ...] = ()
    answers: AnswerRules


@dataclass(frozen=True)
class SectionTable:
    """The compiled section rules."""

    rules: SectionRules
    alias_to_section: dict[str, str]
    subsections: dict[str, frozenset[str]]
    by_id: dict[str, SectionRule]
    answers: dict[str, Answer]
    #: Headers already named (every read of a text names its headers again).
    _names: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)
    #: Each alias' place in ``alias_to_section`` (filled on first use).
    _rank: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_doc(cls, doc: dict[str, object]) -> SectionTable:
        rules = SectionRules.model_validate(doc)
        alias: dict[str, str] = {}
        for sec in rules.sections:
            for a in sec.aliases:
                alias.setdefault(_key(a), sec.id)
        subs: dict[str, set[str]] = {}
        for sub in rules.subsections:
            subs.setdefault(sub.parent, set()).update(_key(a) for a in sub.aliases)
        answers: dict[str, Answer] = {}
        polarities: tuple[tuple[Answer, tuple[str, ...]], ...] = (
            ("negative", rules.answers.negative), ("unknown", rules.answers.unknown),
            ("positive", rules.answers.positive))
        for polarity, words in polarities:
            for a in words:
                answers.setdefault(_key(a), polarity)
        return cls(rules, alias, {k: frozenset(v) for k, v in subs.items()}, {s.id: s for s in rules.sections},
                   answers)

    def name(self, raw: str) -> str | None:
        """The canonical section a header names, or None."""
        if raw not in self._names:
            if len(self._names) >= 4096:
                self._names.clear()
            self._names[raw] = self._name(raw)
        return self._names[raw]

    def _name(self, raw: str) -> str | None:
        key = _key(raw)
        if key in self.alias_to_section:
            return self.alias_to_section[key]
        # "ASSESSMENT/PLAN", "Impression & Plan": a slash or an ampersand joins the parts like "and" does, so a
        # header listed with "and" names the same section
        joined = re.sub(r"\s*(?:/|&)\s*", " and ", key)
        if joined in self.alias_to_section:
            return self.alias_to_section[joined]
        # the first alias of the table (longer than three characters) that the key begins with, then a space: each
        # such beginning of the key is looked up, not every alias tried
        if not self._rank:
            self._rank.update((a, i) for i, a in enumerate(self.alias_to_section))
        first: str | None = None
        at = key.find(" ")
        while at >= 0:
            a = key[:at]
            if len(a) > 3 and a in self.alias_to_section and (first is None or self._rank[a] < self._rank[first]):
                first = a
            at = key.find(" ", at + 1)
        if first is not None:
            return self.alias_to_section[first]
        # "IDENTIFICATION AND REASON FOR ADMISSION", "REASON FOR ADMISSION/CHIEF COMPLAINT": the last part that
        # names a section decides -- except the family history: under "SHX/FHX" or "SOCIAL/FAMILY HISTORY" the
        # patient's own habits have no relative named while a relative's illness names the relative, so the
        # other part decides.
        found = None
        for part in re.split(r"\s+(?:and|&)\s+|\s*/\s*|\s+-\s+", key):
            if part in self.alias_to_section and len(part) > 1 and (
                    found is None or self.alias_to_section[part] != _FAMILY):
                found = self.alias_to_section[part]
        return found

    def is_subsection(self, raw: str, parent: str | None) -> bool:
        return parent is not None and _key(raw) in self.subsections.get(parent, frozenset())

    def answer(self, text: str) -> Answer | None:
        """The polarity of a short answer ("None.", "No known drug allergies" is not one), or None."""
        key = _key(text)
        if key in self.answers:
            return self.answers[key]
        # "The patient denies on admission.", "He denies."
        key = re.sub(r"^(?:the patient|patient|pt|he|she|they|client|the client)\s+", "", key)
        key = re.sub(r"\s+(?:on admission|at this time|at present|currently|today|now|at discharge)$", "", key)
        if key in self.answers:
            return self.answers[key]
        m = re.match(r"(no|none|denies|denied|never|negative)\b[,;:]?", key)
        if m and len(key.split()) <= 3 and key.split()[-1] not in ("known", "history"):
            return "negative"
        return None


_SPACES = re.compile(r"\s+")
_PARENTHESIS = re.compile(r"\([^)]*\)")


def _key(raw: str) -> str:
    return _SPACES.sub(" ", _PARENTHESIS.sub(" ", raw).strip().lower()).strip(" -/.,;:")


@lru_cache(maxsize=1)
def section_table() -> SectionTable:
    """The project's section rules (``rules/sections/sections.yaml``), compiled (cached)."""
    return SectionTable.from_doc(load_doc("sections"))


def section_tier(name: str) -> int:
    """Precedence tier of a section when mentions of one diagnosis disagree (higher decides); unknown sections
    rank with the history."""
    rule = section_table().by_id.get(name)
    return rule.tier if rule is not None else 1


def is_history_section(name: str) -> bool:
    """Does the section hold the patient's past (past psychiatric or medical history, past medications)?"""
    rule = section_table().by_id.get(name)
    return bool(rule and rule.history)


def medication_list(name: str) -> MedicationList | None:
    """What being listed in a medication list section means: current, home (before this admission) or past."""
    rule = section_table().by_id.get(name)
    return rule.medication_list if rule is not None else None


def decides_treatment(name: str) -> bool:
    """Is a drug named in this section a decision of this visit (the plan, the assessment, the discharge list)?"""
    rule = section_table().by_id.get(name)
    return bool(rule and rule.treatment_decisions)


_DECIDING: tuple[SectionTable, frozenset[str]] | None = None


def deciding_sections() -> frozenset[str]:
    """The sections of the highest tier: the diagnosis list and the assessment (computed once per section table:
    every diagnosis mention asks)."""
    global _DECIDING
    table = section_table()
    if _DECIDING is None or _DECIDING[0] is not table:
        top = max(s.tier for s in table.rules.sections)
        _DECIDING = (table, frozenset(s.id for s in table.rules.sections if s.tier == top))
    return _DECIDING[1]


#: One-letter SOAP headers are recognised only in capitals at the start of a line.
_SOAP_LETTERS = {"s", "o", "a", "p"}
#: Short all-capital headers that name a section ("HPI:", "CC:", "FH:").
_HEADER = re.compile(
    r"(?m)^[ \t]*(?P<name>[A-Z][A-Za-z /&'()-]{0,60}?)[ \t]*,?[ \t]*:[ \t,]*",
)
# Each pattern below that opens with lookbehinds first looks ahead at the characters it can start with, so the
# lookbehinds are tried only there (the same matches, a fraction of the work on a long note).
#: An inline capitalised header inside a line ("...,SOCIAL HISTORY:, ...").
_INLINE_HEADER = re.compile(r"(?=[A-Z])(?:(?<=[,.;])|(?<=[,.;]\s)|(?<=\s\s))"
                            r"(?P<name>[A-Z][A-Z /&'()-]{1,60}[A-Z)])\s*,?\s*:[ \t,]*")
#: Capitalised words glued before an inline header with commas ("...,ALCOHOL, NICOTINE, DRUG USE:"): the header's
#: own first parts.
_GLUED_PARTS = re.compile(r"(?=[A-Z])(?:(?<=[,.;])|(?<=[,.;]\s))(?:[A-Z][A-Z/&'()-]*(?: [A-Z/&'()-]+)*,\s?)+$")
#: A known header in capitals glued with a comma, no colon, before a numbered list ("...,PLAN,1.  Safety.").
_COMMA_HEADER = re.compile(r"(?=[A-Z])(?:(?<=[,.;])|(?<=[,.;]\s)|(?<=\s\s))(?P<name>[A-Z][A-Z /&'-]{1,40}[A-Z])\s*,"
                           r"(?=\s*\d{1,2}[.)]\s)")
#: A known header in any case glued into a line with MTSamples' ":," ("...resolved.,Past Medical History:, None.").
#: Only the comma glue on both sides and a name the section table knows make a title-case phrase a header.
_TITLE_GLUED_HEADER = re.compile(r"(?=[A-Z])(?<=[,.;])(?P<name>[A-Z][A-Za-z /&'()-]{1,60}?)[ \t]*:[ \t]*,[ \t]*")
#: A heading on a line of its own, in capitals, without a colon.
_BARE_HEADING = re.compile(r"(?m)^[ \t]*(?P<name>[A-Z][A-Z /&'()-]{2,70}[A-Z)])[ \t]*$")
_ABBREV = (r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bapprox)"
           r"(?<!\bNo)(?<!\ba\.m)(?<!\bp\.m)")
#: A capitalised word that starts a sentence and is no surname: a pronoun, a determiner, a preposition, an auxiliary
#: or a verb of the note's narrative ("There is", "He was", "The MRI", "On examination", "Please").
_STARTER = (r"(?:There|This|These|That|Those|The|He|She|It|They|We|I|His|Her|Their|Our|My|Its|A|An|In|On|At|"
            r"For|With|After|Before|During|Since|When|While|If|As|Per|Under|Upon|From|To|By|Following|Given|Due|"
            r"Because|Although|However|Also|Then|Subsequently|Currently|Recently|Today|Yesterday|Tomorrow|Now|"
            r"Please|Is|Was|Are|Were|Has|Had|Have|Does|Did|Do|Will|Would|Patient|Pt)")
_SENT_END = re.compile(r"(?=[.!?\n,])(?:"
                       # a question mark standing for a doubt at the head of a list item ("Zetia 10 mg daily,
                       # ? Triglide 50 mg daily") ends no sentence
                       + _ABBREV + r"(?:[.!]|(?<![,;(]\s)(?<![,;(])\?)[\"'”’)\]]?(?=\s+[A-Z0-9\"'“‘(])"
                       # a dose time after an abbreviation ("300 mg p.o. AM and 600 mg") ends no sentence
                       r"(?!\s+[AP]M\b)|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)"
                       # "No." is an answer before a word, an abbreviation only before a number ("No. 5").
                       r"|(?<=\bNo)\.(?=\s+[A-Z\"'“‘(])"
                       # a single capital that names a vitamin or a hepatitis ("takes vitamin D. She ...", "has
                       # hepatitis C. He ...") is no initial: its period ends the sentence before a capitalised word
                       r"|(?:(?<=\b[Vv]itamin [A-Z])|(?<=\b[Hh]epatitis [A-Z])|(?<=\bVITAMIN [A-Z])"
                       r"|(?<=\bHEPATITIS [A-Z]))\.(?=\s+[A-Z][a-z])"
                       # a title and a single letter standing for the name ("evaluation for Mr. A. There is a
                       # meningioma"): the letter's period ends the sentence before a word that starts one, never
                       # before a surname ("Dr. A. Smith")
                       r"|(?:(?<=\bMr\. [A-Z])|(?<=\bMrs\. [A-Z])|(?<=\bMs\. [A-Z])|(?<=\bDr\. [A-Z])"
                       r"|(?<=\bMiss [A-Z]))\.(?=\s+" + _STARTER + r"\b)"
                       # "cooperative.,Appearance": list items run together with ".," in exported notes (not a
                       # comma after a dose abbreviation: "600 mg p.o. q.p.m., Abilify 15 mg").
                       r"|(?<=[.!?])(?<!\.[a-z]\.),(?=\s*[A-Z])"
                       # '"No.",Any typical drinks...': answers in quotes run together the same way.
                       r"|(?<=[.!?][\"”]),(?=\s*[A-Z]))")
#: "p.r.n." as a modifier before a drug name ("taper off p.r.n. Ativan", "given his p.r.n. Haldol"): the word before
#: it is no dose or frequency, so the capital after it starts no sentence.
_PRN_BEFORE_NAME = Caseless(re.compile(
    r"\b(?:off|on|of|the|a|an|his|her|their|any|all|given|gets|got|receive[sd]?|receiving|takes?|took|taking|"
    r"use[sd]?|using|with|and|or|needs?|needed|request(?:s|ed)?|requir(?:es|ed|ing)|continue[sd]?|discontinue[sd]?|"
    r"stop(?:s|ped)?|give[sn]?|tapered|tapering|taper)\s+p\.r\.n\.$", re.I))
#: A field label at the start of a sentence ("Suicidal/Homicidal Ideation:", "AXIS I:"; at most six words).
_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z][\w'/&(),. -]{0,60}?)\s*,?\s*:(?=\s|$)")
#: A field label set off by a spaced dash ("Alcohol - denies."): a label only when a short answer follows, since
#: a dash also sets off what a list says of an item ("Major depressive disorder - stable").
_DASH_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z][\w'/&(),. ]{0,60}?)\s+[-\u2013\u2014]\s+")
_INTERROGATIVE = re.compile(r"^(?:do|does|did|have|has|had|are|is|was|were|will|would|can|could|should|what|"
                            r"when|where|how|who|whom|which|why|any)\b.{0,200}?\byou(?:r|rs|rself)?\b", re.I)
#: Quotes around an answer written as the patient's words ('Do you smoke - "No."').
_ANSWER_STRIP = " \t\r\n,;:.-–—\"“”"
#: The end of a question whose answer follows in the same sentence: "?", or a dash after an interrogative.
_QUESTION_END = re.compile(r"\?|\s[–—-]{1,2}\s|\s--")


def _has_dash(text: str) -> bool:
    """Does ``text`` hold a dash of :data:`_DASH_LABEL` or :data:`_QUESTION_END` (most sentences hold none, and
    this test costs less than the patterns' search)?"""
    return "-" in text or "\u2013" in text or "\u2014" in text


@dataclass(frozen=True)
class Sentence:
    """One sentence (or list item, field line, title line) with its absolute offsets and section.

    ``label_end``: where a leading field label ("Suicidal/Homicidal:", a header whose body is a bare answer) ends
    in ``text`` (0: none). ``question_end``: where a question ends in ``text`` (0: not a question). ``answer``:
    how the label or question is answered ("None." negative, "Unknown." unknown, "Yes." positive; None when
    the rest of the sentence is an ordinary statement or when an unanswered question stands alone). Concepts
    named in the label or the question are asserted only through the answer.
    """

    start: int
    end: int
    text: str
    section: str
    index: int
    label_end: int = 0
    question_end: int = 0
    answer: Answer | None = None

    @property
    def prompt_end(self) -> int:
        """Where the part that only asks (label or question) ends; 0 when the sentence is a plain statement."""
        return max(self.label_end, self.question_end)


@dataclass(frozen=True)
class Section:
    name: str
    start: int
    end: int
    header_start: int | None = None


def section_name(raw: str) -> str | None:
    """The canonical section a header names ("History of Present Illness" → ``hpi``), or None.

    >>> section_name("DEVELOPMENTAL AND JUVENILE HISTORY"), section_name("Psych hx"), section_name("Patient")
    ('social_history', 'past_psych', None)
    """
    return section_table().name(raw)


_section_name = section_name


_ASCII_LETTERS = string.ascii_letters.encode()
_ASCII_UPPER = string.ascii_uppercase.encode()


def _shouting(text: str) -> bool:
    """Is the whole note written in capitals (headers cannot be told from prose by case)?"""
    head = text[:5000]
    if head.isascii():  # the letters are A-Z and a-z: counted by deleting them, with no step per character
        raw = head.encode("ascii")
        letters = len(raw) - len(raw.translate(None, _ASCII_LETTERS))
        upper = len(raw) - len(raw.translate(None, _ASCII_UPPER))
        return letters >= 40 and upper / letters > 0.9
    found = list(filter(str.isalpha, head))
    return len(found) >= 40 and sum(map(str.isupper, found)) / len(found) > 0.9


def _header_marks(text: str, table: SectionTable | None = None) -> list[tuple[int, int, str | None]]:
    """The marks of :func:`_marks` (remembered for the last texts read with the project's section table:
    :func:`sentences` and :func:`sections` both need them)."""
    default = section_table()
    if table is None or table is default:
        return list(_default_marks(text))
    return _marks(text, table)


@lru_cache(maxsize=64)
def _default_marks(text: str) -> tuple[tuple[int, int, str | None], ...]:
    return tuple(_marks(text, section_table()))


def _marks(text: str, table: SectionTable) -> list[tuple[int, int, str | None]]:
    """(start, body start, section or None) for every header or heading; None = a heading naming no section
    (a title line), which only ends the previous sentence. A sub-header of the section it sits in (a field of
    the mental status examination) is no mark; an unknown header in capitals starts an 'other' section (in a
    note written all in capitals only known headers count)."""
    caps = _shouting(text)
    cands: dict[int, tuple[int, int, str, str]] = {}  # start -> (start, body start, raw, how)
    for m in _HEADER.finditer(text):
        cands.setdefault(m.start("name"), (m.start("name"), m.end(), m.group("name"), "line"))
    for m in _INLINE_HEADER.finditer(text):
        start = m.start("name")
        glued = None if caps else _GLUED_PARTS.search(text, max(0, start - 80), start)
        raw = m.group("name")
        if glued is not None and table.name(raw) is not None and re.search(r"[A-Z]{3}", glued.group()):
            start, raw = glued.start(), text[glued.start():m.end("name")]
        cands.setdefault(start, (start, m.end(), raw, "inline"))
    for m in _COMMA_HEADER.finditer(text):
        if table.name(m.group("name")) is not None:
            cands.setdefault(m.start("name"), (m.start("name"), m.end(), m.group("name"), "inline"))
    if not caps:
        for m in _TITLE_GLUED_HEADER.finditer(text):
            if table.name(m.group("name")) is not None:
                cands.setdefault(m.start("name"), (m.start("name"), m.end(), m.group("name"), "glued"))
    for m in _BARE_HEADING.finditer(text):
        cands.setdefault(m.start("name"), (m.start("name"), m.end(), m.group("name"), "bare"))
    marks: list[tuple[int, int, str | None]] = []
    current: str | None = None
    container: str | None = None  # the section whose sub-headers are being read ("mse", "exam", "diagnoses")
    for start in sorted(cands):
        _s, body, raw, how = cands[start]
        raw = raw.strip()
        name = table.name(raw)
        if name is None and how == "inline" and "," in raw:
            name = table.name(raw.rsplit(",", 1)[1])
        upper = raw.isupper() or not re.search(r"[a-z]", raw)
        if name is not None:
            if how == "line" and raw.lower() in _SOAP_LETTERS and not upper:
                continue
            if how == "inline" and not upper:
                continue
            if how == "line" and not (upper or raw.istitle() or raw[:1].isupper()):
                continue
            # A known section always starts ("VITAL SIGNS:" in an examination is read as vital signs); when it is
            # also a sub-header of the container ("PSYCHIATRIC:" in a physical examination), the container's next
            # sub-header ("NECK:") returns to it.
            if not table.is_subsection(raw, container):
                container = name if name in table.subsections else None
            marks.append((start, body, name))
            current = name
            continue
        if table.is_subsection(raw, container):
            if current != container:
                marks.append((start, body, container))
                current = container
            continue
        if how == "bare":
            if re.search(r"[A-Z]{2}", raw) and not caps:
                marks.append((start, body, None))
            continue
        if caps or not upper or not re.search(r"[A-Z]{3}", raw) or len(raw) <= 3:
            continue
        # An unknown capitalised header still ends the section before it ("ASSETS:", "GENERAL OBSERVATIONS:").
        marks.append((start, body, "other"))
        current, container = "other", None
    return marks


def sections(text: str, table: SectionTable | None = None) -> list[Section]:
    """Sections by recognised headers; text before the first header is the default section ('hpi', prose
    histories). A heading that names no section (a title line such as "DISCHARGE SUMMARY") keeps the current
    section."""
    table = table or section_table()
    marks = [(s, b, n) for s, b, n in _header_marks(text, table) if n is not None]
    out: list[Section] = []
    if not marks or marks[0][0] > 0:
        out.append(Section(table.rules.default_section, 0, marks[0][0] if marks else len(text)))
    for i, (s, body_start, name) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        assert name is not None
        if table.by_id.get(name) is not None and table.by_id[name].medication_list == "current" and \
                not table.by_id[name].treatment_decisions and _ADMISSION_LIST.match(text, body_start, end):
            # "MEDICATIONS: On transfer, Celebrex, Coumadin, ...": the list the patient came in with
            name = _HOME_LIST
        out.append(Section(name, body_start, end, s))
    return [s for s in out if s.end > s.start]


#: A medication list whose body first says it is the list at admission ("MEDICATIONS: On admission, ...",
#: "MEDS: On transfer, ...", "Medications: Prior to admission she took ..."): a home list, whatever its header.
_ADMISSION_LIST = re.compile(r"[\s,:;.-]*(?:(?:on|upon|at)\s+(?:the\s+time\s+of\s+)?(?:her\s+|his\s+)?"
                             r"(?:admission|transfer|arrival|presentation)|prior\s+to\s+(?:admission|transfer|"
                             r"arrival)|at\s+home)\b", re.I)
_HOME_LIST = "home_medications"
_FAMILY = "family_history"


_NEWLINE = re.compile(r"\n")
_FIELD_LINE = re.compile(r"[A-Z][\w /&'()-]{0,40}:")


def _line_breaks(text: str, start: int, end: int) -> list[int]:
    """Offsets of single newlines in ``text[start:end]`` that end a sentence: a header-block line ("Date: ..."),
    a title line, or a line ending in sentence punctuation followed by a capitalised line. A line wrapped in the
    middle of a sentence (the next line starts in lower case) is not a break."""
    out: list[int] = []
    for m in _NEWLINE.finditer(text[start:end]):
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
                or _FIELD_LINE.match(nxt)):
            out.append(pos)
    return out


def sentences(text: str, table: SectionTable | None = None) -> list[Sentence]:
    """Sentences (and list items, header-block lines and title lines) with offsets, their section, and their
    field label, question and answer."""
    table = table or section_table()
    out: list[Sentence] = []
    titles = [(s, b) for s, b, n in _header_marks(text, table) if n is None]
    for sec in sections(text, table):
        body = text[sec.start:sec.end]
        bare = body.strip(" \t\r\n,;:.")
        if sec.header_start is not None and bare and len(bare) <= 40 and table.answer(bare) is not None:
            # "PAST AND PRESENT ALCOHOL USE:, None.": the header is the question, the body its answer
            _add(out, text, sec, sec.header_start, sec.end, table, label_end=sec.start)
            continue
        cuts: list[tuple[int, int]] = []  # (end of previous sentence, start of next), absolute offsets
        for m in _SENT_END.finditer(body):
            if _PRN_BEFORE_NAME.search(body, max(0, m.end() - 40), m.end()):
                continue
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
            _add(out, text, sec, pos, end, table)
            pos = max(pos, nxt)
        _add(out, text, sec, pos, sec.end, table)
    return _answer_questions(out, table)


_BULLET = re.compile(r"\s*(?:[-*•]|\d+[.)])?\s*")


def _add(out: list[Sentence], text: str, sec: Section, start: int, end: int, table: SectionTable,
         label_end: int | None = None) -> None:
    raw = text[start:end]
    stripped = raw.strip()
    lead = _BULLET.match(raw)
    s = start + (lead.end() if lead else 0)
    e = start + len(raw.rstrip().rstrip(",").rstrip())
    if e - s < 2 or not stripped:
        return
    out.append(_form(s, e, text[s:e], sec.name, len(out), None if label_end is None else label_end - s, table))


def _form(start: int, end: int, text: str, section: str, index: int, label_end: int | None,
          table: SectionTable) -> Sentence:
    """The sentence with its field label, question and answer read (remembered per sentence text with the
    project's section table: the round trip reads a sentence again in every text that holds it)."""
    if table is not section_table():
        return _read_form(Sentence(start, end, text, section, index), label_end, table)
    f = _default_form(text, label_end)
    return Sentence(start, end, text, section, index, f.label_end, f.question_end, f.answer)


@lru_cache(maxsize=4096)
def _default_form(text: str, label_end: int | None) -> Sentence:
    return _read_form(Sentence(0, len(text), text, "", 0), label_end, section_table())


def _read_form(s: Sentence, label_end: int | None, table: SectionTable) -> Sentence:
    text = s.text
    if label_end is None:
        m = _LABEL.match(text) if ":" in text else None  # every label ends with a colon
        label_end = m.end() if m and len(m.group("label").split()) <= 6 and not re.search(
            r"[.!?]\s", m.group("label")) else 0
        if not label_end:
            d = _DASH_LABEL.match(text) if _has_dash(text) else None
            # a question set off by a dash ("Do you smoke - No.") is a question and its answer, read below
            if d is not None and len(d.group("label").split()) <= 6 and not _INTERROGATIVE.match(
                    d.group("label")) and table.answer(text[d.end():].strip(_ANSWER_STRIP)) is not None:
                label_end = d.end()
    for _ in range(3):
        # "Psychiatric: Depression: No.": a field nested in a label; the innermost label takes the answer
        inner = _LABEL.match(text[label_end:]) if label_end else None
        if inner is None or len(inner.group("label").split()) > 6 or table.answer(
                text[label_end + inner.end():].strip(_ANSWER_STRIP)) is None:
            break
        label_end += inner.end()
    rest = text[label_end:]
    question_end = 0
    answer: Answer | None = None
    q = _QUESTION_END.search(rest) if "?" in rest or _has_dash(rest) else None
    # an interrogative needs a "you" (which most sentences lack) after its opening word
    asks = rest.rstrip().endswith("?") or ("you" in rest.lower() and bool(_INTERROGATIVE.match(rest.strip())))
    if q is not None and asks:
        question_end = label_end + q.end()
        tail = rest[q.end():].strip(_ANSWER_STRIP)
        answer = table.answer(tail) if tail else None
        if tail and answer is None:
            answer = "unknown" if len(tail.split()) > 6 else None
    elif label_end:
        tail = rest.strip(_ANSWER_STRIP)
        answer = table.answer(tail) if tail else None
    if label_end and question_end == 0 and answer is None and not rest.strip(" \t\r\n,;:."):
        answer = "unknown"  # a field with no value
    return Sentence(s.start, s.end, s.text, s.section, s.index, label_end, question_end, answer)


def _answer_questions(sents: list[Sentence], table: SectionTable) -> list[Sentence]:
    """A question followed by a bare answer ("Do you smoke?" "No.") takes that answer."""
    out = list(sents)
    for i in range(len(out) - 1):
        s, nxt = out[i], out[i + 1]
        if s.question_end and s.answer is None and s.question_end >= len(s.text.rstrip()) and not nxt.prompt_end:
            polarity = table.answer(nxt.text.strip(" \t\r\n,;:."))
            if polarity is not None:
                out[i] = Sentence(s.start, s.end, s.text, s.section, s.index, s.label_end, s.question_end, polarity)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Clauses


_HARD_BREAK = Caseless(re.compile(r";|\.\s|\s(?:but|however|although|though|whereas|yet)\s|:\s", re.I))


def clause_bounds(sentence: str, pos: int) -> tuple[int, int]:
    """[start, end) of the clause around ``pos``: split at semicolons, full stops and contrast words."""
    start, end = 0, len(sentence)
    for m_start, m_end in _hard_breaks(sentence):
        if m_end <= pos:
            start = m_end
        elif m_start >= pos:
            end = m_start
            break
    return start, end


@lru_cache(maxsize=4096)
def _hard_breaks(sentence: str) -> tuple[tuple[int, int], ...]:
    # every mention of a sentence asks for its clause, each step that reads it again, and every read of the text
    return tuple(m.span() for m in _HARD_BREAK.finditer(sentence))


def segments(sentence: str) -> list[tuple[int, int]]:
    """Comma/semicolon-delimited segments (outside quotes) with offsets."""
    return list(_segments(sentence))


@lru_cache(maxsize=4096)
def _segments(sentence: str) -> tuple[tuple[int, int], ...]:
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
    return tuple((a, b) for a, b in out if sentence[a:b].strip())


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
