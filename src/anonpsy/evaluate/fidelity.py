"""Independent clinical-fidelity scoring of a text against the ``facts.v1`` annotation of its source note.

The scorer judges an output (or the original note itself) sentence by sentence. It uses no part of the
project's extractor: its own sentence splitter (:mod:`~anonpsy.evaluate.sentences`), its own cue lexicon
(:mod:`~anonpsy.evaluate.cues`), and only *data* shared with the rest of the project -- diagnosis names and
aliases (``rules/dsm/``, ``rules/canonical/`` through :mod:`~anonpsy.evaluate.canonical`) and drug brand/generic
names (``rules/lexicon/medications.yaml``).

Per text it reports:

* **affirmed-diagnosis recall** -- the share of the note's ``affirmed`` diagnoses still named (by the label,
  any annotated mention, a DSM alias or canonical synonym of the same diagnosis, or -- when either side is a
  generic name such as "depression" or "unspecified depressive disorder" -- a name from the same DSM chapter) in
  a sentence that asserts it for the patient (no negation, uncertainty, hypothetical, remission or family cue;
  "history of X" counts, X being still active unless the note says otherwise);
* **current-medication recall** -- the share of ``current`` medications named (generic, brand or alias of the
  same lexicon drug, or an annotated mention) in a sentence that presents it as taken now (no past, planned,
  negation, hypothetical or family cue);
* **contradictions** by kind, each with the fact it contradicts and the indices of the sentences that show it:

  ======================  ==================================================================================
  kind                    a sentence ...
  ======================  ==================================================================================
  ``ruled_out_asserted``  asserts for the patient (now or in the past) a diagnosis annotated ``ruled_out``
  ``possible_asserted``   asserts, without uncertainty, a diagnosis annotated ``possible``
  ``family_as_patient``   attributes to the patient (even as possible) a diagnosis annotated only ``family``
  ``invented_diagnosis``  names as the patient's a DSM/psychiatric diagnosis the annotation does not list at
                          all (not even from the same DSM chapter)
  ``past_med_as_current`` presents as current a medication annotated ``past``
  ``planned_med_as_taken``  presents as current a medication annotated ``planned``
  ``refused_med_as_taken``  presents as current a medication annotated ``refused``
  ``denied_as_present``   presents as present a symptom annotated ``denied`` (for a lifetime denial such as
                          "prior psychiatric hospitalization", also as past)
  ``invented_symptom``    asserts for the patient a clinically loaded symptom (a delusion, hallucinations,
                          compulsions, suicidal ideation, tardive dyskinesia, ...) that the source note does not
                          mention at all, not even as a synonym or under negation (:mod:`~anonpsy.evaluate.support`;
                          needs no annotation; an original scored alone is its own source, so it shows none)
  ======================  ==================================================================================

A diagnosis mention is matched to the annotation in tiers: same surface or same canonical diagnosis first;
then, when one side is generic, the same DSM chapter; then (contradictions only) any diagnosis of the same
chapter. The first tier that matches decides which statuses the mention is compared with; a mention that
matches an ``affirmed`` or ``past`` diagnosis contradicts nothing.

Scoring the original note gives the scorer's **noise floor**: contradictions the original text itself shows
to this judge (ambiguous sentences, referral questions, annotation choices). :func:`excess` keeps the
contradictions of an output that the original does not show for the same fact. Results carry fact labels,
kinds and sentence indices only, never text from the note.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from anonpsy.evaluate.cues import ConceptType, CueHit, classify, cue_hits
from anonpsy.evaluate.facts import DiagnosisFact, FactsNote, MedicationFact
from anonpsy.evaluate.sentences import Sentence, split_sentences
from anonpsy.evaluate.support import SourceSupport, loaded_mentions
from anonpsy.evaluate.verbatim import CopyStats, copied_runs

SCORER_VERSION = 2  # 2: the invented_symptom kind (anonpsy.evaluate.support)

CONTRADICTION_KINDS: tuple[str, ...] = (
    "ruled_out_asserted", "possible_asserted", "family_as_patient", "invented_diagnosis",
    "past_med_as_current", "planned_med_as_taken", "refused_med_as_taken", "denied_as_present", "invented_symptom",
)
KIND_LABELS: dict[str, str] = {
    "ruled_out_asserted": "ruled-out dx asserted",
    "possible_asserted": "possible dx asserted",
    "family_as_patient": "family dx as patient's",
    "invented_diagnosis": "invented dx",
    "past_med_as_current": "past med as current",
    "planned_med_as_taken": "planned med as taken",
    "refused_med_as_taken": "refused med as taken",
    "denied_as_present": "denied symptom as present",
    "invented_symptom": "unsupported symptom",
}
# Diagnosis statuses of a mention that attribute the diagnosis to the patient.
_PATIENT_ASSERTED = frozenset({"affirmed", "past", "resolved"})
_PATIENT_ANY = frozenset({"affirmed", "past", "resolved", "possible"})

# ------------------------------------------------------------------------------------------------------------
# Diagnosis vocabulary

# Generic names: a mention or label of one of these names any diagnosis of its chapter(s).
GENERIC_DX: frozenset[str] = frozenset({
    "depression", "depressive disorder", "depressive illness", "depressed", "bipolar", "bipolar disorder",
    "bipolar affective disorder", "bipolar illness", "bipolar spectrum disorder", "bipolar and related disorder",
    "mood disorder", "affective disorder", "psychosis", "psychotic disorder", "anxiety", "anxiety disorder",
    "substance abuse", "substance use disorder", "substance dependence", "drug abuse", "polysubstance abuse",
    "polysubstance use disorder", "personality disorder", "dementia", "cognitive disorder",
    "neurocognitive disorder", "eating disorder", "learning disability", "learning disorder",
    "adjustment disorder", "sleep disorder", "alcohol abuse", "alcoholism", "mental illness",
})
# Names that are symptoms as often as diagnoses: they can name an annotated diagnosis, but naming one that
# the annotation lacks is not counted as an invented diagnosis.
SYMPTOM_LIKE_DX: frozenset[str] = frozenset({
    "depression", "depressed", "anxiety", "anxious", "insomnia", "mania", "manic", "hypomania", "psychosis",
    "psychotic", "paranoia", "panic", "panic attack", "panic attacks", "catatonia", "catatonic", "delusions",
    "hallucinations", "intoxication", "withdrawal", "agitation", "irritability", "phobia", "dementia",
    "acute confusion", "drunkenness", "impotence", "soiling", "bulimia", "anorexia", "autism", "hysteria",
    "chronic anxiety", "social anxiety", "separation anxiety", "developmental delay", "secondary anxiety",
    "secondary depression", "situational depression", "chronic depression", "alcohol use", "cannabis use",
})
# English words that are also diagnosis abbreviations: never matched in all-capital sentences.
_AMBIGUOUS_ABBREVIATIONS = frozenset({"ADD", "BED", "DID", "RAD", "ODD", "AWS", "MCI", "AUD", "CUD", "OUD", "BN"})
_DIAGNOSTIC_HEAD = re.compile(
    r"\b(?:disorders?|syndrome|schizophrenia|dementia|delirium|nervosa|phobia|abuse|dependence|addiction|"
    r"dysthymia|cyclothymia|autism|aspergers?|alcoholism|psychosis|neurosis|personality|depression|mania|"
    r"hypochondriasis|anorexia|bulimia|insomnia|narcolepsy|encopresis|enuresis|gambling|"
    r"pyromania|kleptomania|trichotillomania|tourette|tourettes)\b"
)
# DSM chapter of a name without a DSM rule, by keyword (first match wins; "mood disorder" spans two).
_CHAPTER_KEYWORDS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(p), chapters) for p, chapters in (
        (r"\bmood disorder|\baffective disorder", ("depressive", "bipolar")),
        (r"\bpersonality\b|\bantisocial\b|\bborderline\b|\bnarcissistic|\bhistrionic|\bschizotypal|\bschizoid",
         ("personality",)),
        (r"\bschizoaffective", ("schizophrenia_spectrum",)),
        (r"\bbipolar|\bmanic|\bmania\b|\bhypomani|\bcyclothym", ("bipolar",)),
        (r"\bdepress|\bdysthym", ("depressive",)),
        (r"\bschizo|\bpsychos|\bpsychotic|\bdelusional disorder|\bcatatoni", ("schizophrenia_spectrum",)),
        (r"\bposttraumatic|\bpost traumatic|\bptsd\b|\badjustment disorder|\bacute stress", ("trauma_stressor",)),
        (r"\banxiety|\bpanic|\bphobi|\bagoraphob", ("anxiety",)),
        (r"\bobsess|\bocd\b|\bhoard|\btrichotill|\bexcoriation", ("obsessive_compulsive",)),
        (r"\battention deficit|\badhd\b|\badd\b|\bautis|\basperger|\blearning|\bintellectual|\btourette|\btic disorder",
         ("neurodevelopmental",)),
        (r"\bsubstance|\balcohol|\bdrug abuse|\bdrug dependence|\bcocaine|\bopioid|\bopiate|\bheroin|\bcannabis|"
         r"\bmarijuana|\binhalant|\bpolysubstance|\bamphetamine|\bstimulant|\bsedative|\bhypnotic|\bbenzodiazepine|"
         r"\bnicotine|\btobacco", ("substance_related",)),
        (r"\bdementia|\bdelirium|\bneurocognitive|\bcognitive disorder|\borganic brain|\balzheimer",
         ("neurocognitive",)),
        (r"\banorexi|\bbulimi|\bbinge eating|\beating disorder|\bpica\b|\bruminat", ("feeding_eating",)),
        (r"\binsomnia|\bsleep apnea|\brestless legs|\bnarcolep|\bhypersomn|\bsleep disorder|\bsleep wake",
         ("sleep_wake",)),
        (r"\bsomati|\bconversion|\billness anxiety|\bfactitious|\bpain disorder|\bhypochondri", ("somatic_symptom",)),
        (r"\boppositional|\bodd\b|\bconduct disorder|\bexplosive|\bpyromania|\bkleptomania",
         ("disruptive_impulse_conduct",)),
        (r"\bdissociat|\bdepersonali|\bderealis|\bderealiz", ("dissociative",)),
        (r"\bgender dysphoria", ("gender_dysphoria",)),
    )
)


def normalize(s: str) -> str:
    """Lower case, ``'s`` folded, every run of other characters one space (like DSM label matching)."""
    from anonpsy.rules.dsm import normalize_label

    return normalize_label(s)


