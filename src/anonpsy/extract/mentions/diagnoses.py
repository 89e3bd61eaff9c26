"""Diagnosis mentions: DSM-5-TR names, aliases and abbreviations from ``rules/dsm``; never a rating scale's name.

A rule's ``list_aliases`` ("psychosis", "catatonia") name it only as an entry of a diagnosis list or in the
assessment; elsewhere those words are symptoms. A diagnosis named "due to / secondary to (a general) medical
condition", or after an illness ("AIDS-induced psychosis"), is its chapter's rule marked
``due_to_medical_condition``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from anonpsy.caseless import Caseless
from anonpsy.rules import dsm as dsm_rules


@lru_cache(maxsize=2)
def _dx_matcher(listed: bool = False) -> tuple[Caseless, dict[str, str]]:
    names: dict[str, str] = {}
    for rule in dsm_rules.load_dsm().values():
        for alias in [*_name_forms(rule.name), *rule.aliases, *(rule.list_aliases if listed else ())]:
            key = _dx_key(alias)
            if len(key) < 3 and not alias.isupper():
                continue
            for form in eponym_forms(key):
                for split in prefix_forms(form):
                    names.setdefault(split, rule.id)
    # Spaces, hyphens and slashes in a name match any run of them ("methamphetamine-induced", line wraps). The
    # alternation is a character trie so the engine tests each position against shared prefixes once.
    pattern = Caseless(re.compile(r"(?<![\w-])(" + _trie_regex(names) + r")(?![\w-])", re.I))
    return pattern, names


@lru_cache(maxsize=1)
def _short_names() -> frozenset[str]:
    """Short DSM-5-TR names that are words, not abbreviations ("Pica"): they count in any case."""
    return frozenset(k for r in dsm_rules.load_dsm().values() for n in _name_forms(r.name)
                     if len(k := _dx_key(n)) <= 5 and " " not in k)


_NAME_PARENTHETICAL = re.compile(r"\s*\(([^()]+)\)\s*")


def _name_forms(name: str) -> tuple[str, ...]:
    """A DSM-5-TR name and the names it holds when it gives one in parentheses: "Trichotillomania (Hair-Pulling
    Disorder)", "Excoriation (Skin-Picking) Disorder", "Premature (Early) Ejaculation" are written in notes with
    either name alone.

    >>> _name_forms("Excoriation (Skin-Picking) Disorder")
    ('Excoriation (Skin-Picking) Disorder', 'Excoriation Disorder', 'Skin-Picking Disorder')
    >>> _name_forms("Trichotillomania (Hair-Pulling Disorder)")
    ('Trichotillomania (Hair-Pulling Disorder)', 'Trichotillomania', 'Hair-Pulling Disorder')
    """
    m = _NAME_PARENTHETICAL.search(name)
    if m is None:
        return (name,)
    head, inner, tail = name[:m.start()], re.sub(r"^or\s+", "", m.group(1)), name[m.end():]
    without = f"{head} {tail}".strip()
    if inner.lower().endswith("specifier"):  # "(Catatonia Specifier)": what the name is used as, not a name
        return (name, without)
    if not tail.strip():  # the parenthesis is a whole second name
        return (name, without, inner)
    words = head.split()
    return (name, without, " ".join([*words[:-1], inner, tail]).strip())


@lru_cache(maxsize=1)
def _excludes_matcher() -> tuple[Caseless, dict[str, str]] | None:
    """The rules' ``excludes``: look-alike phrases ("bipolar cautery", "respiratory depression") that hold a name
    or alias of a diagnosis without naming it; key -> the rule they block."""
    from anonpsy.lexicon import expand_phrase

    blocks: dict[str, str] = {}
    for rule in dsm_rules.load_dsm().values():
        for phrase in rule.excludes:
            for form in expand_phrase(phrase):
                key = _dx_key(form)
                if key:
                    blocks.setdefault(key, rule.id)
    if not blocks:
        return None
    return Caseless(re.compile(r"(?<![\w-])(" + _trie_regex(blocks) + r")(?![\w-])", re.I)), blocks


@lru_cache(maxsize=2)
def _dx_first_words(listed: bool) -> frozenset[str] | None:
    """The first words of the name trie (see :func:`anonpsy.lexicon.first_words`): a sentence holding none of them
    names no diagnosis and is not searched."""
    from anonpsy import lexicon

    return lexicon.first_words(_dx_matcher(listed)[1])


@lru_cache(maxsize=1)
def _excludes_first_words() -> frozenset[str] | None:
    from anonpsy import lexicon

    matcher = _excludes_matcher()
    return None if matcher is None else lexicon.first_words(matcher[1])


def _may_name(text: str, first_words: frozenset[str] | None) -> bool:
    from anonpsy import lexicon

    return lexicon.may_open_with(text, first_words)


def _excluded_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, rule id) of every look-alike phrase in ``text`` (see :func:`_excludes_matcher`)."""
    matcher = _excludes_matcher()
    if matcher is None or not _may_name(text, _excludes_first_words()):
        return []
    pattern, blocks = matcher
    out = []
    for m in pattern.finditer(text):
        rule_id = blocks.get(_dx_key(m.group(1)))
        if rule_id is not None:
            out.append((m.start(1), m.end(1), rule_id))
    return out


