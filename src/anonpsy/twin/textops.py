"""Text operations of generation: the REPLACE rewrite, the separately anonymized example pool, style sentences.

* :func:`replace_text` -- a document with every concept mention rewritten to what its published set allows
  (the concept itself, its published generalisation, or a blank), the REPLACE baseline and the first step of
  anonymizing a pool example.
* :func:`anonymize_example` -- a pool document made safe to show a generator: entity mentions rewritten as above,
  then identifiers masked with the project's PHI masking (``anonpsy.phi``, every type), then every word that
  fewer than ``word_floor`` documents of the corpus contain replaced by a blank (the word-level counterpart of
  the entity frequency floor: nothing rare in a pool document reaches a synthetic one).
* :class:`Boilerplate` -- the sentences and headings that at least ``floor`` documents share word for word and that
  name no concept ("The patient tolerated the procedure well."): the only source words the rules writer reuses.
* :func:`style_sentences` -- a text as (heading, sentence, is-scaffold) triples.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from anonpsy.twin.concepts import Hierarchy
from anonpsy.twin.extraction import section_name, sentences
from anonpsy.twin.lines import BLANK
from anonpsy.twin.mentions import Matcher, Mention

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MASK = re.compile(r"\[[A-Z_]+\]")
_HEADING = re.compile(r"([A-Z][A-Z0-9 /&'(),-]{1,60}[A-Z)])\s*:")


def token_df(texts: Iterable[str]) -> Counter[str]:
    """Document frequency of every lower-cased word."""
    df: Counter[str] = Counter()
    for t in texts:
        df.update(set(_WORD.findall(t.lower())))
    return df


def replace_text(text: str, mentions: Sequence[Mention], item: Callable[[str], str | None],
                 other: Callable[[str], str | None], h: Hierarchy, blank: str = BLANK) -> str:
    """Rewrite every mention: an entity mention to ``item(concept)``, any other mention (negated, a relative's …)
    to ``other(concept)``; the result's name, or ``blank`` for None. Unchanged concepts keep their wording."""
    out: list[str] = []
    pos = 0
    for m in sorted(mentions, key=lambda x: x.start):
        if m.start < pos:
            continue
        it = item(m.concept) if m.entity else other(m.concept)
        out.append(text[pos:m.start])
        if it == m.concept:
            out.append(text[m.start:m.end])
        else:
            out.append(blank if it is None else h.name(it))
        pos = m.end
    out.append(text[pos:])
    return "".join(out)


def mask_identifiers(text: str) -> str:
    """Identifiers masked by the project's PHI masking (rule analyzer, every type, ``[TYPE]`` placeholders)."""
    from anonpsy.phi.pipeline import mask_text

    return mask_text(text, operator="mask", policy="all").text


def floor_words(text: str, df: Mapping[str, int], floor: int, blank: str = BLANK) -> str:
    """Words in fewer than ``floor`` documents replaced by ``blank`` (mask placeholders and blanks untouched)."""
    protected = [(m.start(), m.end()) for m in _MASK.finditer(text)]

    def repl(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in protected):
            return m.group(0)
        return m.group(0) if df.get(m.group(0).lower(), 0) >= floor else blank

    return _WORD.sub(repl, text)


@dataclass(frozen=True)
class StyleSentence:
    """One sentence of a style text with the heading it sits under."""

    heading: str | None
    text: str
    scaffold: bool


#: A reusable sentence has at least this many words: shorter ones are list values ("Prostate cancer.",
#: "Circumcision."), which are clinical content, not style.
MIN_WORDS = 4
#: Sections whose sentences state facts about the patient (diagnoses, complaints, histories, habits, drug and
#: allergy lists), not the style of a note.
CONTENT_SECTIONS = frozenset({"assessment", "chief_complaint", "past_medical", "past_psych", "family_history",
                              "social_history", "substance", "medications", "allergies"})
#: Headings of lists of diagnoses, procedures and indications ("POSTOPERATIVE DIAGNOSES", "PROCEDURE PERFORMED").
_CONTENT_HEADING = re.compile(r"diagnos|impression|assessment|indication|complaint|procedures? performed|"
                              r"operations? performed|name of (?:the )?(?:procedure|operation)|title of", re.I)
#: A reusable sentence states something: it has a finite auxiliary or copula. Verbless fragments are list values.
_STATEMENT = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|will|would|does|did|do|can|could|should)\b",
                        re.I)