@dataclass(frozen=True)
class DxTerm:
    """A diagnosis name: its normalized text, canonical key, DSM chapter(s), whether generic/inventable."""

    text: str
    key: str
    chapters: frozenset[str]
    generic: bool
    inventable: bool
    display: str


@lru_cache(maxsize=4096)
def dx_term(surface: str) -> DxTerm:
    """What the scorer knows about one diagnosis name."""
    from anonpsy.evaluate.canonical import canonicalize
    from anonpsy.rules.dsm import load_dsm

    norm = normalize(surface)
    canon = canonicalize(surface)
    chapters: set[str] = set()
    rule = load_dsm().get(canon.rule_id) if canon.rule_id else None
    if rule is not None:
        chapters.add(rule.chapter)
    else:
        for rx, chs in _CHAPTER_KEYWORDS:
            if rx.search(norm):
                chapters.update(chs)
                break
    unspecified = norm.startswith(("unspecified ", "other specified ")) or norm.endswith((" nos",
                                                                                         " not otherwise specified"))
    generic = norm in GENERIC_DX or canon.text in GENERIC_DX or unspecified or (
        rule is not None and rule.id.startswith(("unspecified_", "other_specified_")))
    is_abbrev = surface.isupper() and " " not in surface.strip()
    inventable = bool(chapters) and norm not in SYMPTOM_LIKE_DX and (
        is_abbrev or bool(_DIAGNOSTIC_HEAD.search(norm))) and not re.search(r"\buse\b(?! disorder)", norm)
    display = rule.name.lower() if rule is not None else canon.text
    return DxTerm(norm, canon.key, frozenset(chapters), generic, inventable, display)