#: An eponym's possessive in a diagnosis name ("Asperger's disorder", "Tourette's syndrome").
_EPONYM_POSSESSIVE = re.compile(r"(?<=[a-z])['’]s(?= )")


def eponym_forms(key: str) -> tuple[str, ...]:
    """A name and, when it holds an eponym's possessive, the forms written without it: current usage drops the
    possessive ("Asperger disorder", "Tourette syndrome", "Alzheimer disease"), and it is often typed without the
    apostrophe ("Aspergers disorder").

    >>> eponym_forms("asperger's disorder")
    ("asperger's disorder", 'asperger disorder', 'aspergers disorder', 'asperger’s disorder')
    >>> eponym_forms("major depressive disorder")
    ('major depressive disorder',)
    """
    if not _EPONYM_POSSESSIVE.search(key):
        return (key,)
    forms = (key, _EPONYM_POSSESSIVE.sub("", key), _EPONYM_POSSESSIVE.sub("s", key),
             _EPONYM_POSSESSIVE.sub("’s", key))
    return tuple(dict.fromkeys(forms))


#: Bound prefixes a note may write off with a hyphen or a space ("Bi-polar", "schizo-affective", "post traumatic",
#: "anti-social", "poly-substance"): the word stays the same word.
_SPLIT_PREFIXES = ("bi", "schizo", "post", "anti", "hypo", "hyper", "poly")
_PREFIXED = re.compile(r"\b(" + "|".join(_SPLIT_PREFIXES) + r")(?=[a-z]{4,}\b)")


def prefix_forms(key: str) -> tuple[str, ...]:
    """A name and, when one of its words opens with a bound prefix, the form with the prefix written off: a name
    word matches any run of spaces and hyphens between words, so "bi polar" also reads "Bi-polar".

    >>> prefix_forms("bipolar affective disorder")
    ('bipolar affective disorder', 'bi polar affective disorder')
    >>> prefix_forms("major depressive disorder")
    ('major depressive disorder',)
    """
    split = _PREFIXED.sub(r"\1 ", key)
    return (key,) if split == key else (key, split)


def _trie_regex(strings: Iterable[str]) -> str:
    """A regex matching exactly ``strings`` (longest first at each branch), built as a character trie."""
    trie: dict[str, Any] = {}
    for text in strings:
        node = trie
        for ch in text:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        ends = "" in node
        alts = [(_WORD_SEP if ch == " " else re.escape(ch)) + build(node[ch]) for ch in sorted(node) if ch]
        if not alts:
            return ""
        if len(alts) == 1 and not ends:
            return alts[0]
        return "(?:" + "|".join(alts) + ")" + ("?" if ends else "")

    return build(trie)


#: Between the words of a name: spaces, hyphens, slashes, or a comma ("Depressive disorder, not otherwise
#: specified", "chronic inhalant, paint, abuse").
_WORD_SEP = r"(?:\s*,\s*|[\s/-]+)"


def _dx_key(s: str) -> str:
    return " ".join(re.sub(r"[\s/,-]+", " ", s.strip().lower()).split())


