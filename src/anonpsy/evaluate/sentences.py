"""A sentence splitter for clinical text, with the section each sentence sits in.

Written for the fidelity scorer, which must not share code with the extractor it judges. It copes with what
transcribed clinical notes do:

* section headers in capitals ending with a colon, on their own line or glued into the running text with
  commas (``...interview data.,SUMMARY AND RECOMMENDATIONS:,  Mr. ...``): each header becomes its own
  segment and names the section of the sentences that follow it;
* abbreviations with periods (``Dr.``, ``Mr.``, ``b.i.d.``, ``p.r.n.``, ``e.g.``, ``vs.``), decimals (``8.8``)
  and initials (``Dr. B put her on``) do not end a sentence;
* numbered list markers (``1. Seasonal depressive disorder. 2. Restless legs syndrome.``) stay with their item;
* line breaks end a sentence; question marks do too, and a sentence that asks (``Have you used any drugs
  recently?``, ``What is your occupation:``) is marked as a question: a question asserts nothing.

Sentences are numbered from 0 in text order (headers included), so a finding can point at "sentence 7" without
quoting the text. :func:`split_sentences` is pure and linear in the text length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Lower-case abbreviations that end with a period without ending the sentence (compared without the periods).
ABBREVIATIONS: frozenset[str] = frozenset({
    "dr", "mr", "mrs", "ms", "st", "jr", "sr", "prof", "vs", "eg", "ie", "approx", "appt", "dept",
    "bid", "tid", "qid", "qhs", "hs", "prn", "po", "qd", "qam", "qpm", "qod", "im", "iv", "sl",
    "pt", "pts", "hx", "dx", "tx", "rx", "sx", "fx", "yo", "yrs", "mos", "wks", "inc", "co", "ltd", "fig", "cf",
    "al", "ca", "mt", "ave", "blvd", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mon", "tue", "wed", "thu", "fri",
    "sat", "sun", "ext", "univ", "med", "hosp",
})
_TITLES: frozenset[str] = frozenset({"dr", "mr", "mrs", "ms", "st", "jr", "sr", "prof", "messrs", "rev"})
# Words that open a sentence after an abbreviation with periods ("... 25 mg b.i.d. She ...").
_OPENERS: frozenset[str] = frozenset({
    "he", "she", "they", "we", "i", "it", "the", "this", "that", "these", "his", "her", "their", "patient",
    "then", "there", "no", "on", "in", "at", "after", "she's", "he's", "mother", "father", "family", "will",
    "plan", "continue", "start", "discontinue", "return", "follow", "denies", "reports", "states",
})
_HEADER_RE = re.compile(
    # A run of capitals (words, digits, / & ' ( ) - and spaces) of at least two letters, ending with a colon,
    # at the start of the text or a line, or after a comma/period glue; a comma glued before the colon
    # ("MEDICATIONS,:") is the same header.
    r"(?:(?<=^)|(?<=\n)|(?<=[,.;])|(?<=\s\s))[ \t,]*"
    r"(?P<h>[A-Z][A-Z0-9/&'()\- ]*[A-Z)](?:\s+[IVX]+)?)\s*,?:[ \t]*,?"
)
_QUESTION_START = re.compile(
    r"^\s*(?:\d+[.)]\s*)?(?:what|when|where|why|who|whom|which|how|have you|has (?:he|she|anyone|the patient)|"
    r"had you|do you|does (?:he|she|the patient)|did you|are you|is (?:there|he|she)|were you|was (?:there|he|she)|"
    r"can you|could you|would you|will you|describe|list|please (?:describe|list|explain))\b",
    re.I,
)
_END_RE = re.compile(r"[.!?]+[\"')\]]*(?:,(?=[A-Z\"'])|(?=\s))|\n")
_ANSWER = re.compile(r"(?:\?|\s[-–—]+|:)\s*[\"“]?(?=\s*[A-Z])")
_LIST_MARKER = re.compile(r"^\s*(?:\d{1,2}|[A-Za-z]|[ivxIVX]{1,4})[.)]?\s*$")


@dataclass(frozen=True)
class Sentence:
    """One sentence (or header) of a text: its index, character span, section and kind."""

    index: int
    start: int
    end: int
    text: str
    section: str | None
    header: bool = False
    question: bool = False


def _headers(text: str) -> list[tuple[int, int, str]]:
    """(start, end, header name) of every capitalised section header."""
    out: list[tuple[int, int, str]] = []
    for m in _HEADER_RE.finditer(text):
        name = m.group("h").strip()
        letters = sum(c.isalpha() for c in name)
        if letters < 3 or len(name) > 70:
            continue
        out.append((m.start("h"), m.end(), name))
    return out


def _ends_sentence(text: str, dot: int, seg_start: int) -> bool:
    """Whether the period at ``dot`` ends a sentence (not an abbreviation, initial, decimal or list marker)."""
    nxt = dot + 1
    while nxt < len(text) and text[nxt] in ".!?\"')],":
        nxt += 1
    rest = text[nxt:nxt + 3].lstrip()
    if text[dot] == "." and rest and not (rest[0].isupper() or rest[0].isdigit() or rest[0] in "\"'([-"):
        return False
    if text[dot] != ".":
        return True
    j = dot
    while j > seg_start and (text[j - 1].isalnum() or text[j - 1] == "."):
        j -= 1
    word = text[j:dot]
    bare = word.replace(".", "").lower()
    if not bare:
        return True
    if bare in _TITLES or (len(bare) == 1 and bare.isalpha()):
        return False
    if bare in ABBREVIATIONS or ("." in word and len(bare) <= 4 and bare.isalpha()):
        # b.i.d., q.h.s., p.m., etc.: a sentence ends only when a usual sentence opener follows.
        nxt_word = re.match(r"\s*([A-Za-z]+)", text[nxt:nxt + 20])
        return nxt_word is not None and nxt_word.group(1).lower() in _OPENERS and nxt_word.group(1)[0].isupper()
    return not (bare.isdigit() and len(bare) <= 2 and not text[seg_start:j].strip())


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans inside ``text[start:end]`` (no headers inside)."""
    spans: list[tuple[int, int]] = []
    seg = start
    for m in _END_RE.finditer(text, start, end):
        if m.group(0) == "\n":
            spans.append((seg, m.start()))
            seg = m.end()
            continue
        if _ends_sentence(text, m.start(), seg):
            spans.append((seg, m.end()))
            seg = m.end()
    spans.append((seg, end))
    out: list[tuple[int, int]] = []
    carry: int | None = None
    for a, b in spans:
        piece = text[a:b]
        if not piece.strip(" \t\r\n,"):
            continue
        if _LIST_MARKER.match(piece):
            carry = a if carry is None else carry
            continue
        if carry is not None:
            a, carry = carry, None
        out.append((a, b))
    if carry is not None:
        out.append((carry, end))
    return out


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a] in " \t\r\n,":
        a += 1
    while b > a and text[b - 1] in " \t\r\n,":
        b -= 1
    return a, b


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order, each with the section header it follows (None before the first)."""
    out: list[Sentence] = []
    section: str | None = None
    pos = 0
    bounds = [*_headers(text), (len(text), len(text), "")]
    for h_start, h_end, name in bounds:
        for a, b in _pieces(text, pos, h_start):
            a, b = _trim(text, a, b)
            if a >= b:
                continue
            body = text[a:b]
            question = body.rstrip().endswith("?") or bool(_QUESTION_START.match(body))
            answer = _ANSWER.search(body) if question and not body.rstrip().endswith("?") else None
            if answer is not None:
                # "Are you on any medication - "Yes, I am on folic acid."": the question, then its answer.
                out.append(Sentence(len(out), a, a + answer.start(), body[:answer.start()], section, False, True))
                a2, b2 = _trim(text, a + answer.end(), b)
                out.append(Sentence(len(out), a2, b2, text[a2:b2], section, False, False))
                continue
            out.append(Sentence(len(out), a, b, body, section, False, question))
        if name:
            section = name
            a, b = _trim(text, h_start, h_end)
            out.append(Sentence(len(out), a, b, text[a:b], section, True, False))
        pos = h_end
    return out