@lru_cache(maxsize=1)
def dx_lexicon() -> tuple[str, ...]:
    """Every diagnosis surface the scorer looks for beyond a note's own mentions: DSM rule names and aliases
    (original case, so abbreviations stay case-sensitive) and canonical synonyms longer than four letters."""
    from anonpsy.evaluate.canonical import load_table
    from anonpsy.rules.dsm import load_dsm

    out: dict[str, None] = {}
    for rule in load_dsm().values():
        for s in (rule.name, *rule.aliases):
            if len(s.strip()) >= 3:
                out.setdefault(s.strip(), None)
    for syn in load_table().synonyms:
        if len(syn) > 4:
            out.setdefault(syn, None)
    return tuple(out)


# ------------------------------------------------------------------------------------------------------------
# Medication vocabulary


@lru_cache(maxsize=1)
def medication_lexicon() -> tuple[tuple[str, frozenset[str]], ...]:
    """(generic id, normalized forms) for every drug of ``rules/lexicon/medications.yaml``."""
    from anonpsy.paths import rules_dir
    from anonpsy.yamlio import load_yaml

    doc = load_yaml((rules_dir() / "lexicon" / "medications.yaml").read_text(encoding="utf-8"))
    out: list[tuple[str, frozenset[str]]] = []
    for rule in doc.get("rules", []):
        forms = {str(rule["id"]).replace("_", " "), str(rule.get("name") or "")}
        for key in ("brands", "cased_brands", "aliases", "long_acting"):
            forms.update(str(x) for x in rule.get(key) or [])
        out.append((str(rule["id"]), frozenset(normalize(f) for f in forms if f.strip())))
    return tuple(out)


def medication_forms(fact: MedicationFact) -> list[str]:
    """Surface forms naming an annotated medication: its name and mentions, and every name, brand and alias of
    the lexicon drugs they name (a combination name also names its parts' combination entry, if any)."""
    candidates = {normalize(x) for x in (fact.name, *fact.mentions)}
    if "/" in fact.name:
        candidates |= {normalize(p) for p in re.split(r"[/,+]| and ", fact.name) if p.strip()}
    heads = {normalize(fact.name).split(" ")[0]}
    forms: dict[str, None] = {x: None for x in (fact.name, *fact.mentions)}
    for drug_id, drug_forms in medication_lexicon():
        if candidates & drug_forms or normalize(drug_id.replace("_", " ")) in heads:
            for f in sorted(drug_forms):
                forms.setdefault(f, None)
    return [f for f in forms if f.strip()]


# ------------------------------------------------------------------------------------------------------------
# Symptom vocabulary (for denied items)

