"""Unsupported clinically loaded symptoms: does a text assert a symptom that its source note never mentions?

The facts annotation lists diagnoses, medications and denied items, not every symptom, so a rewrite can add a
symptom the note does not support (a persecutory delusion, compulsions, tardive dyskinesia) without
contradicting any annotated fact. This check closes that gap for a small vocabulary of *clinically loaded*
symptom terms -- those whose false presence changes the clinical picture (risk, psychosis, mania, drug
toxicity) -- and needs no annotation: the source note itself is the reference.

A loaded term asserted for the patient in a sentence of the text (present, past, resolved or possible: any
status but negated, hypothetical or someone else's) is *unsupported* when the source mentions neither the
concept nor any of its synonyms, nor a more general or a more specific concept of the same family (a
"persecutory delusion" is supported by "delusions" and the reverse), in any status. A source mention under
negation is support here: an output that asserts a symptom the note denies is the ``denied_as_present`` kind of
:mod:`~anonpsy.evaluate.fidelity`, judged against the annotation.

The vocabulary is the scorer's own (written from the DSM-5-TR glossary and common clinical phrasings, with the
morphological variants of each term); it shares nothing with the extractor's lexicon
(``rules/lexicon/symptoms.yaml``), so tuning the extractor cannot make this judge agree with it. An original
note scored against itself has no unsupported symptom by construction: every term the check finds in a text is
also a support pattern of its concept. Changing it changes every figure: bump :data:`SUPPORT_VERSION`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

SUPPORT_VERSION = 1

_REFL = r"(?:him|her|them|my|your)sel(?:f|ves)"
_POSS = r"(?:his|her|their|my)"


@dataclass(frozen=True)
class LoadedSymptom:
    """One clinically loaded symptom concept.

    ``terms``: patterns that assert it in a text (case-insensitive regular expressions over words; ``(?-i:...)``
    for case-sensitive abbreviations); ``support``: further patterns that count as a mention of it in the source
    (lay phrasings, abbreviations, the syndrome it belongs to); ``parent``: the more general concept of its
    family, whose mentions support it and which its mentions support."""

    label: str
    terms: tuple[str, ...]
    support: tuple[str, ...] = ()
    parent: str | None = None


def _s(label: str, terms: tuple[str, ...], support: tuple[str, ...] = (), parent: str | None = None
       ) -> LoadedSymptom:
    return LoadedSymptom(label, terms, support, parent)


_DELUSION_KINDS = ("somatic", "erotomanic", "nihilistic", "religious", "bizarre", "jealous")

LOADED_SYMPTOMS: tuple[LoadedSymptom, ...] = (
    # ------------------------------------------------------------------------------------------- risk
    _s("suicidal ideation",
       (r"suicidal(?:ity)?(?! (?:gestures?|behaviou?rs?|acts?|attempts?))"
        r"(?: (?:ideations?|thoughts?|thinking|ideas?|intent|plans?|urges?|feelings?))?",
        rf"thoughts? (?:of|about) (?:suicide|killing {_REFL}|ending {_POSS} (?:own )?life)",
        r"wish(?:es|ed)? to die", r"wants? to die", r"death wish(?:es)?"),
       (r"suicid\w*", "(?-i:SI)", rf"kill(?:s|ed|ing)? {_REFL}", rf"end(?:s|ed|ing)? {_POSS} (?:own )?life",
        r"better off dead", r"(?:wish|want)\w* (?:to be|(?:he|she|they|I) (?:was|were)) dead")),
    _s("suicide attempt",
       (r"suicide attempts?", r"attempted suicide", r"suicidal (?:gestures?|behaviou?rs?|acts?|attempts?)",
        rf"tried to kill {_REFL}", rf"attempt(?:s|ed)? to kill {_REFL}"),
       (r"suicid\w*", r"overdos\w*", "(?-i:SA)", rf"kill(?:s|ed|ing)? {_REFL}")),
    _s("homicidal ideation",
       (r"homicidal(?:ity)?(?: (?:ideations?|thoughts?|thinking|ideas?|intent|plans?|urges?))?",
        r"thoughts? (?:of|about) (?:killing|hurting|harming) (?:others|someone|somebody|people)"),
       (r"homicid\w*", "(?-i:HI)", r"(?:kill|hurt|harm)\w* (?:others|someone|somebody|people)")),
    _s("self-harm",
       (r"self[- ]?harm\w*", r"self[- ]?injur\w*", r"self[- ]?mutilat\w*", r"(?-i:NSSI)",
        rf"(?:cut|cuts|cutting|burn|burns|burned|burning) {_REFL}"),
       (r"self[- ]?(?:harm|injur|mutilat|inflict)\w*", r"(?-i:NSSI|DSH)", r"cutting",
        rf"(?:cut|cuts|burn|burns|burned|scratch\w*) (?:on )?(?:{_POSS} )?(?:arms?|wrists?|legs?|thighs?|skin)",
        r"head[- ]?bang\w*")),
    _s("overdose",
       (r"overdos(?:e|es|ed|ing)", r"intentional ingestions?"),
       (r"overdos\w*", r"(?-i:OD)", r"ingest\w*", r"took too many")),
    _s("intoxication",
       (r"(?:acute |alcohol |cannabis |opioid |stimulant |cocaine |substance |drug )?intoxicat(?:ion|ed)",
        r"inebriat(?:ed|ion)", r"drunk(?:en|enness)?"),
       (r"intoxicat\w*", r"inebriat\w*", r"drunk\w*", r"under the influence", r"high on",
        r"(?:smell|odou?r)\w* of alcohol", r"alcohol on (?:his|her|their) breath", "(?-i:BAL|BAC)",
        r"blood alcohol", r"breathaly[sz]\w*", r"overdos\w*")),
    # ------------------------------------------------------------------------------------------- psychosis
    _s("psychosis",
       (r"psychos[ie]s", r"psychotic(?! disorder)(?: (?:symptoms?|features|episodes?|break|decompensation|"
        r"thinking|process))?"),
       (r"psychos\w*", r"psychotic", r"schizo\w+", r"thought disorder", "(?-i:AVH|AH|VH)",
        r"internal stimuli", r"internally preoccupied")),
    _s("delusions",
       (r"delusion(?:s|al)?(?! disorder)(?: (?:thinking|beliefs?|ideas?|ideation|content))?",
        r"fixed (?:false )?beliefs?"),
       (r"delusion\w*", r"fixed (?:false )?beliefs?", r"false beliefs?"), parent="psychosis"),
    _s("persecutory delusion",
       (r"persecutory (?:delusions?|beliefs?|ideation|ideas?|thoughts?|thinking|content)",
        r"delusions? of (?:persecution|being (?:followed|watched|poisoned|persecuted))", r"paranoid delusions?"),
       (r"persecut\w*", r"paranoi\w*",
        r"(?:believ|think|thought|convinc|feel|felt|fear|worr|suspicio)\w*\W+(?:\w+\W+){0,6}?"
        r"(?:being|is|are|was|were) (?:followed|watched|poisoned|spied on|tracked|targeted|monitored|persecuted)",
        r"out to get", r"(?:plot|conspir)\w* against"), parent="delusions"),
    _s("paranoia",
       (r"paranoia", r"paranoid(?! (?:personality|schizophreni|type|delusion))"
        r"(?: (?:ideation|thoughts?|thinking|ideas?|features|behaviou?r))?"),
       (r"paranoi\w*", r"persecut\w*", r"suspicious\w*"), parent="psychosis"),
    _s("grandiose delusion",
       (r"grandiose (?:delusions?|beliefs?|ideation|ideas?|thinking|thoughts?)", r"delusions? of grandeur",
        r"grandiosity"),
       (r"grandios\w*", r"special (?:powers?|mission)", r"delusions? of grandeur"), parent="delusions"),
    _s("delusion of reference",
       (r"(?:delusions?|ideas?) of reference", r"referential (?:thinking|ideation|ideas?|delusions?)"),
       (r"of reference", r"referential\w*", r"messages? (?:from|on|in|through) (?:the )?(?:tv|television|radio)"),
       parent="delusions"),
    *(_s(f"{kind} delusion", (rf"{kind} delusions?",), (rf"{kind}\w* delusion\w*",), parent="delusions")
      for kind in _DELUSION_KINDS),
    _s("thought insertion",
       (r"thought (?:insertion|broadcast(?:ing)?|withdrawal)",),
       (r"thought (?:insertion|broadcast\w*|withdrawal|control)",
        r"thoughts (?:are|were|being) (?:inserted|broadcast|taken|removed|put|controlled)"), parent="delusions"),
    _s("hallucinations",
       (r"hallucinat(?:ions?|ing|ed|ory|es)", r"hear(?:s|d|ing)? (?:(?:the |some )?voices)",
        r"perceptual (?:disturbances?|abnormalit(?:y|ies))"),
       (r"hallucinat\w*", r"voices", "(?-i:AVH|AH|VH|A/VH)", r"perceptual (?:disturbance|abnormalit)\w*",
        r"internal stimuli", r"seeing things", r"(?:see|sees|saw|seeing) (?:people|shadows|bugs|things)"),
       parent="psychosis"),
    _s("auditory hallucinations",
       (r"(?:auditory|command)(?: (?:and|or|/) (?:visual|tactile|olfactory))? hallucinat\w*",
        r"hear(?:s|d|ing)? (?:(?:the |some )?voices)"),
       (r"auditory\w*", r"command hallucinat\w*", r"voices", "(?-i:AVH|AH|A/VH)"), parent="hallucinations"),
    _s("visual hallucinations",
       (r"visual hallucinat\w*",),
       (r"visual\w* hallucinat\w*", r"visual and auditory", r"auditory and visual", "(?-i:AVH|VH|A/VH)",
        r"(?:see|sees|saw|seeing) (?:people|shadows|bugs|things)"), parent="hallucinations"),
    _s("tactile hallucinations", (r"tactile hallucinat\w*",), (r"tactile\w* hallucinat\w*", r"formication"),
       parent="hallucinations"),
    _s("olfactory hallucinations", (r"olfactory hallucinat\w*",), (r"olfactory\w* hallucinat\w*",),
       parent="hallucinations"),
    _s("catatonia",
       (r"catatoni(?:a|c)(?: (?:features|symptoms?|state|stupor|posturing))?",),
       (r"catatoni\w*", r"waxy flexibility", r"stupor\w*", r"echolalia", r"echopraxia", r"negativism")),
    _s("formal thought disorder",
       (r"(?:formal )?thought disorder", r"loos(?:e|ening) (?:of )?associations", r"word salad"),
       (r"thought disorder", r"loos(?:e|ening) (?:of )?associations", r"(?-i:LOA)", r"word salad",
        r"disorgani[sz]\w*", r"incoherent"), parent="psychosis"),
    # ------------------------------------------------------------------------------------------- mood
    _s("mania",
       (r"(?:hypo)?mania", r"(?:hypo)?manic(?![- ]depress)(?: (?:episodes?|symptoms?|features|behaviou?r|state|"
        r"phase))?"),
       (r"(?:hypo)?mani(?:a|c)\w*", r"bipolar", r"cyclothym\w*")),
    _s("flight of ideas", (r"flights? of ideas",), (r"flights? of ideas", r"racing thoughts?"), parent="mania"),
    # ------------------------------------------------------------------------------------------- obsessive-compulsive
    _s("obsessions",
       (r"obsessions?", r"obsessional(?: thoughts?| thinking| ideas?| worries)?",
        r"obsessive(?![- ]compulsive)(?: (?:thoughts?|thinking|ideas?|worries|behaviou?rs?|traits?|rumination))?",
        r"obsessing"),
       (r"obsess\w*", "(?-i:OCD)", r"intrusive (?:thoughts?|images?|urges?)")),
    _s("compulsions",
       (r"compulsions?", r"compulsive(?: (?:behaviou?rs?|rituals?|checking|washing|hand ?washing|cleaning|counting|"
        r"acts?|urges?))?", r"compulsively"),
       (r"compuls\w*", "(?-i:OCD)", r"(?:checking|washing|counting|cleaning|ordering|mental) (?:rituals?|behaviou?rs?)",
        r"ritualistic")),
    # ------------------------------------------------------------------------------------------- dissociation
    _s("depersonalization", (r"depersonali[sz]ation",), (r"depersonali[sz]\w*",)),
    _s("derealization", (r"dereali[sz]ation",), (r"dereali[sz]\w*",)),
    # ------------------------------------------------------------------------------------------- drug toxicity
    _s("tardive dyskinesia",
       (r"tardive(?: dyskinesias?)?",),
       (r"tardive\w*", "(?-i:TD)"), parent="extrapyramidal symptoms"),
    _s("extrapyramidal symptoms",
       (r"extrapyramidal(?: (?:symptoms?|side effects?|signs?|reactions?|effects?))?",),
       (r"extrapyramidal\w*", "(?-i:EPS)", r"parkinsonism", r"akathisi\w*", r"dystoni\w*", r"tardive\w*",
        r"drug[- ]induced (?:parkinsonism|movement)")),
    _s("akathisia", (r"akathisi(?:a|c)",), (r"akathisi\w*",), parent="extrapyramidal symptoms"),
    _s("acute dystonia", (r"(?:acute )?dystoni(?:a|as|c)(?: reactions?)?", r"oculogyric crisis"),
       (r"dystoni\w*", r"oculogyric", r"torticollis"), parent="extrapyramidal symptoms"),
    _s("neuroleptic malignant syndrome", (r"neuroleptic malignant(?: syndrome)?",),
       (r"neuroleptic malignant", "(?-i:NMS)")),
    _s("serotonin syndrome", (r"serotonin(?:ergic)? (?:syndrome|toxicity)",),
       (r"serotonin(?:ergic)? (?:syndrome|toxicity)",)),
    _s("metabolic syndrome", (r"metabolic syndrome",),
       (r"metabolic syndrome", r"metabolic (?:side|adverse) effects?", r"syndrome x")),
    _s("lithium toxicity", (r"lithium (?:toxicity|intoxication|poisoning)",),
       (r"lithium (?:toxicity|intoxication|poisoning|level)\w*", r"toxic lithium")),
)


@dataclass(frozen=True)
class _Compiled:
    labels: tuple[str, ...]
    term_rx: tuple[re.Pattern[str], ...]
    support_rx: tuple[re.Pattern[str], ...]
    # indices of concepts whose support a mention of concept i may use (itself, its parent, its children)
    family: tuple[tuple[int, ...], ...]
    # for each concept, the concepts more specific than it (a mention of one of them inside a mention of this one
    # is counted once, as the specific concept)
    children: tuple[frozenset[int], ...]


def _alt(patterns: tuple[str, ...]) -> re.Pattern[str]:
    body = "|".join(f"(?:{p})" for p in patterns)
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.I)


@lru_cache(maxsize=1)
def _compiled() -> _Compiled:
    labels = tuple(s.label for s in LOADED_SYMPTOMS)
    index = {lab: i for i, lab in enumerate(labels)}
    for s in LOADED_SYMPTOMS:
        if s.parent is not None and s.parent not in index:
            raise ValueError(f"loaded symptom {s.label!r}: unknown parent {s.parent!r}")
    children: list[set[int]] = [set() for _ in labels]
    for i, s in enumerate(LOADED_SYMPTOMS):
        p = s.parent
        while p is not None:
            children[index[p]].add(i)
            p = LOADED_SYMPTOMS[index[p]].parent
    family: list[tuple[int, ...]] = []
    for i, s in enumerate(LOADED_SYMPTOMS):
        fam = {i, *children[i]}
        p = s.parent
        while p is not None:
            fam.add(index[p])
            p = LOADED_SYMPTOMS[index[p]].parent
        family.append(tuple(sorted(fam)))
    return _Compiled(
        labels,
        tuple(_alt(s.terms) for s in LOADED_SYMPTOMS),
        tuple(_alt((*s.terms, *s.support)) for s in LOADED_SYMPTOMS),
        tuple(family),
        tuple(frozenset(c) for c in children),
    )


def loaded_mentions(text: str, start: int = 0) -> list[tuple[int, int, str]]:
    """The loaded-symptom mentions of a text from ``start``: (start, end, concept label), in text order. A
    mention inside a longer mention of a more specific concept of its family is left out ("hallucinations" in
    "auditory hallucinations")."""
    c = _compiled()
    found: list[tuple[int, int, int]] = []
    for i, rx in enumerate(c.term_rx):
        for m in rx.finditer(text, start):
            if m.end() > m.start():
                found.append((m.start(), m.end(), i))
    kept = [(a, b, i) for a, b, i in found
            if not any(j in c.children[i] and a2 <= a and b <= b2 for a2, b2, j in found)]
    kept.sort()
    return [(a, b, c.labels[i]) for a, b, i in kept]


class SourceSupport:
    """Which loaded-symptom concepts a source note mentions at all (any status, headers included)."""

    def __init__(self, source: str) -> None:
        c = _compiled()
        mentioned = [bool(rx.search(source)) for rx in c.support_rx]
        self._supported = {c.labels[i]: any(mentioned[j] for j in c.family[i]) for i in range(len(c.labels))}

    def supports(self, label: str) -> bool:
        """Whether the source mentions the concept, a synonym, or a concept of the same family."""
        return self._supported[label]