def _content_section(headings: Counter[str]) -> bool:
    """Is a sentence usually found under a heading that names a content section or a list of diagnoses?"""
    h = headings.most_common(1)[0][0]
    return bool(h) and (section_name(h) in CONTENT_SECTIONS or bool(_CONTENT_HEADING.search(h)))


def sentence_key(text: str) -> str:
    """Identity of a sentence across documents: case-folded, white space collapsed."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def _sections(text: str) -> list[tuple[str | None, str]]:
    """(heading, sentence) pairs of a text; the heading is the last capitalised "HEADING:" before the sentence."""
    out: list[tuple[str | None, str]] = []
    heading: str | None = None
    prev = 0
    for s in sentences(text):
        found = _HEADING.findall(text[prev:s.start])
        if found:
            heading = found[-1].strip()
        prev = s.end
        out.append((heading, s.text.strip()))
    return out


@dataclass
class Boilerplate:
    """Sentences and headings that at least ``floor`` documents of the corpus share word for word: the only words
    of a source document a rules-written twin may reuse. Neither may name a concept ("DEPRESSION:" is no
    reusable heading). A sentence also has to state something
    (at least :data:`MIN_WORDS` words with a finite auxiliary or copula: "The patient tolerated the procedure
    well." is style, "Enlarged fibroid uterus." is content) and not sit in a content section (diagnoses,
    complaints, procedures performed, histories, habits, drug and allergy lists). Shared statements of an
    examination ("Bowel sounds are present.") remain: they are how notes of a kind read, and many documents
    say them."""

    floor: int
    sentences: dict[str, str]  # key -> surface
    by_heading: dict[str, list[str]]  # heading key -> sentence keys, most shared first
    headings: set[str]

    @classmethod
    def build(cls, texts: Iterable[str], matcher: Matcher, floor: int) -> Boilerplate:
        sdf: Counter[str] = Counter()
        hdf: Counter[str] = Counter()
        surface: dict[str, str] = {}
        under: dict[str, Counter[str]] = {}
        for text in texts:
            pairs = _sections(text)
            sdf.update({sentence_key(b) for _, b in pairs})
            hdf.update({sentence_key(h) for h, _ in pairs if h})
            for h, b in pairs:
                k = sentence_key(b)
                surface.setdefault(k, b)
                under.setdefault(k, Counter())[sentence_key(h) if h else ""] += 1
        common = {k for k, n in sdf.items() if n >= floor and len(_WORD.findall(k)) >= MIN_WORDS
                  and _STATEMENT.search(k) and BLANK not in k and not _MASK.search(surface[k])
                  and not _content_section(under[k]) and not matcher.spans(surface[k])}
        headings = {k for k, n in hdf.items() if n >= floor and not matcher.spans(k)}
        by_heading: dict[str, list[str]] = {}
        for k in sorted(common, key=lambda x: (-sdf[x], x)):
            h = under[k].most_common(1)[0][0]
            by_heading.setdefault(h if h in headings else "", []).append(k)
        return cls(floor, {k: surface[k] for k in common}, by_heading, headings)

    def is_common(self, sentence: str) -> bool:
        return sentence_key(sentence) in self.sentences

    def heading_ok(self, heading: str | None) -> bool:
        return heading is not None and sentence_key(heading) in self.headings

    def pick(self, heading: str | None, rng: random.Random, used: set[str]) -> str | None:
        """A shared sentence usually found under this heading, not yet used (None when there is none left)."""
        if not self.heading_ok(heading):
            return None
        assert heading is not None
        free = [k for k in self.by_heading.get(sentence_key(heading), [])[:40] if k not in used]
        if not free:
            return None
        k = rng.choice(free)
        used.add(k)
        return self.sentences[k]


def style_sentences(text: str, matcher: Matcher, boilerplate: Boilerplate | None = None) -> list[StyleSentence]:
    """The sentences of ``text`` with their headings. A scaffold sentence names no concept and holds no blank or
    mask -- and, with ``boilerplate``, is shared by enough documents; headings are kept only when shared too."""
    out: list[StyleSentence] = []
    for heading, body in _sections(text):
        if boilerplate is not None and not boilerplate.heading_ok(heading):
            heading = None
        scaffold = (bool(body) and BLANK not in body and not _MASK.search(body) and not matcher.spans(body)
                    and (boilerplate is None or boilerplate.is_common(body)))
        out.append(StyleSentence(heading, body, scaffold))
    return out