# Concept -> surface patterns (regular expressions over text; abbreviations are case-sensitive).
SYMPTOM_CONCEPTS: dict[str, tuple[str, ...]] = {
    "suicidal ideation": (r"suicidal (?:ideation|thoughts?|thinking|ideas?)", r"thoughts? of (?:suicide|killing "
                          r"(?:him|her|them)sel(?:f|ves)|ending (?:his|her|their) life)", "suicidality", "suicidal",
                          "(?-i:SI)", r"wish(?:es)? to die", "death wish"),
    "homicidal ideation": (r"homicidal (?:ideation|thoughts?|ideas?)", "homicidality", "homicidal", "(?-i:HI)"),
    "auditory hallucinations": (r"auditory (?:and visual )?hallucinations?", r"hear(?:s|ing) voices",
                                r"command hallucinations?", "(?-i:AH)", "(?-i:AVH)", "(?-i:A/VH)"),
    "visual hallucinations": (r"visual hallucinations?", r"(?:auditory|auditory and) visual hallucinations?",
                              r"see(?:s|ing) things", "(?-i:VH)", "(?-i:AVH)", "(?-i:A/VH)"),
    "tactile hallucinations": (r"tactile hallucinations?",),
    "hallucinations": (r"(?:auditory |visual |tactile |olfactory |command )?hallucinations?", "hallucinating",
                       r"hear(?:s|ing) voices", r"perceptual (?:disturbances?|abnormalities)", "(?-i:AVH)",
                       "(?-i:AH)", "(?-i:VH)"),
    "delusions": (r"delusions?", r"delusional (?:thinking|beliefs?|ideas?)"),
    "paranoia": ("paranoia", r"paranoid (?:ideation|thoughts?|thinking|delusions?)"),
    "psychosis": ("psychosis", r"psychotic (?:symptoms?|features|episodes?)"),
    "psychotic symptoms": ("psychosis", r"psychotic (?:symptoms?|features|episodes?)"),
    "thought disorder": (r"(?:formal )?thought disorder",),
    "alcohol use": (r"alcohol (?:use|abuse|dependence|intake|consumption)", "alcoholism", r"drinking(?! water)",
                    r"drinks (?:alcohol|beer|wine|liquor)", r"(?:heavy |daily )?drinker",
                    r"(?-i:ETOH|EtOH) (?:use|abuse)"),
    "drug use": (r"(?:illicit |recreational |street |iv |intravenous )?drug (?:use|abuse)",
                 r"illicit (?:drugs?|substances?)",
                 r"recreational drugs?", r"street drugs?", r"(?:poly)?substance (?:use|abuse)",
                 r"(?:cocaine|marijuana|cannabis|heroin|methamphetamine|opioid) (?:use|abuse)"),
    "tobacco use": (r"tobacco(?: use)?", "smoking", "smokes", r"(?<!non)(?<!non-)smoker", "cigarettes"),
    "psychiatric hospitalization": (r"psychiatric (?:hospitali[sz]ations?|admissions?|inpatient)",
                                    r"hospitali[sz]ed (?:psychiatrically|in a psychiatric)", r"inpatient psychiatric"),
    "seizures": (r"seizures?", "epilepsy", r"convulsions?"),
    "head injury": (r"head (?:injur(?:y|ies)|trauma)", r"traumatic brain injur(?:y|ies)", "(?-i:TBI)", r"concussions?"),
    "weight loss": (r"weight loss", r"lost weight"),
    "weight change": (r"weight (?:loss|gain|change)", r"(?:lost|gained) weight"),
    "extrapyramidal symptoms": (r"extrapyramidal (?:symptoms?|side effects?)", "(?-i:EPS)"),
    "tardive dyskinesia": (r"tardive dyskinesia",),
    "anxiety": (r"anxiety(?! disorder)", "anxious"),
    "anxiety symptoms": (r"anxiety(?! disorder)", "anxious"),
    "depressed mood": (r"depressed mood", r"depressive symptoms?", "depressed"),
    "depressive symptoms": (r"depressed mood", r"depressive symptoms?", "depressed"),
    "manic symptoms": (r"manic (?:symptoms?|episodes?)", "mania", "hypomania"),
    "anhedonia": ("anhedonia",),
    "grandiosity": ("grandiosity", r"grandiose (?:ideas|delusions|thinking)"),
    "psychomotor agitation": (r"psychomotor agitation",),
    "psychomotor retardation": (r"psychomotor (?:retardation|slowing)",),
    "flight of ideas": (r"flight of ideas",),
    "loosening of associations": (r"loos(?:ening|e) (?:of )?associations", "(?-i:LOA)"),
    "tangentiality": ("tangentiality", "tangential"),
    "circumstantiality": ("circumstantiality", "circumstantial"),
    "depersonalization": ("depersonali[sz]ation",),
    "derealization": ("dereali[sz]ation",),
    "racing thoughts": (r"racing thoughts",),
    "obsessions": (r"obsessions?", "obsessive thoughts"),
    "phobias": (r"phobias?",),
    "self-harm": (r"self[- ]harm", r"self[- ]injur(?:y|ious)", r"self[- ]mutilation", "cutting"),
    "suicide attempts": (r"suicide attempts?", r"attempted suicide"),
    "arrests": (r"arrests?", "arrested"),
    "legal issues": (r"legal (?:issues|problems|history|involvement|charges)", r"arrests?", "arrested"),
    "physical abuse": (r"physical(?:ly)? abuse[d]?",),
    "sexual abuse": (r"sexual(?:ly)? abuse[d]?", r"raped?", "molested"),
    "emotional abuse": (r"emotional(?:ly)? abuse[d]?",),
    "fire setting": (r"fire[- ]?setting", r"set(?:ting)? fires?"),
    "animal cruelty": (r"(?:cruelty to|cruel to) animals", r"animal cruelty"),
}
_ALIASES_OF_CONCEPT: dict[str, str] = {
    "suicidal thoughts": "suicidal ideation", "si": "suicidal ideation", "hi": "homicidal ideation",
    "homicidal thoughts": "homicidal ideation", "avh": "hallucinations", "drug abuse": "drug use",
    "illicit drug use": "drug use", "recreational drug use": "drug use", "substance use": "drug use",
    "substance abuse": "drug use", "illicit substance use": "drug use", "alcohol abuse": "alcohol use",
    "smoking": "tobacco use", "eps": "extrapyramidal symptoms", "psychiatric hospitalizations":
    "psychiatric hospitalization", "seizure": "seizures", "head injuries": "head injury", "tbi": "head injury",
    "traumatic head injuries": "head injury", "traumatic head injury": "head injury", "strokes": "stroke",
    "arrest": "arrests", "legal history": "legal issues", "legal involvement": "legal issues",
    "being raped": "sexual abuse", "depersonalisation": "depersonalization", "derealisation": "derealization",
    "anxiety symptoms": "anxiety symptoms", "alcohol or substance abuse": "alcohol use",
    "psychomotor agitation or retardation": "psychomotor agitation",
}
_QUALIFIERS = re.compile(r"^(?:(history of|prior|previous|past|ever|lifetime)|recent|current|currently|any|new|"
                         r"ongoing|continuous|excessive or binge|excessive|binge)\s+")