#: A diagnosis or symptom word that names an instrument ("Geriatric Depression Scale", "PHQ depression module").
_INSTRUMENT_AFTER = re.compile(r"^[\s-]*(?:[A-Z][\w'-]*\s+){0,2}(?i:scales?|inventory|questionnaire|checklist|rating|"
                               r"index|subscales?|screen(?:er|ing)?|measure|module|interview|schedule|severity|score|"
                               r"test|assessment tool)\b")
_INSTRUMENT_BEFORE = re.compile(r"\b(?:Yale-Brown|Hamilton|Beck|Geriatric|Children's|Edinburgh|Montgomery|Zung|"
                                r"Hospital|Patient Health|Young)\s+(?:[A-Z][\w'-]*\s+)?$")


def is_instrument_name(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` part of the name of a rating scale or test?

    >>> s = "Geriatric Depression Scale-15: 3."
    >>> is_instrument_name(s, 10, 20)
    True
    """
    before = text[max(0, start - 40):start]
    return bool(_INSTRUMENT_AFTER.match(text[end:end + 40]) or _INSTRUMENT_BEFORE.search(before))


#: "Posttraumatic stress scales are not elevated": testing that does not support the diagnosis the scale is named
#: for, which the context rules then judge (``neg.excluded_backward``).
_SCALE_NOT_ELEVATED = re.compile(r"^\s*(?:sub)?scales?\s+(?:is|are|was|were)\s+not\s+elevated\b", re.I)


#: A rating scale's band after its score, "PHQ-9 2 (minimal depression)": the score's reading, not a diagnosis.
_SCORE_BAND_BEFORE = re.compile(r"\d\s*(?:/\s*\d+\s*)?[(,:;-]\s*(?:minimal|mild|moderate|moderately severe|severe|"
                                r"no|subclinical|borderline)\s+$", re.I)


@lru_cache(maxsize=1)
def _abbreviation_senses() -> dict[tuple[str, str], tuple[re.Pattern[str] | None, bool]]:
    """(abbreviation, rule id) -> (the cues of its other meanings as one pattern, whether it is an English word
    in capitals), from the rules' ``abbreviation_senses``."""
    cues: dict[tuple[str, str], list[str]] = {}
    caps: dict[tuple[str, str], bool] = {}
    for rule in dsm_rules.load_dsm().values():
        for sense in rule.abbreviation_senses:
            k = (sense.abbreviation, rule.id)
            cues.setdefault(k, []).extend(
                re.escape(c[:-1]) + r"\w*" if c.endswith("*") else re.escape(c) for c in sense.cues)
            caps[k] = caps.get(k, False) or sense.in_capitals
    return {k: (re.compile(r"(?<![\w-])(?:" + "|".join(v) + r")(?![\w-])", re.I) if v else None, caps[k])
            for k, v in cues.items()}


def prepare_tables() -> None:
    """Build the tables read only on some notes (the cues of an abbreviation's other senses are first needed on
    the first diagnosis abbreviation in capitals), so that a long-running process builds them once, up front."""
    _abbreviation_senses()
    _dx_first_words(False)
    _dx_first_words(True)
    _excludes_first_words()


def _shouting(text: str) -> bool:
    """Is the text written in capitals (most of its letters, and enough of them to tell)?"""
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 12 and sum(c.isupper() for c in letters) / len(letters) > 0.6


def _other_sense(text: str, start: int, end: int, rule_id: str) -> bool:
    """Does the sentence show that the abbreviation ``text[start:end]`` means something else: "secundum ASD with
    a left-to-right shunt" (atrial septal defect), "asthma/RAD" (reactive airway disease), "OUT OF BED" in a
    sentence typed in capitals (the rest of it; a list entry "1. ADD." stays the diagnosis)?

    >>> _other_sense("Echo showed a secundum ASD.", 23, 26, "autism_spectrum_disorder")
    True
    >>> _other_sense("Diagnosis: ASD, level 1.", 11, 14, "autism_spectrum_disorder")
    False
    """
    found = _abbreviation_senses().get((text[start:end], rule_id))
    if found is None:
        return False
    cues, in_capitals = found
    rest = text[:start] + " " + text[end:]
    return bool(cues is not None and cues.search(rest)) or (in_capitals and _shouting(rest))


def _blank_parentheticals(text: str) -> str:
    """Short parenthetical remarks replaced by spaces (offsets kept): "Stimulant (methamphetamine) use disorder"."""
    return re.sub(r"\((?:[^()]{1,30})\)", lambda m: " " * len(m.group(0)), text)


#: "... due to / secondary to (the underlying) (general) medical condition" after a diagnosis name.
_DUE_TO_MEDICAL = re.compile(r"^\s*,?\s*(?:resulting\s+)?(?:due to|secondary to|caused by|related to|resulting from|"
                             r"from)\s+(?:a|an|the|another|his|her|their)?\s*(?:underlying\s+)?(?:general\s+)?"
                             r"medical (?:condition|illness|problems?)\b", re.I)
#: An illness written before a diagnosis name: "AIDS-induced psychosis", "HIV-related cognitive disorder".
_MEDICAL_PREFIX = re.compile(r"\b(?:AIDS|HIV|stroke|tumou?r|cancer|thyroid|hepatic|liver|renal|lupus|cerebral|"
                             r"epilepsy|head injury|TBI|medical|organic)[\s-]+(?:induced|related|associated)\s*$", re.I)


#: The indication of an as-needed dose or of a drug's dose written before a bare symptom word of a list alias:
#: "lorazepam 0.5 mg q.6h. p.r.n. anxiety and agitation", "Xanax 0.25 mg for anxiety". The word names what the
#: drug is given for, not a diagnosis.
_INDICATION_BEFORE = re.compile(
    r"(?:\bp\.?\s?r\.?\s?n\.?|\bas needed|\bwhen needed|\bif needed|"
    r"\b(?:mg|mcg|g|ml|units?|tabs?|tablets?|daily|nightly|b\.?i\.?d\.?|t\.?i\.?d\.?|q\.?i\.?d\.?|q\.?h\.?s\.?|"
    r"q\.?\s?\d+(?:-\d+)?\s?h(?:ours?|rs?)?\.?|at bedtime)\s*,?\s*for)"
    r"\s*,?\s*(?:(?:for|of)\s+)?(?:[a-z]+\s*(?:,|and|or|/)\s*){0,2}$",
    re.I,
)


#: A list alias after "with" that follows an episode, a severity or a diagnosis is that diagnosis's specifier:
#: "BAD, manic with psychosis", "MDD, recurrent, severe with psychosis", "bipolar disorder with catatonia" name one
#: diagnosis, not a second psychotic or catatonic disorder.
_SPECIFIER_BEFORE = re.compile(
    r"\b(?:manic|mania|hypomanic|depressed|depression|depressive|mixed|episode|disorder|type|severe|moderate|mild|"
    r"recurrent|single|intoxication|withdrawal|[A-Z]{2,5})\s*,?\s+with\s+(?:(?:acute|prominent|severe|mood[\s-]"
    r"(?:congruent|incongruent))\s+)?$")
#: Between a diagnosis and its specifier: "Schizophrenia, paranoid type, with acute psychosis".
_SPECIFIER_GAP = re.compile(r"^(?:[\s,]+[\w-]+){0,4}?[\s,]+with\s+(?:(?:acute|prominent|severe|mood[\s-]"
                            r"(?:congruent|incongruent))\s+)?$", re.I)


@lru_cache(maxsize=2)
def _list_alias_keys() -> frozenset[str]:
    """Keys of the list aliases ("anxiety", "psychosis") that are no name or alias of any rule."""
    named = {_dx_key(a) for r in dsm_rules.load_dsm().values() for a in (r.name, *r.aliases)}
    return frozenset(_dx_key(a) for r in dsm_rules.load_dsm().values() for a in r.list_aliases) - named


@lru_cache(maxsize=1)
def _due_to_medical_rules() -> dict[str, str]:
    """Chapter -> the rule of that chapter marked ``due_to_medical_condition``."""
    return {r.chapter: r.id for r in dsm_rules.load_dsm().values() if r.due_to_medical_condition}


def find_diagnoses(text: str, section: str | None = None) -> list[tuple[int, int, str]]:
    """DSM diagnoses named in ``text``: (start, end, rule id). Short all-caps abbreviations (MDD, GAD) must be in
    capitals; names of rating scales ("Geriatric Depression Scale") do not count. In a diagnosis list or the
    assessment (``section``), list aliases count too.

    >>> find_diagnoses("Stimulant (methamphetamine) use disorder, severe.")
    [(0, 40, 'stimulant_use_disorder')]
    >>> find_diagnoses("Rule out depression secondary to general medical condition.")
    [(9, 58, 'depressive_disorder_due_to_another_medical_condition')]
    >>> find_diagnoses("lorazepam 0.5 mg q.6h. p.r.n. anxiety and agitation", "assessment")
    []
    >>> [r for _s, _e, r in find_diagnoses("She has a history of abusing opiates and benzodiazepines.")]
    ['opioid_use_disorder', 'sedative_hypnotic_anxiolytic_use_disorder']
    """
    from anonpsy.extract.sections import deciding_sections

    return list(_find_diagnoses(text, section in deciding_sections()))


@lru_cache(maxsize=4096)
def _find_diagnoses(text: str, listed: bool) -> tuple[tuple[int, int, str], ...]:
    # every read of a text asks again about the sentences it shares with another (a round-trip probe's lead)
    pattern, names = _dx_matcher(listed)
    out: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    blocked = _excluded_spans(text)
    # blanking a parenthesis makes no new word, so the words of the text are those of both sources
    sources = () if not _may_name(text, _dx_first_words(listed)) else (
        (text, _blank_parentheticals(text)) if "(" in text else (text,))
    for source in sources:
        for m in pattern.finditer(source):
            surface = m.group(1)
            key = _dx_key(surface)
            if key not in names:
                continue
            if len(key) <= 5 and not surface.isupper() and " " not in key and key not in _short_names():
                continue
            if surface.isupper() and _other_sense(text, m.start(1), m.end(1), names[key]):
                continue
            if is_instrument_name(text, m.start(1), m.end(1)) and not _SCALE_NOT_ELEVATED.match(
                    text[m.end(1):m.end(1) + 60]):
                continue
            if _SCORE_BAND_BEFORE.search(text[max(0, m.start(1) - 40):m.start(1)]):
                continue
            if key in _list_alias_keys() and _INDICATION_BEFORE.search(text[max(0, m.start(1) - 60):m.start(1)]):
                continue
            if key in _list_alias_keys() and (
                    _SPECIFIER_BEFORE.search(text[max(0, m.start(1) - 60):m.start(1)])
                    or any(0 <= m.start(1) - e <= 60 and _SPECIFIER_GAP.match(text[e:m.start(1)])
                           for _s, e, _r in out)):
                continue
            if any(a < m.end(1) and m.start(1) < b for a, b in seen):
                continue
            if any(a <= m.start(1) and m.end(1) <= b and names[key] == r for a, b, r in blocked):
                continue
            seen.add((m.start(1), m.end(1)))
            out.append(_due_to_medical(text, m.start(1), m.end(1), names[key]))
    for start, end, rule_id in _abused_substances(text):
        # a substance written before a generic name ("cocaine drug abuse") is the use disorder of that substance
        generic = [x for x in out if x[2] == GENERIC_USE_DISORDER and start < x[0] and x[1] == end]
        for x in generic:
            out.remove(x)
            seen.discard((x[0], x[1]))
        if not any(a < end and start < b for a, b in seen):
            seen.add((start, end))
            out.append((start, end, rule_id))
    return tuple(sorted(out))


#: The use disorder of no one substance ("drug abuse", "substance dependence").
GENERIC_USE_DISORDER = "other_substance_use_disorder"
#: DSM-5-TR's specifiers of the particular substance of a use disorder, by rule, each with the words that name
#: it: "stimulant use disorder" is recorded with the stimulant ("cocaine", "amphetamine-type substance", which
#: takes in methylphenidate).
_SUBSTANCE_SPECIFIERS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "stimulant_use_disorder": (
        (re.compile(r"\b(?:cocaine|crack)\b", re.I), "cocaine"),
        (re.compile(r"\b(?:(?:meth|dextro|lisdex)?amphetamines?|lisdexamfetamine|meth|crystal meth|"
                    r"amphetamine-type(?: substances?)?|(?:dex)?methylphenidate|adderall|dexedrine|vyvanse|ritalin|"
                    r"concerta|focalin)\b", re.I), "amphetamine-type substance"),
    ),
}
#: A parenthesis written just after a diagnosis's name ("stimulant use disorder (cocaine)").
_PARENTHESIS_AFTER = re.compile(r"^\s*\(([^()]{1,40})\)")


def substance_specifiers(rule_id: str, text: str, start: int, end: int) -> tuple[str, ...]:
    """The particular substance a use disorder mention ``text[start:end]`` names, as DSM-5-TR specifies it
    ("chronic cocaine abuse" -> ("cocaine",)); the name or a parenthesis just after it says which, never another
    word of the sentence. Empty for a rule without such specifiers or a name of no one substance.

    >>> substance_specifiers("stimulant_use_disorder", "History of methamphetamine dependence.", 11, 38)
    ('amphetamine-type substance',)
    >>> substance_specifiers("stimulant_use_disorder", "Stimulant use disorder (cocaine), severe.", 0, 22)
    ('cocaine',)
    >>> substance_specifiers("stimulant_use_disorder", "Stimulant use disorder; cocaine in the screen.", 0, 22)
    ()
    """
    table = _SUBSTANCE_SPECIFIERS.get(rule_id)
    if not table:
        return ()
    span = text[start:end]
    paren = _PARENTHESIS_AFTER.match(text[end:end + 50])
    if paren is not None:
        span = f"{span} {paren.group(1)}"
    return tuple(name for rx, name in table if rx.search(span))


#: A verb or noun of problem use before the substances it governs: "a history of abusing opiates,
#: benzodiazepines, and Vicodin", "addicted to pain pills", "dependence on alcohol". DSM-5-TR folds the former
#: abuse and dependence into the substance's use disorder ("opioid abuse" is already its alias). Misuse or
#: overuse of prescribed drugs ("delirium secondary to misuse of prescribed opiates") is an event, not by itself a
#: use disorder.
_ABUSE_CUE = re.compile(r"\b(?:abus(?:e|es|ed|ing)|addict(?:ed|ion)|dependen(?:t|ce|cy))\s+"
                        r"(?:of\s+|to\s+|on\s+|upon\s+)?", re.I)
#: Where the governed list ends: a clause or sentence boundary.
_LIST_END = re.compile(r"[.;:()]|\b(?:but|which|who|that|since|because|when|while|with|in|for|at)\b", re.I)
#: Class words of a list of abused substances that no lexicon names as a drug or a use.
_CLASS_WORDS = {"benzodiazepine": "sedative use disorder", "benzo": "sedative use disorder",
                "barbiturate": "sedative use disorder", "sedative": "sedative use disorder",
                "sleeping pill": "sedative use disorder", "pain pill": "opioid use disorder",
                "painkiller": "opioid use disorder", "pain medication": "opioid use disorder"}
_CLASS_WORD_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _CLASS_WORDS), key=len, reverse=True))
                            + r")s?\b", re.I)
#: Drug classes whose misuse is a use disorder, by the use disorder's name.
_DRUG_CLASS_DISORDER = {"benzodiazepine": "sedative use disorder", "z_drug_hypnotic": "sedative use disorder",
                        "opioid_analgesic": "opioid use disorder", "opioid_agonist_therapy": "opioid use disorder",
                        "stimulant": "stimulant use disorder"}


#: The DSM-IV problem-use noun after a substance: "heroin abuse", "Xanax dependence", "crack addiction", "cocaine
#: drug abuse" (the substance names which drug).
_ABUSE_AFTER = re.compile(r"^[\s-]*(?:(?:drug|substance)\s+)?(?:abuse|dependence|dependency|addiction)\b", re.I)
_ABUSE_NOUN = re.compile(r"\b(?:abuse|dependence|dependency|addiction)\b", re.I)
#: The two cues searched in every sentence (most name neither): lower-cased, only where one of their words is.
_ABUSE_NOUN_SEARCH = Caseless(_ABUSE_NOUN)
_ABUSE_CUE_SEARCH = Caseless(_ABUSE_CUE)


def _substance_then_abuse(text: str) -> list[tuple[int, int, str]]:
    """Use disorders named by a substance and the DSM-IV noun of problem use after it ("a long history of
    heroin abuse", "Xanax dependence", "methamphetamine abuse"): DSM-5-TR folds abuse and dependence into the
    substance's use disorder, as the aliases "opioid abuse" and "cocaine dependence" already say. A use of the
    symptom lexicon or a drug of an abusable class; "sexual abuse" or "laxative abuse" name no use disorder."""
    from anonpsy import lexicon

    _pattern, names = _dx_matcher(False)
    meds = lexicon.medication_by_id()
    out: list[tuple[int, int, str]] = []
    hits: list[tuple[int, int, list[str]]] = [
        (m.start, m.end, [f"{m.headword} disorder"]) for m in lexicon.find_terms(text, "symptom")]
    for m in lexicon.find_terms(text, "medication"):
        entry = meds.get(m.id)
        if entry is not None and entry.class_id in _DRUG_CLASS_DISORDER:
            hits.append((m.start, m.end, [_DRUG_CLASS_DISORDER[entry.class_id]]))
    for start, end, candidates in hits:
        after = _ABUSE_AFTER.match(text[end:end + 20])
        if after is None and not _ABUSE_NOUN.search(text[start:end].split()[-1]):
            continue
        rule_id = next((names[_dx_key(c)] for c in candidates if _dx_key(c) in names), None)
        if rule_id is not None and rule_id.endswith("use_disorder"):
            out.append((start, end + (after.end() if after is not None else 0), rule_id))
    return out


def _abused_substances(text: str) -> list[tuple[int, int, str]]:
    """Use disorders named by the substances after a problem-use cue: each substance (a use of the symptom
    lexicon, a drug of an abusable class, or a class word) of the list the cue governs, as "<use> disorder"
    or "<substance> abuse" when that names a DSM rule; and by a substance before the noun of problem use
    (:func:`_substance_then_abuse`)."""
    from anonpsy import lexicon

    if _ABUSE_NOUN_SEARCH.search(text) is None and _ABUSE_CUE_SEARCH.search(text) is None:
        return []
    _pattern, names = _dx_matcher(False)
    out: list[tuple[int, int, str]] = _substance_then_abuse(text) if _ABUSE_NOUN_SEARCH.search(text) else []
    for cue in _ABUSE_CUE_SEARCH.finditer(text):
        window = text[cue.end():cue.end() + 90]
        stop = _LIST_END.search(window)
        window = window[:stop.start()] if stop else window
        base = cue.end()
        hits: list[tuple[int, int, list[str]]] = []
        for m in lexicon.find_terms(window, "symptom"):
            head = m.headword
            hits.append((m.start, m.end, [f"{head} disorder", head.replace("misuse", "abuse")]))
        meds = lexicon.medication_by_id()
        for m in lexicon.find_terms(window, "medication"):
            entry = meds.get(m.id)
            if entry is not None and entry.class_id in _DRUG_CLASS_DISORDER:
                hits.append((m.start, m.end, [_DRUG_CLASS_DISORDER[entry.class_id]]))
        for w in _CLASS_WORD_RE.finditer(window):
            hits.append((w.start(), w.end(), [_CLASS_WORDS[w.group(1).lower()]]))
        for start, end, candidates in hits:
            rule_id = next((names[_dx_key(c)] for c in candidates if _dx_key(c) in names), None)
            if rule_id is not None and rule_id.endswith("use_disorder"):
                out.append((base + start, base + end, rule_id))
    return out


def _due_to_medical(text: str, start: int, end: int, rule_id: str) -> tuple[int, int, str]:
    """The mention as its chapter's disorder due to another medical condition when the text says so."""
    rule = dsm_rules.rules_by_id()[rule_id]
    target = _due_to_medical_rules().get(rule.chapter)
    if rule.due_to_medical_condition or any("due to another medical condition" in a for a in rule.aliases):
        target = rule_id  # the rule names its own medical cause ("delirium due to another medical condition")
    if target is None:
        return start, end, rule_id
    after = _DUE_TO_MEDICAL.match(text[end:end + 90])
    if after is not None:
        return start, end + after.end(), target
    if target == rule_id:
        return start, end, rule_id
    before = _MEDICAL_PREFIX.search(text[max(0, start - 40):start])
    if before is not None:
        return start - (len(text[max(0, start - 40):start]) - before.start()), end, target
    return start, end, rule_id