@dataclass(frozen=True)
class DeniedConcept:
    """How to find one denied item in a text: its patterns and whether the denial is lifetime."""

    item: str
    patterns: tuple[str, ...]
    lifetime: bool


def denied_concept(item: str) -> DeniedConcept:
    """Surface patterns of a denied item: the phrase itself, its core without qualifiers ("recent", "prior",
    "history of", ...), and the synonyms of the symptom concept the core names. Items starting with "other" or
    naming a family history are matched as written only."""
    norm = normalize(item)
    phrase = r"[\W_]+".join(re.escape(w) for w in norm.split())
    if norm.startswith(("other ", "family ")) or " family " in f" {norm} ":
        return DeniedConcept(item, (phrase,), False)
    core, lifetime = norm, False
    while True:
        m = _QUALIFIERS.match(core)
        if not m:
            break
        lifetime = lifetime or m.group(1) is not None
        core = core[m.end():]
    concept = _ALIASES_OF_CONCEPT.get(core, core)
    pats = [phrase, r"[\W_]+".join(re.escape(w) for w in core.split())]
    pats += list(SYMPTOM_CONCEPTS.get(concept, ()))
    return DeniedConcept(item, tuple(dict.fromkeys(pats)), lifetime)


# ------------------------------------------------------------------------------------------------------------
# Matching


_LIST_PUNCT = re.compile(r"[,;:]")


_NOT_PLURAL = re.compile(r"(?:ss|us|is|ous|ics|ies)$", re.I)
# Names of one condition that end in "s" without being a plural; any other "-pes" or "-etes" is ("types").
SINGULAR_IN_S = frozenset({"diabetes", "herpes", "rabies", "scabies", "measles", "mumps", "rickets"})


def singular_stem(word: str) -> str:
    """A last word written in the regular plural ("headaches", "seizures") without its "s": the number of a
    condition's name is no clinical fact of it, and :func:`surface_pattern` adds the plural back as optional, so
    a name annotated in the plural also matches the singular ("headaches" / "headache").

    >>> singular_stem("headaches"), singular_stem("psychosis"), singular_stem("diabetes"), singular_stem("tics")
    ('headache', 'psychosis', 'diabetes', 'tics')
    """
    if len(word) > 4 and word.isalpha() and not word.isupper() and word[-1] == "s" and not _NOT_PLURAL.search(word) \
            and word.lower() not in SINGULAR_IN_S:
        return word[:-1]
    return word


def surface_pattern(surface: str) -> str:
    """A regular expression for a surface form: words joined by any punctuation/space, an optional plural (and a
    plural last word made optional: :func:`singular_stem`),
    case-insensitive unless the form is an abbreviation in capitals. A comma, semicolon or colon separates the
    items of a list: it joins two words only where the form itself has one there ("daily vitamin" is not
    "daily, vitamin B6")."""
    words = re.findall(r"[^\W_]+", surface)
    if not words:
        return ""
    gaps = re.split(r"[^\W_]+", surface)[1:-1]  # what lies between two words
    words[-1] = singular_stem(words[-1])
    body = re.escape(words[0])
    for gap, w in zip(gaps, words[1:], strict=True):
        body += (r"[\W_]{1,3}" if _LIST_PUNCT.search(gap) else r"(?:[^\w,;:]|_){1,3}") + re.escape(w)
    last = words[-1]
    if last.isalpha() and len(last) > 3:
        body += r"(?:s|es)?"
    abbrev = surface.strip().isupper() and len(surface.strip()) <= 8 and " " not in surface.strip()
    return body if abbrev else f"(?i:{body})"


@dataclass(frozen=True)
class _Term:
    kind: ConceptType
    surface: str
    ref: int  # index into the note's facts (dx/med) or denied concepts; -1 for lexicon diagnosis terms
    abbrev: bool


class _Matcher:
    """One alternation over many surface forms, longest first, with the form that matched."""

    def __init__(self, terms: Sequence[_Term], patterns: Sequence[str]) -> None:
        order = sorted(range(len(terms)), key=lambda i: -len(terms[i].surface))
        self.terms = [terms[i] for i in order]
        alts = [f"(?P<t{k}>{patterns[i]})" for k, i in enumerate(order) if patterns[i]]
        self.rx = re.compile(r"(?<![\w])(?:" + "|".join(alts) + r")(?![\w])") if alts else None

    def find(self, text: str) -> list[tuple[int, int, _Term]]:
        if self.rx is None:
            return []
        out = []
        for m in self.rx.finditer(text):
            assert m.lastgroup is not None
            out.append((m.start(), m.end(), self.terms[int(m.lastgroup[1:])]))
        return out


_FIELD_LABEL = re.compile(r"^\s*[A-Z][\w'/&() -]{0,50}?:(?=\s)")


def label_end(text: str) -> int:
    """End of a leading field label ("Suicidal/Homicidal Ideation:", "Psychomotor:"; at most six words), else 0.
    A field name asserts nothing: the value after the colon does."""
    m = _FIELD_LABEL.match(text)
    return m.end() if m and len(m.group(0).split()) <= 6 else 0


def _shouting(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 12 and sum(c.isupper() for c in letters) / len(letters) > 0.6


@dataclass(frozen=True)
class Contradiction:
    """One contradiction of a text with its annotation: kind, the annotated fact (label, generic drug name or
    denied phrase; for an invented diagnosis its DSM name) and the sentences (indices) that show it."""

    kind: str
    fact: str
    sentences: tuple[int, ...]


@dataclass(frozen=True)
class FactHit:
    """Whether one annotated fact is found in the required status, and the first sentence that shows it."""

    fact: str
    found: bool
    sentence: int | None = None


@dataclass
class FidelityScore:
    """The fidelity of one text to its note's annotation."""

    case_id: str
    n_sentences: int
    affirmed_dx: list[FactHit]
    current_meds: list[FactHit]
    contradictions: list[Contradiction]
    copy: CopyStats | None = None
    excess: list[Contradiction] = field(default_factory=list)

    @property
    def dx_recall(self) -> float:
        """Affirmed-diagnosis recall (NaN when the note affirms none)."""
        return _share(self.affirmed_dx)

    @property
    def med_recall(self) -> float:
        """Current-medication recall (NaN when the note lists none)."""
        return _share(self.current_meds)

    def by_kind(self, excess: bool = False) -> dict[str, int]:
        """Number of contradicted facts per kind (all kinds, zeros included)."""
        items = self.excess if excess else self.contradictions
        out = dict.fromkeys(CONTRADICTION_KINDS, 0)
        for c in items:
            out[c.kind] += 1
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (labels, kinds and sentence indices only)."""
        data: dict[str, Any] = {
            "case_id": self.case_id,
            "sentences": self.n_sentences,
            "affirmed_dx_recall": None if math.isnan(self.dx_recall) else self.dx_recall,
            "affirmed_dx": [vars(h) for h in self.affirmed_dx],
            "current_med_recall": None if math.isnan(self.med_recall) else self.med_recall,
            "current_meds": [vars(h) for h in self.current_meds],
            "contradictions": [{"kind": c.kind, "fact": c.fact, "sentences": list(c.sentences)}
                               for c in self.contradictions],
            "excess_contradictions": [{"kind": c.kind, "fact": c.fact, "sentences": list(c.sentences)}
                                      for c in self.excess],
        }
        if self.copy is not None:
            data["copy"] = {"longest_run": self.copy.longest_run, "max_sentence_run": self.copy.max_sentence_run,
                            "sentences_over_limit": self.copy.sentences_over_limit, "limit": self.copy.limit,
                            "within_limit": self.copy.within_limit}
        return data


def _share(hits: Sequence[FactHit]) -> float:
    return sum(h.found for h in hits) / len(hits) if hits else math.nan


class NoteScorer:
    """The scorer for one annotated note (compiled once, then applied to the original and to every output)."""

    def __init__(self, note: FactsNote) -> None:
        self.note = note
        self.dx: list[DiagnosisFact] = list(note.diagnoses)
        self.dx_surfaces: list[set[str]] = [{normalize(x) for x in (d.label, *d.mentions)} for d in self.dx]
        self.dx_keys: list[set[str]] = [{dx_term(x).key for x in (d.label, *d.mentions)} for d in self.dx]
        self.dx_generic: list[bool] = [dx_term(d.label).generic or any(dx_term(m).generic for m in d.mentions)
                                       for d in self.dx]
        self.dx_chapters: list[frozenset[str]] = []
        for d in self.dx:
            chs = dx_term(d.label).chapters or frozenset().union(*(dx_term(m).chapters for m in d.mentions))
            self.dx_chapters.append(chs)
        self.meds: list[MedicationFact] = list(note.medications)
        self.med_forms: list[frozenset[str]] = [frozenset(medication_forms(m)) for m in self.meds]
        self.denied = [denied_concept(x) for x in note.denied]
        terms: list[_Term] = []
        pats: list[str] = []
        for i, d in enumerate(self.dx):
            for s in (d.label, *d.mentions):
                terms.append(_Term("dx", s, i, s.isupper()))
                pats.append(surface_pattern(s))
        for s in dx_lexicon():
            terms.append(_Term("dx", s, -1, s.isupper()))
            pats.append(surface_pattern(s))
        self._dx = _Matcher(terms, pats)
        mterms: list[_Term] = []
        mpats: list[str] = []
        for i in range(len(self.meds)):
            for s in sorted(self.med_forms[i]):
                mterms.append(_Term("med", s, i, False))
                mpats.append(surface_pattern(s))
        self._med = _Matcher(mterms, mpats)
        self._sx: list[re.Pattern[str]] = [
            re.compile(r"(?<![\w])(?:" + "|".join(f"(?:{p})" for p in c.patterns) + r")(?![\w])", re.I)
            for c in self.denied
        ]
        self._tiers: dict[str, tuple[list[int], list[int], list[int]]] = {}
        self._support_cache: tuple[str, SourceSupport] | None = None

    # -- diagnosis resolution ------------------------------------------------------------------------------

    def tiers(self, surface: str) -> tuple[list[int], list[int], list[int]]:
        """Annotated diagnoses a surface names: (same surface or canonical key, same chapter with a generic side,
        same chapter)."""
        if surface in self._tiers:
            return self._tiers[surface]
        t = dx_term(surface)
        exact, generic, related = [], [], []
        for i in range(len(self.dx)):
            shared = t.chapters & self.dx_chapters[i]
            if t.text in self.dx_surfaces[i] or t.key in self.dx_keys[i]:
                exact.append(i)
            elif shared and (t.generic or self.dx_generic[i]):
                generic.append(i)
            elif shared:
                related.append(i)
        self._tiers[surface] = (exact, generic, related)
        return exact, generic, related

    # -- scoring -------------------------------------------------------------------------------------------

    def score(self, text: str, *, source: str | None = None, case_id: str | None = None) -> FidelityScore:
        """Score ``text`` (an output, or the original itself); with ``source``, also its copied runs and the
        loaded symptoms it asserts that the source does not mention (without ``source``, the text is its own)."""
        sents = split_sentences(text)
        support = self._support(text if source is None else source)
        dx_found: dict[int, int] = {}
        med_found: dict[int, int] = {}
        found: dict[tuple[str, str], list[int]] = {}

        def flag(kind: str, fact: str, idx: int) -> None:
            lst = found.setdefault((kind, fact), [])
            if idx not in lst:
                lst.append(idx)

        for s in sents:
            if s.header:
                continue
            self._score_dx(s, dx_found, flag)
            self._score_med(s, med_found, flag)
            self._score_sx(s, flag)
            self._score_unsupported(s, support, flag)
        affirmed = [FactHit(d.label, i in dx_found, dx_found.get(i)) for i, d in enumerate(self.dx)
                    if d.status == "affirmed"]
        current = [FactHit(m.name, i in med_found, med_found.get(i)) for i, m in enumerate(self.meds)
                   if m.status == "current"]
        contradictions = [Contradiction(k, f, tuple(v)) for (k, f), v in found.items()]
        contradictions.sort(key=lambda c: (CONTRADICTION_KINDS.index(c.kind), c.sentences[0], c.fact))
        copy = None
        if source is not None:
            drug_names = [x for m in self.meds for x in (m.name, *m.mentions)]
            copy = copied_runs(source, text, sentence_spans=[(s.start, s.end) for s in sents],
                               extra_drug_words=drug_names)
        return FidelityScore(case_id or self.note.case_id, len(sents), affirmed, current, contradictions, copy)

    def _hits(self, s: Sentence, kind: ConceptType, cache: dict[str, list[CueHit]]) -> list[CueHit]:
        if kind not in cache:
            cache[kind] = cue_hits(s.text, kind)
        return cache[kind]

    def _score_dx(self, s: Sentence, dx_found: dict[int, int], flag: Any) -> None:
        cache: dict[str, list[CueHit]] = {}
        shouting = None
        lab = label_end(s.text)
        for a, b, term in self._dx.find(s.text):
            if b <= lab:
                continue
            if term.abbrev and term.ref < 0 and term.surface in _AMBIGUOUS_ABBREVIATIONS:
                shouting = _shouting(s.text) if shouting is None else shouting
                if shouting:
                    continue
            ctx = classify(s.text, a, b, "dx", section=s.section, question=s.question,
                           hits=self._hits(s, "dx", cache))
            st = ctx.status
            exact, generic, related = self.tiers(term.surface)
            if term.ref >= 0 and term.ref not in exact:
                exact = [term.ref, *exact]
            if st in ("affirmed", "past"):
                for i in (*exact, *generic):
                    if self.dx[i].status == "affirmed":
                        dx_found.setdefault(i, s.index)
            if st not in _PATIENT_ANY:
                continue
            chosen = [*exact, *generic] if dx_term(term.surface).generic else (exact or generic or related)
            if not chosen:
                chosen = related
            statuses = {self.dx[i].status for i in chosen}
            if not chosen:
                t = dx_term(term.surface)
                if t.inventable:
                    flag("invented_diagnosis", t.display, s.index)
                continue
            if statuses & {"affirmed", "past"}:
                continue
            asserted = st in _PATIENT_ASSERTED
            for status, kind in (("possible", "possible_asserted"), ("ruled_out", "ruled_out_asserted")):
                if status in statuses:
                    if asserted and (status == "ruled_out" or st != "possible"):
                        for i in chosen:
                            if self.dx[i].status == status:
                                flag(kind, self.dx[i].label, s.index)
                    break
            else:
                if statuses == {"family"}:
                    for i in chosen:
                        flag("family_as_patient", self.dx[i].label, s.index)

    def _score_med(self, s: Sentence, med_found: dict[int, int], flag: Any) -> None:
        cache: dict[str, list[CueHit]] = {}
        lab = label_end(s.text)
        for a, b, term in self._med.find(s.text):
            if b <= lab:
                continue
            ctx = classify(s.text, a, b, "med", section=s.section, question=s.question,
                           hits=self._hits(s, "med", cache))
            if ctx.status != "current":
                continue
            same = [i for i, forms in enumerate(self.med_forms) if term.surface in forms] or [term.ref]
            statuses = {self.meds[i].status for i in same}
            if "current" in statuses:
                for i in same:
                    if self.meds[i].status == "current":
                        med_found.setdefault(i, s.index)
                continue
            for status, kind in (("past", "past_med_as_current"), ("planned", "planned_med_as_taken"),
                                 ("refused", "refused_med_as_taken")):
                if status in statuses:
                    for i in same:
                        if self.meds[i].status == status:
                            flag(kind, self.meds[i].name, s.index)
                    break

    def _score_sx(self, s: Sentence, flag: Any) -> None:
        cache: dict[str, list[CueHit]] = {}
        for concept, rx in zip(self.denied, self._sx, strict=True):
            for m in rx.finditer(s.text, label_end(s.text)):
                ctx = classify(s.text, m.start(), m.end(), "sx", section=s.section, question=s.question,
                               hits=self._hits(s, "sx", cache))
                if ctx.status == "present" or (concept.lifetime and ctx.status in ("past", "resolved")):
                    flag("denied_as_present", concept.item, s.index)
                    break


    def _support(self, source: str) -> SourceSupport:
        if self._support_cache is None or self._support_cache[0] != source:
            self._support_cache = (source, SourceSupport(source))
        return self._support_cache[1]

    def _score_unsupported(self, s: Sentence, support: SourceSupport, flag: Any) -> None:
        cache: dict[str, list[CueHit]] = {}
        for a, b, label in loaded_mentions(s.text, label_end(s.text)):
            if support.supports(label):
                continue
            ctx = classify(s.text, a, b, "sx", section=s.section, question=s.question,
                           hits=self._hits(s, "sx", cache))
            if ctx.status not in ("negated", "hypothetical", "family"):
                flag("invented_symptom", label, s.index)


def score_text(text: str, note: FactsNote, *, source: str | None = None) -> FidelityScore:
    """Score one text against its note's annotation (see the module docstring)."""
    return NoteScorer(note).score(text, source=source)


def excess(output: FidelityScore, original: FidelityScore) -> list[Contradiction]:
    """The contradictions of ``output`` that the original note does not show for the same kind and fact."""
    floor = {(c.kind, c.fact) for c in original.contradictions}
    return [c for c in output.contradictions if (c.kind, c.fact) not in floor]


@dataclass(frozen=True)
class FidelitySummary:
    """Pooled figures of one method over the annotated cases."""

    method: str
    cases: int
    affirmed_dx_found: int
    affirmed_dx_total: int
    current_meds_found: int
    current_meds_total: int
    contradictions: Mapping[str, int]
    excess: Mapping[str, int]
    cases_with_contradiction: int
    cases_with_excess: int
    longest_run_max: int | None
    cases_within_copy_limit: int | None

    @property
    def dx_recall(self) -> float:
        return self.affirmed_dx_found / self.affirmed_dx_total if self.affirmed_dx_total else math.nan

    @property
    def med_recall(self) -> float:
        return self.current_meds_found / self.current_meds_total if self.current_meds_total else math.nan


def summarize(method: str, scores: Iterable[FidelityScore]) -> FidelitySummary:
    """Pooled recall (found over total facts), contradicted facts per kind, cases with any contradiction."""
    items = list(scores)
    kinds = dict.fromkeys(CONTRADICTION_KINDS, 0)
    ex = dict.fromkeys(CONTRADICTION_KINDS, 0)
    for sc in items:
        for k, n in sc.by_kind().items():
            kinds[k] += n
        for k, n in sc.by_kind(excess=True).items():
            ex[k] += n
    copies = [sc.copy for sc in items if sc.copy is not None]
    return FidelitySummary(
        method=method,
        cases=len(items),
        affirmed_dx_found=sum(h.found for sc in items for h in sc.affirmed_dx),
        affirmed_dx_total=sum(len(sc.affirmed_dx) for sc in items),
        current_meds_found=sum(h.found for sc in items for h in sc.current_meds),
        current_meds_total=sum(len(sc.current_meds) for sc in items),
        contradictions=kinds,
        excess=ex,
        cases_with_contradiction=sum(1 for sc in items if sc.contradictions),
        cases_with_excess=sum(1 for sc in items if sc.excess),
        longest_run_max=max((c.longest_run for c in copies), default=None) if copies else None,
        cases_within_copy_limit=sum(1 for c in copies if c.within_limit) if copies else None,
    )
