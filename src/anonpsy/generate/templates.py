"""Deterministic template generation (the ``rules`` backend of D).

The text is a sequence of :class:`Piece` s — the lead, one per narrative block, one per diagnosis not stated in a
block, and the closing pieces (past history, each relative's condition, denied symptoms, conditional advice, test
results, mental status examination, disposition) — each naming the graph nodes whose facts it states. Every
piece states each fact with the status the graph gives it, in words that carry the status (ConText-style trigger
phrases): a provisional diagnosis is "possible", a rule-out is "to rule out", an excluded one "was ruled out", a
past one "in the past"; a stopped drug was "previously taken", a planned one is "the plan is to start", a declined
one "declined", an as-needed one "as needed"; a denied symptom is "denied", a conditional one "if … occurred",
a relative's condition "family history is significant for". A sentence never lets one status cue reach a fact of
another status: facts of different statuses are written in different sentences, and lists under one cue are cut
before the cue's scope ends. A treatment target ("for X") is written only when the source stated it (the edge
carries its evidence) and X is asserted.

A piece is written at one of three levels: 0, narrative (phrasings chosen by a per-piece seeded RNG, so the same
graph and seed always give the same text and re-writing one piece leaves the others unchanged); 1, plain (one
fact per sentence in the canonical forms of :mod:`anonpsy.generate.plain`); 2, plain without free text or time
phrases (STEB frames, the index-episode narrative, outcomes and disposition left out, each recorded in
:attr:`Piece.dropped`). :mod:`anonpsy.generate.faithful` raises a piece's level when its copy guard or round
trip requires it. Pronouns and kinship follow the graph's (perturbed) sex.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from anonpsy import kinship
from anonpsy.caseless import Caseless
from anonpsy.generate.facts import symptom_status
from anonpsy.generate.findings import (
    ADULT_AGE,
    TEST_GROUPS,
    mental_status_parts,
    mental_status_text,
    value_sentence,
    value_text,
)
from anonpsy.generate.plain import (
    be,
    because,
    denial_kind,
    denied_history,
    dx_full_name,
    dx_name,
    family_item,
    no_history,
    one_time,
    ordered_now,
    plain_diagnosis,
    plain_family,
    plain_history,
    plain_symptoms,
    plain_treatment,
    treatment_phrase,
)
from anonpsy.generate.plan import Block, NarrativePlan, plan_narrative
from anonpsy.generate.words import (
    CUE_SCOPE,
    NUMBER_WORDS,
    Voice,
    amount,
    cap,
    clinical_case,
    is_event,
    join,
    lead_in,
    occupation_phrase,
    scoped_lists,
    strip_end,
    with_article,
    word_count,
)
from anonpsy.graph import (
    STEB,
    ArrivalMode,
    Assertion,
    CaseGraph,
    Certainty,
    Diagnosis,
    FamilyCertainty,
    HistoryStatus,
    LegalStatus,
    NodeType,
    PastHistory,
    RelationType,
    Setting,
    Symptom,
    Temporality,
    TestKind,
    Treatment,
    TreatmentStatus,
    TreatmentType,
    legal_status_stated,
)
from anonpsy.temporal import Interval

__all__ = [
    "ARRIVAL_PHRASE", "LEGAL_PHRASE", "NUMBER_WORDS", "SAFETY_PHRASE", "SETTING_PHRASE", "Piece", "Renderer",
    "Voice", "assemble", "clinical_case", "render",
]

SETTING_PHRASE = {
    Setting.emergency_department: "the emergency department",
    # An admission read from a discharge summary or hospital course may be to a medical ward: no specialty.
    Setting.inpatient: "an inpatient unit",
    Setting.outpatient: "the outpatient clinic",
    Setting.consultation_liaison: "the consultation-liaison psychiatry service",
    Setting.telehealth: "a telehealth appointment",
    Setting.community: "the community mental health team",
    Setting.residential: "a residential treatment program",
    Setting.forensic: "a forensic psychiatric evaluation",
    # A visit of unknown setting is no psychiatric evaluation.
    Setting.unknown: "evaluation",
}
ARRIVAL_PHRASE = {
    ArrivalMode.self: "on {pos} own initiative",
    ArrivalMode.family: "brought by family",
    ArrivalMode.police: "brought by police",
    ArrivalMode.ambulance: "brought by ambulance",
    ArrivalMode.referral: "on referral",
    ArrivalMode.transfer: "on transfer from another facility",
    ArrivalMode.scheduled: "for a scheduled appointment",
    ArrivalMode.unknown: "",
}
LEGAL_PHRASE = {
    LegalStatus.voluntary: "on a voluntary basis",
    LegalStatus.involuntary: "on an involuntary basis",
    LegalStatus.legal_hold: "on an emergency legal hold",
    LegalStatus.court_ordered: "under a court order",
    LegalStatus.unknown: "",
}
SAFETY_PHRASE = {
    "suicidal_ideation": "suicidal ideation",
    "suicide_attempt": "a suicide attempt",
    "homicidal_ideation": "homicidal ideation",
    "self_harm": "self-harm",
    "violence": "violent behavior",
    "intoxication": "intoxication",
    "medical_instability": "medical instability",
    "vulnerability": "vulnerability",
}
#: Levels of a piece: narrative, plain, plain without free text or time phrases.
NARRATIVE, PLAIN, BARE = 0, 1, 2
#: Denied symptoms named per sentence.
DENIED_PER_SENTENCE = 3
#: Narrative blocks per body paragraph.
BLOCKS_PER_PARAGRAPH = 3

_PAST_VERBS = frozenset({"began", "stopped", "kept", "went", "ran", "took", "made", "left", "spent", "hid", "stayed",
                         "threw", "broke", "drove", "fled", "sought", "wrote", "told", "refused", "would", "could",
                         "had", "did", "gave", "lost", "quit", "got", "hit", "cut", "drank", "slept", "ate", "fell"})
#: A third-person present verb ("avoids", "checks", "sits", "refuses"), not a noun plural such as "thoughts".
_PRESENT_VERB = re.compile(r"^(?:avoids|checks|sits|refuses|keeps|washes|stays|goes|spends|hides|drinks|eats|sleeps|"
                           r"paces|cries|screams|yells|calls|leaves|locks|counts|repeats|asks|seeks|isolates|skips|"
                           r"misses|stops|starts|runs|walks|drives|carries|wears|cleans|hoards|binges|purges|"
                           r"restricts|exercises|cuts|burns|picks|pulls|bites|hits|throws|breaks|lies|steals|"
                           r"wanders|talks|whispers|mutters|laughs|covers|barricades|texts|checks|reads|writes|"
                           r"watches|listens|tries|needs|wants|insists|has|does|is)$")
_PREPOSITIONS = ("after", "when", "while", "during", "following", "at ", "in ", "on ", "before", "since", "as ",
                 "whenever", "once", "amid", "because")
#: Function words that start a phrase taken from the start of a source sentence ("When she awakens"): inside an
#: output sentence they are written in lower case.
_INLINE_LOWER = frozenset({"after", "when", "while", "during", "following", "at", "in", "on", "before", "since", "as",
                           "whenever", "once", "amid", "because", "the", "a", "an", "his", "her", "their", "this",
                           "that", "these", "those", "every", "each", "upon", "with", "without", "if"})


def _inline(phrase: str) -> str:
    """A phrase cut from the start of a source sentence, for the middle of an output sentence: a capitalised
    function word first ("When she awakens") is lower-cased; a name or an abbreviation is kept."""
    first = phrase.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower() and first.lower() in _INLINE_LOWER:
        return first.lower() + phrase[len(first):]
    return phrase


_THOUGHT_VERB_RE = re.compile(
    r"^(?:believes?|believed|thinks?|thought|worrie[sd]|worry|fears?|feared|(?:is|was) convinced|feels? that|"
    r"felt that|(?:is|was) afraid|expects?|expected|assumed?|wondered|insists?|insisted|reports?|reported|"
    r"describes?|described|states?|stated|says|said)\b", re.I)
#: Relatives a sentence can take as its subject ("Her father may have had ..."); others are told as family history.
_KIN = re.compile(rf"^(?:{kinship.modifiers()}[\s-]+)?"
                  rf"{kinship.alternation(('parent', 'sibling', 'grandparent'), plurals=False)}$", re.I)
_PAST_CUE = re.compile(r"\b(?:at (?:that|the) time|previously|ago|in the past|back then)\b", re.I)
#: A recorded reason that is a sentence about the patient ("This is a 31-year-old female who was referred by
#: herself"), not a complaint: the current symptoms say why instead.
_NOT_A_COMPLAINT = re.compile(r"\b(?:year[- ]old|this is|is an?|was referred|referred by|who)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our)\b|[\"“”]")
#: A complaint written as how the patient feels ("Weak and shaky.", "Depressed"): after "because of" it reads
#: as a feeling.
_FEELING = re.compile(r"(?:weak|tired|shaky|dizzy|light-?headed|sad|down|depressed|anxious|nervous|confused|sick|"
                      r"unwell|suicidal|hopeless|overwhelmed|agitated|paranoid|fatigued|exhausted|stressed|"
                      r"irritable|restless|scared|afraid|angry|upset|sleepy|faint|numb)\b(?!\s+(?:mood|affect|"
                      r"spells?|episodes?|feelings?)\b)", re.I)


def _plural_verb(phrase: str) -> str:
    first, _, rest = phrase.partition(" ")
    base = {"has": "have", "does": "do", "is": "are", "goes": "go"}.get(first)
    if base is None:
        base = first[:-2] if first.endswith(("shes", "ches", "sses", "xes")) else (
            first[:-3] + "y" if first.endswith("ies") else first[:-1])
    return f"{base} {rest}".strip()


_POSSESSIVE = re.compile(r"\b(?:his|her)\b(?= [a-z])")


def _agree(phrase: str, v: Voice) -> str:
    """A predicate copied from the note ("lives with his mother") agreeing with the subject pronoun: the verb in
    the plural and the note's possessive as the pronoun's where the patient's sex is unknown ("they live with
    their mother")."""
    if not v.plural:
        return phrase
    first, _, rest = phrase.partition(" ")
    return f"{v.verb(first)} {_POSSESSIVE.sub(v.pos, rest)}".strip()


#: The patient's partner named with a possessive ("his husband", "her wife"): after a change of the recorded sex
#: the partner word stays as written while the pronoun follows the new sex.
_PARTNER = re.compile(r"\b(his|her|their) (husband|wife|boyfriend|girlfriend)\b", re.I)
_SAME_SEX_PARTNER = {("his", "husband"), ("his", "boyfriend"), ("her", "wife"), ("her", "girlfriend")}


def neutral_partner(phrase: str) -> str:
    """``phrase`` with a partner word that reads as of the patient's own sex made neutral ("lives with his husband"
    -> "lives with his partner"): after a change of the recorded sex it would tell a same-sex relationship the note
    never named; a different-sex partner word is kept, and so is a relative's ("her son and his wife")."""
    def repl(m: re.Match[str]) -> str:
        if (m.group(1).lower(), m.group(2).lower()) in _SAME_SEX_PARTNER:
            return f"{m.group(1)} partner"
        return m.group(0)
    return _PARTNER.sub(repl, phrase)


def _current_problem(p: PastHistory) -> bool:
    """Is a (non-psychiatric) history item a problem of the visit: active, or chronic and named by the assessment or
    the diagnosis list ("IMPRESSION: lumbar disc herniation")?"""
    from anonpsy.extract.sections import deciding_sections

    if p.status == HistoryStatus.active:
        return True
    ev = p.status_evidence
    return p.status == HistoryStatus.chronic and ev is not None and ev.section in deciding_sections()


#: A family situation told by an adjective ("pregnant"): the patient is it, not has it.
_STATE_WORDS = frozenset({"pregnant", "postpartum", "post-partum"})


@dataclass
class Piece:
    """One unit of the text: its key, paragraph group, text, the nodes whose facts it states, its level and the
    free text left out at level 2 (graph paths, never the text)."""

    key: str
    group: str
    text: str
    nodes: tuple[str, ...] = ()
    level: int = NARRATIVE
    dropped: tuple[str, ...] = ()


def _symptom_name(s: Symptom) -> str:
    head = s.headword
    if s.pattern:
        pat = strip_end(s.pattern)
        head = f"{pat} {head}" if word_count(pat) <= 3 and pat.lower() not in head.lower() else f"{head} ({pat})"
    return head


def _event_name(s: Symptom) -> str:
    """The symptom's name, with an article when it names an event ("a suicide attempt")."""
    return with_article(_symptom_name(s), s.headword)


class Renderer:
    """Renders a graph as pieces. ``levels`` maps piece keys to the level they are written at (default 0)."""

    def __init__(self, graph: CaseGraph, seed: int, levels: Mapping[str, int] | None = None) -> None:
        self.g = graph
        self.seed = seed
        self.levels = dict(levels or {})
        self.rng = random.Random(f"anonpsy-render:{seed}:{graph.case_id}")
        self.voice = Voice(graph.demographics.sex, graph.demographics.age)
        setting = graph.visit_event.setting
        self.event = "admission" if setting in (Setting.inpatient, Setting.residential) else (
            "presentation" if setting == Setting.emergency_department else "visit")
        self._plan: NarrativePlan | None = None
        self._types = graph.node_types()
        self._stated_targets = self._targets()

    # -- infrastructure -------------------------------------------------------------------------------------

    def _start(self, key: str) -> int:
        """Begin a piece: its own RNG (so re-writing one piece changes no other) and its level."""
        self.rng = random.Random(f"anonpsy-render:{self.seed}:{self.g.case_id}:{key}")
        return self.levels.get(key, NARRATIVE)

    def pick(self, options: list[str]) -> str:
        return options[self.rng.randrange(len(options))]

    @property
    def plan(self) -> NarrativePlan:
        if self._plan is None:
            self._plan = plan_narrative(self.g)
        return self._plan

    def _targets(self) -> dict[str, str]:
        """Treatment id → diagnosis label, for treatment targets the source stated about an asserted diagnosis."""
        out: dict[str, str] = {}
        for e in self.g.edges:
            if e.type != RelationType.TREATMENT_OF or not e.evidence_text:
                continue
            if self._types.get(e.target) != NodeType.diagnosis:
                continue
            dx = self.g.node(e.target)
            if isinstance(dx, Diagnosis) and dx.certainty == Certainty.confirmed \
                    and dx.temporality == Temporality.current:
                out.setdefault(e.source, dx_name(dx.label))
        return out

    # -- time phrases ---------------------------------------------------------------------------------------

    def age_at(self, day: int) -> int | None:
        age = self.g.demographics.age
        if age is None:
            return None
        return int(age + day / 365)

    def when(self, iv: Interval | None) -> str:
        """A time phrase for an interval relative to the index encounter."""
        if iv is None:
            return ""
        s, e = iv
        if s == 0:
            return f"on the day of the {self.event}"
        if s > 0:
            return "the day after the " + self.event if s == 1 else f"{amount(s)} after the {self.event}"
        if e >= 1:  # ongoing through the index encounter
            span = amount(-s)
            span = span[4:] if span.startswith("one ") else span  # "the past year", not "one year"
            return self.pick([f"for the past {span}", f"over the past {span}"])
        age_then = self.age_at(s)
        if age_then is not None and -s >= 5 * 365:
            if age_then < 13:
                return self.pick(["in childhood", f"at age {age_then}"])
            if age_then < 18:
                return self.pick(["in adolescence", f"at age {age_then}"])
            return f"at age {age_then}"
        return f"{amount(-s)} ago"

    def lasting(self, iv: Interval | None) -> str:
        if iv is None:
            return ""
        s, e = iv
        if e >= 1 or s >= 0:
            return ""
        return f", lasting about {amount(e - s)}"

    # -- lead -----------------------------------------------------------------------------------------------

    def reason(self) -> str:
        """The reason for the visit: as recorded when it is a short clinical phrase; a patient's own words
        (quotes, first person) are summarised by the current symptoms instead, since quotes identify."""
        raw = strip_end(self.g.visit_event.reason_for_visit or "").strip("\"'“”")
        if raw and not _FIRST_PERSON.search(raw) and not _NOT_A_COMPLAINT.search(raw) and len(raw.split()) <= 12:
            phrase = raw[:1].lower() + raw[1:] if not raw[:2].isupper() else raw
            return f"feeling {phrase}" if _FEELING.match(phrase) else phrase
        # a habit told only in the social history ("Drinks occasionally.") is no reason for the visit
        current = [with_article(s.headword) for s in self.g.symptoms
                   if s.current_symptom and s.assertion == Assertion.present
                   and not (s.assertion_evidence is not None and s.assertion_evidence.section == "social_history")]
        return join(current[:3])

    def lead(self) -> Piece:
        level = self._start("lead")
        d, v, ve = self.g.demographics, self.voice, self.g.visit_event
        # an age of 0 is an infant, never a "0-year-old"
        noun = f"infant {v.noun}" if d.age == 0 else v.noun
        who = " ".join(x for x in [f"{d.age}-year-old" if d.age else "", d.ethnicity or "", noun] if x)
        article = "an" if who[:1].lower() in "aeiou" or who.startswith(("8", "11", "18")) else "a"
        occ = f", {occupation_phrase(d.occupation)}," if d.occupation else ""
        where = SETTING_PHRASE[ve.setting]
        verb = "was seen in" if ve.setting in (Setting.outpatient, Setting.telehealth, Setting.community) else (
            "was admitted to" if ve.setting == Setting.inpatient else
            "presented for" if ve.setting == Setting.unknown else "presented to")
        if ve.setting == Setting.consultation_liaison:
            verb = "was evaluated by"
        tail = ", ".join(x for x in [ARRIVAL_PHRASE[ve.arrival_mode].format(pos=v.pos), self._legal_phrase()] if x)
        sent = f"The patient is {article} {who}{occ} who {verb} {where}" + (f", {tail}" if tail else "")
        dropped: list[str] = []
        nodes: list[str] = []
        reason = self.reason()
        if reason and level < BARE:
            sent += f" because of {reason}"
            nodes = [s.id for s in self.g.symptoms if s.headword in reason]
        elif reason:
            dropped.append("visit_event.reason_for_visit")
        out = [sent + "."]
        # A flag that names a symptom the graph holds with another status than present is told by that
        # symptom's own sentence, never as a concern of the visit.
        other_status = {s.headword.lower() for s in self.g.symptoms if symptom_status(s) != Assertion.present.value}
        flags = []
        for f in ve.safety_flags:
            phrase = SAFETY_PHRASE.get(f.value, f.value)
            if re.sub(r"^an? ", "", phrase) in other_status:
                dropped.append(f"visit_event.safety_flags[{f.value}]")
            else:
                flags.append(phrase)
        if flags and level < BARE:
            out.append(self.pick([f"The presentation involved {join(flags)}.",
                                  f"Safety concerns at the {self.event} included {join(flags)}."]))
        elif flags:
            dropped.append("visit_event.safety_flags")
        out += self._social()
        if ve.visit_episode:
            if level < BARE:
                out.append(cap(strip_end(ve.visit_episode)) + ".")
            else:
                dropped.append("visit_event.visit_episode")
        return Piece("lead", "lead", " ".join(out), tuple(nodes), level, tuple(dropped))

    def _legal_phrase(self) -> str:
        """The visit's legal status when the note states it ("admitted on a voluntary basis"), even where the
        setting and way of arriving imply the same; a status only implied (an outpatient visit is voluntary by
        default) is never told: a note that does not state it is not made to."""
        ve = self.g.visit_event
        return LEGAL_PHRASE[ve.legal_status] if legal_status_stated(ve) else ""

    def _social(self) -> list[str]:
        d, v, ve = self.g.demographics, self.voice, self.g.visit_event
        out: list[str] = []
        if d.family_structure:
            fs = neutral_partner(strip_end(d.family_structure))
            be = v.is_()
            if fs.lower().startswith(("married", "single", "divorced", "widowed", "separated", "engaged")):
                noun = fs.lower().split()[-1] in ("man", "woman", "mother", "father", "parent", "person")
                out.append(f"Socially, {v.subj} {be} {'a ' if noun else ''}{fs}.")
            elif fs.lower().startswith(("lives", "has", "shares", "stays", "resides")):
                out.append(f"Socially, {v.subj} {_agree(fs, v)}.")
            elif fs.lower() in _STATE_WORDS:
                out.append(f"Socially, {v.subj} {be} {fs.lower()}.")
            elif len(fs.split()) == 1:
                art = "an" if fs[:1].lower() in "aeiou" else "a"
                plural = fs.lower().endswith(("children", "parents", "siblings", "kids"))
                out.append(f"Socially, {v.subj} {v.has()} {fs if plural else f'{art} {fs}'}.")
            else:
                out.append(f"Family situation: {fs}.")
        if ve.source_of_information:
            out.append(f"History was obtained from {join([strip_end(s) for s in ve.source_of_information])}.")
        return out

    # -- episodes -------------------------------------------------------------------------------------------

    def frame_sentences(self, subject: str, frame: STEB) -> list[str]:
        """Sentences for one STEB frame; ``subject`` names what arose ("The insomnia", "This")."""
        v = self.voice
        out: list[str] = []
        if frame.situation:
            sit = _inline(strip_end(frame.situation))
            if sit.lower().startswith(_PREPOSITIONS):
                out.append(f"{subject} arose {sit}.")
            else:
                out.append(f"{subject} arose in the context of {sit}.")
        if frame.thought:
            th = strip_end(frame.thought)
            if _THOUGHT_VERB_RE.match(th):
                out.append(f"{cap(v.subj)} {th}.")
            else:
                verb = self.pick(["believed", "was convinced", "thought"])
                out.append(f"{cap(v.subj)} {verb} that {th}.")
        if frame.emotion:
            em = strip_end(frame.emotion)
            if em.lower().startswith(("felt", "was", "became", "grew", "feels", "is ")):
                out.append(f"{cap(v.subj)} {em}.")
            else:
                out.append(f"{cap(v.subj)} felt {em}.")
        if frame.behavior:
            be = strip_end(frame.behavior)
            first = be.split(" ", 1)[0].lower()
            past = first.endswith("ed") or first in _PAST_VERBS
            present = _PRESENT_VERB.match(first) is not None
            if past or present or first.endswith("ing"):
                # a verb that opened a subjectless sentence of the source ("Drinks occasionally.")
                be = _lower_first(be)
            if past:
                lead = self.pick(["In response, ", "As a result, ", ""])
                out.append(f"{lead}{v.subj} {be}." if lead else f"{cap(v.subj)} {be}.")
            elif present:
                out.append(f"{cap(v.subj)} {be if not v.plural else _plural_verb(be)}.")
            elif first.endswith("ing"):
                out.append(f"{cap(v.subj)} {v.was()} {be}.")
            else:
                out.append(f"This was accompanied by {be}.")
        return [cap(x) for x in out]

    def _frames(self, b: Block, level: int, dropped: list[str]) -> list[str]:
        """The block's STEB frames, each once; a frame names its symptom only when every symptom of the block is
        present (then no other status can be misread from it); at level 2 frames are left out (recorded)."""
        frames: dict[tuple[str | None, ...], tuple[STEB, list[str]]] = {}
        for s in b.symptoms:
            for i, frame in enumerate(s.contexts):
                if level >= BARE:
                    dropped.append(f"symptoms[{s.id}].contexts[{i}]")
                    continue
                key = (frame.situation, frame.thought, frame.emotion, frame.behavior)
                frames.setdefault(key, (frame, []))[1].append(s.headword)
        statuses = {symptom_status(s) for s in b.symptoms}
        named = level == NARRATIVE and statuses == {Assertion.present.value}
        # Frames of what the patient had in the past are told as past: what a frame describes (a behaviour, a
        # feeling) is otherwise read as present.
        then = "At that time, " if statuses == {Assertion.historical.value} else ""
        out: list[str] = []
        for frame, owners in frames.values():
            names = list(dict.fromkeys(owners))
            if not named:
                subject = "This"
            elif len(names) == 1:
                subject = f"The {names[0]}"
            else:
                subject = "These symptoms" if len(names) == len(b.symptoms) else f"The {join(names)}"
            out += [then + _lower_first(x) if then and not _PAST_CUE.search(x) else x
                    for x in self.frame_sentences(subject, frame)]
        return out

    def episode(self, b: Block, key: str) -> Piece:
        level = self._start(key)
        v = self.voice
        when = self.when(b.interval) if level < BARE else ""
        status = {s.id: symptom_status(s) for s in b.symptoms}
        present = [s for s in b.symptoms if status[s.id] == Assertion.present.value]
        possible = [s for s in b.symptoms if status[s.id] == Assertion.possible.value]
        past = [s for s in b.symptoms if status[s.id] == Assertion.historical.value]
        sent: list[str] = []
        dropped: list[str] = []
        if level >= BARE and b.interval is not None:
            dropped.append(f"time:{key}")
        # A time phrase that ends before the visit is a past cue: beside a possible symptom it would read as
        # "had it", so it gets a sentence of its own.
        past_time = bool(when) and b.interval is not None and b.interval[1] < 1
        if level >= PLAIN:
            for assertion, group in ((Assertion.present, present), (Assertion.historical, past),
                                     (Assertion.possible, possible)):
                names = list(dict.fromkeys(s.headword for s in group))
                for x in plain_symptoms(assertion, names, v):
                    if when and not (past_time and assertion == Assertion.possible):
                        x = lead_in(when, _lower_first(x))
                    sent.append(x)
            if possible and past_time:
                sent.append(f"This was {when}.")
        else:
            states = [s for s in present if not is_event(s.headword)]
            events = [s for s in present if is_event(s.headword)]
            if states:
                heads = join(list(dict.fromkeys(_symptom_name(s) for s in states)))
                sent.append(self._present_opener(b, heads, when))
            if events:
                sent.append(self._events_sentence(b, join(list(dict.fromkeys(_event_name(s) for s in events))),
                                                  when))
            for chunk in scoped_lists(list(dict.fromkeys(_event_name(s) for s in past))):
                past_heads = join(chunk)
                if when and b.interval is not None and b.interval[1] < 1:
                    # how long it lasted in a sentence of its own: a duration beside the symptom is read as
                    # its time, and "lasting a year" does not say when
                    sent.append(f"Previously, {when}, {v.subj} had {past_heads}.")
                    span = self.lasting(b.interval)
                    if span:
                        sent.append(f"This lasted {span.removeprefix(', lasting ')}.")
                else:
                    sent.append(self.pick([f"Previously, {v.subj} had {past_heads}.",
                                           f"{cap(v.subj)} had {past_heads} in the past."]))
            for chunk in scoped_lists([f"possible {_symptom_name(s)}" for s in possible], 2 * CUE_SCOPE):
                # every item carries its own "possible"; the chunk only keeps the sentence short
                was = "were" if len(chunk) > 1 else be(chunk[0])
                sent.append(lead_in("" if past_time else when, f"{join(chunk)} {was} also noted") + ".")
            if possible and past_time:
                sent.append(f"This was {when}.")
        sent += self._frames(b, level, dropped)
        nodes = [s.id for s in b.symptoms]
        dx = b.diagnosis
        if dx is not None and dx.certainty == Certainty.confirmed:
            first = self.plan.first_dx_block.get(dx.id) == self.plan.blocks.index(b)
            if first:
                sent.append(plain_diagnosis(dx, v) if level >= PLAIN else self.dx_sentence(dx, linked=True))
                nodes.append(dx.id)
            elif dx.temporality == Temporality.current and level == NARRATIVE and present:
                sent.append(self.pick([f"These symptoms were again attributed to {dx_name(dx.label)}.",
                                       f"This was understood as part of the same {dx_name(dx.label)}."]))
        return Piece(key, "body", " ".join(sent), tuple(nodes), level, tuple(dropped))

    def _events_sentence(self, b: Block, heads: str, when: str) -> str:
        """Events of the episode (a suicide attempt, a hospitalization) told as things that happened: "In the
        past two months, he had a suicide attempt", never as a state experienced over that time."""
        v = self.voice
        iv = b.interval
        if iv is not None and when and iv[0] < 0 and iv[1] >= 1:
            when = re.sub(r"^(?:for|over) the past\b", "in the past", when)
        return lead_in(when, f"{v.subj} had {heads}") + "."

    def _present_opener(self, b: Block, heads: str, when: str) -> str:
        """Symptoms present at the visit: since when, without any past-time cue."""
        v = self.voice
        iv = b.interval
        if iv is None or not when:
            return self.pick([f"At the {self.event}, {v.subj} {v.was()} noted to have {heads}.",
                              f"{cap(v.subj)} also presented with {heads}.",
                              f"{cap(v.subj)} reported {heads}."])
        if iv[0] >= 0:
            return lead_in(when, f"{v.subj} reported {heads}") + "."
        if iv[1] >= 1:
            return self.pick([lead_in(when, f"{v.subj} {v.has()} experienced {heads}"),
                              f"{cap(v.subj)} {v.has()} had {heads} {when}",
                              lead_in(when, f"{v.subj} {v.has()} reported {heads}")]).strip() + "."
        return f"{cap(v.subj)} {v.has()} had {heads} for {amount(-iv[0])}."

    # -- diagnoses ------------------------------------------------------------------------------------------

    def dx_sentence(self, dx: Diagnosis, *, linked: bool = False) -> str:
        """One diagnosis in a narrative sentence that carries its certainty and temporality."""
        name = dx_full_name(dx)
        v = self.voice
        if no_history(dx):
            return f"There was no history of {name}."
        if dx.certainty == Certainty.ruled_out:
            return self.pick([f"{cap(name)} was ruled out.",
                              f"A diagnosis of {name} was considered unlikely.",
                              f"The assessment did not support a diagnosis of {name}."])
        if dx.temporality == Temporality.past:
            if dx.certainty == Certainty.confirmed:
                return self.pick([f"{cap(v.subj)} had {name} in the past.", f"Previously, {v.subj} had {name}."])
            return f"{cap(v.subj)} may have had {name} in the past."
        if dx.certainty == Certainty.rule_out:
            return self.pick([f"Further evaluation is needed to rule out {name}.",
                              f"Further assessment was recommended to rule out {name}."])
        if dx.certainty == Certainty.provisional:
            return self.pick([f"A possible diagnosis of {name} was considered.",
                              f"A possible {name} could not be excluded.",
                              f"{cap(name)} is possible."])
        options = [f"{cap(v.subj)} {v.was()} diagnosed with {name}.", f"A diagnosis of {name} was made."]
        if linked:
            options += [f"These symptoms were consistent with {name}.",
                        f"The clinical picture met criteria for {name}."]
        return self.pick(options)

    def diagnosis(self, dx: Diagnosis) -> Piece:
        key = f"dx:{dx.id}"
        level = self._start(key)
        text = plain_diagnosis(dx, self.voice) if level >= PLAIN else self.dx_sentence(dx)
        return Piece(key, "assessment", text, (dx.id,), level)

    # -- treatments -----------------------------------------------------------------------------------------

    def regimen(self, b: Block, key: str) -> Piece:
        level = self._start(key)
        v = self.voice
        when = self.when(b.interval) if level < BARE else ""
        out: list[str] = []
        dropped: list[str] = []
        if level >= PLAIN:
            for t in b.treatments:
                out.append(plain_treatment(t, v))
                if t.outcome:
                    dropped.append(f"treatments[{t.id}].outcome")
            return Piece(key, "body", " ".join(out), tuple(t.id for t in b.treatments), level, tuple(dropped))
        by_status: dict[TreatmentStatus, list[Treatment]] = {}
        for t in b.treatments:
            by_status.setdefault(t.status, []).append(t)
        for status in (TreatmentStatus.current, TreatmentStatus.prn, TreatmentStatus.past, TreatmentStatus.planned,
                       TreatmentStatus.refused):
            ts = by_status.get(status, [])
            simple = [t for t in ts if not t.outcome]
            groups: dict[tuple[str | None, bool, str | None], list[Treatment]] = {}
            for t in simple:
                group_key = (self._stated_targets.get(t.id), t.type == TreatmentType.medication, t.discontinued_reason)
                groups.setdefault(group_key, []).append(t)
            for (target, med, _), group in groups.items():
                out += self._treatment_sentences(status, group, target, med, when, b.interval)
            for t in ts:
                if t in simple:
                    continue
                out += self._treatment_sentences(status, [t], self._stated_targets.get(t.id),
                                                 t.type == TreatmentType.medication, when, b.interval)
                if t.outcome:
                    out.append(f"The outcome was {strip_end(t.outcome)}.")
        return Piece(key, "body", " ".join(out), tuple(t.id for t in b.treatments), level, tuple(dropped))

    def _treatment_sentences(self, status: TreatmentStatus, ts: list[Treatment], target: str | None, med: bool,
                             when: str, iv: Interval | None) -> list[str]:
        v = self.voice
        tgt = f" for {target}" if target else ""
        phrases = [treatment_phrase(t) for t in ts]
        out: list[str] = []
        if status == TreatmentStatus.current:
            ordered = [t for t in ts if med and ordered_now(t)]
            if ordered:
                # "we will start X": the order is given at this visit, so the drug is started now
                out.append(f"{cap(v.subj)} {v.was()} started on {join([treatment_phrase(t) for t in ordered])}{tgt} "
                           "at this visit.")
                ts = [t for t in ts if t not in ordered]
                if not ts:
                    return out
                phrases = [treatment_phrase(t) for t in ts]
            ongoing = iv is not None and iv[1] >= 1 and iv[0] < 0 and bool(when)
            regimen = join(phrases)
            been = "have been" if v.plural else "has been"
            if not med:
                return [lead_in(when, f"{v.subj} {'has been receiving' if ongoing else 'received'} {regimen}{tgt}.")]
            if ongoing:
                out.append(self.pick([lead_in(when, f"{v.subj} {been} taking {regimen}{tgt}"),
                                      f"{cap(v.subj)} {been} treated with {regimen}{tgt} {when}"]).strip() + ".")
            elif not when or iv is None:
                out.append(self.pick([f"{cap(v.subj)} {v.was()} taking {regimen}{tgt}.",
                                      f"Current treatment included {regimen}{tgt}.",
                                      f"{cap(v.subj)} {v.was()} treated with {regimen}{tgt}."]))
            elif iv[0] >= 0:
                out.append(self.pick([lead_in(when, f"{v.subj} {v.was()} started on {regimen}{tgt}"),
                                      lead_in(when, f"{v.subj} began taking {regimen}{tgt}")]) + ".")
            else:  # started before the visit: said without a past-time cue, since it is taken now
                out.append(f"{cap(v.subj)} {been} taking {regimen}{tgt} for {amount(-iv[0])}.")
            return out
        if status == TreatmentStatus.prn:
            verb = v.verb("takes") if med else v.verb("receives")
            once = [treatment_phrase(t) for t in ts if one_time(t)]
            needed = [treatment_phrase(t) for t in ts if not one_time(t)]
            if once:
                out.append(f"{cap(v.subj)} {v.was()} given {join(once)}{tgt} at this visit.")
            if needed:
                out.append(f"{cap(v.subj)} {verb} {join(needed)}{tgt}.")
            return out
        if status == TreatmentStatus.past:
            reason = ts[0].discontinued_reason  # the group shares it
            took = "took" if med else "received"
            for chunk in scoped_lists(phrases):
                lst = join(chunk)
                why = f", which {'were' if len(chunk) > 1 else 'was'} stopped {because(reason)}" if reason else ""
                if when and iv is not None and iv[1] < 1:
                    out.append(f"Previously, {when}, {v.subj} {took} {lst}{tgt}{why}.")
                else:
                    had = "had previously taken" if med else "had previously received"
                    out.append(self.pick([f"{cap(v.subj)} {had} {lst}{tgt}{why}.",
                                          f"{cap(v.subj)} previously {took} {lst}{tgt}{why}."]))
            return out
        if status == TreatmentStatus.planned:
            for chunk in scoped_lists(phrases):
                lst = join(chunk)
                out.append(self.pick([f"The plan is to start {lst}{tgt}.", f"{cap(v.subj)} will start {lst}{tgt}."]))
            return out
        for chunk in scoped_lists(phrases):  # refused
            out.append(self.pick([f"{cap(v.subj)} declined {join(chunk)}.",
                                  f"{cap(v.subj)} refused {join(chunk)}."]))
        return out

    # -- other blocks ---------------------------------------------------------------------------------------

    def name_of(self, node_id: str) -> str:
        node = self.g.node(node_id)
        t = self._types[node_id]
        if t == NodeType.diagnosis:
            return clinical_case(node.label)  # type: ignore[union-attr]
        if t == NodeType.symptom:
            return node.headword  # type: ignore[union-attr]
        if t == NodeType.treatment:
            return node.name  # type: ignore[union-attr]
        if t == NodeType.past_history:
            return node.condition  # type: ignore[union-attr]
        return "the index episode"

    def _current_name(self, node_id: str) -> str | None:
        """A node named in a causal sentence, or None when it is not a current fact (excluded, possible, past,
        planned, denied, …): a causal sentence carries no status cue, so it names only what is true now."""
        from anonpsy.generate.facts import dx_key

        node = self.g.node(node_id)
        if isinstance(node, Diagnosis):
            current = node.certainty == Certainty.confirmed and node.temporality == Temporality.current
            return dx_name(node.label) if current else None
        if isinstance(node, Symptom):
            return node.headword if symptom_status(node) == Assertion.present.value else None
        if isinstance(node, Treatment):
            return node.name if node.status in (TreatmentStatus.current, TreatmentStatus.prn) else None
        if isinstance(node, PastHistory):
            if dx_key(node.condition).startswith("dsm:") or node.status.value in ("remitted", "resolved", "denied"):
                return None  # a past diagnosis, or something that has resolved
            return _condition(node)
        return None

    def induces(self, b: Block, key: str) -> Piece:
        level = self._start(key)
        nodes = (b.source_id or "", *b.target_ids)
        src = self._current_name(b.source_id or "")
        targets = [self._current_name(t) for t in b.target_ids]
        if src is None or any(t is None for t in targets) or level >= BARE:
            return Piece(key, "body", "", (), level, tuple(f"edges[INDUCES {b.source_id}->{t}]" for t in b.target_ids))
        names = join([t for t in targets if t is not None])
        was = "were" if len(b.target_ids) > 1 else "was"
        if level >= PLAIN:
            text = f"The {names} {was} attributed to {src}."
        else:
            text = self.pick([f"The {names} {was} attributed to {src}.",
                              f"The {names} developed as a consequence of {src}."])
        return Piece(key, "body", text, nodes, level)

    def history(self, b: Block, key: str) -> Piece:
        level = self._start(key)
        ph = b.history
        assert ph is not None
        when = self.when(b.interval) if level < BARE else ""
        sentence = self._history_sentence(ph)
        v = self.voice
        if when and b.interval is not None and sentence.startswith(f"{cap(v.subj)} {v.has()} "):
            # had now: since when, in the present perfect ("For the past year, she has had chronic asthma.")
            if b.interval[1] >= 1:
                sentence = lead_in(when, f"{v.subj} {v.has()} had " + sentence.split(f" {v.has()} ", 1)[1])
            return Piece(key, "body", sentence, (ph.id,), level)
        return Piece(key, "body", lead_in(when, _lower_first(sentence)), (ph.id,), level)

    def _history_sentence(self, p: PastHistory) -> str:
        return plain_history(p, self.voice)

    def closing_history(self, items: list[PastHistory]) -> list[Piece]:
        """Past history not told in the body: a diagnosis named in it is a past diagnosis (its own sentence);
        other conditions (medical comorbidities, events) in one list."""
        from anonpsy.generate.facts import dx_key

        out: list[Piece] = []
        other: list[PastHistory] = []
        denied = [p for p in items if p.status == HistoryStatus.denied]
        if denied:
            key = "history:denied"
            level = self._start(key)
            by_kind: dict[str, list[PastHistory]] = {}
            for p in denied:
                by_kind.setdefault(denial_kind(p), []).append(p)
            text = " ".join(denied_history(ps, [_condition(p) for p in ps], self.voice) for ps in by_kind.values())
            out.append(Piece(key, "closing", text, tuple(p.id for p in denied), level))
        items = [p for p in items if p.status != HistoryStatus.denied]
        for p in items:
            if dx_key(p.condition).startswith("dsm:"):
                key = f"history:{p.id}"
                self._start(key)
                out.append(Piece(key, "closing", self._history_sentence(p), (p.id,), self.levels.get(key, 0)))
            else:
                other.append(p)
        # a condition the patient has now that the presentation found (an active event or bout: a subdural
        # hematoma the admission scan found) or that the assessment or the diagnosis list names is no past medical
        # history: told as had now, in its own sentence
        now = [p for p in other if _current_problem(p)]
        other = [p for p in other if not _current_problem(p)]
        if now:
            key = "history:now"
            level = self._start(key)
            text = (" ".join(self._history_sentence(p) for p in now) if level >= PLAIN else
                    f"Current medical problems include {join([_condition(p) for p in now])}.")
            out.append(Piece(key, "closing", text, tuple(p.id for p in now), level))
        if other:
            key = "history"
            level = self._start(key)
            v = self.voice
            if level >= PLAIN:
                text = " ".join(self._history_sentence(p) for p in other)
            else:
                words = [self._history_item(p) for p in other]
                text = self.pick([f"Past medical history is notable for {join(words)}.",
                                  f"{cap(v.pos)} past medical history includes {join(words)}."])
            out.append(Piece(key, "closing", text, tuple(p.id for p in other), level))
        return out

    def _history_item(self, p: PastHistory) -> str:
        """A condition of the history list with its course only when the note told it (remission, resolution):
        no "chronic" or "active" the note may not have written."""
        tail = {"remitted": " (now in remission)", "resolved": " (since resolved)"}.get(p.status.value, "")
        return f"{_condition(p)}{tail}"

    def family(self) -> list[Piece]:
        out: list[Piece] = []
        for i, f in enumerate(self.g.family_history):
            key = f"family:{i}"
            level = self._start(key)
            if level >= PLAIN:
                text = plain_family(f, self.voice)
            else:
                options = [f"Family history is significant for {family_item(f, self.voice)}.",
                           f"{cap(self.voice.pos)} family history includes {family_item(f, self.voice)}."]
                if f.certainty == FamilyCertainty.possible and _KIN.search(f.member):
                    options.append(f"{cap(self.voice.pos)} {strip_end(f.member)} may have had "
                                   f"{dx_name(strip_end(f.condition))}.")
                text = self.pick(options)
            out.append(Piece(key, "closing", text, (f"fh_{i}",), level))
        return out

    def denied(self) -> Piece | None:
        v = self.voice
        items = [s for s in self.g.symptoms if s.assertion == Assertion.absent]
        if not items:
            return None
        level = self._start("denied")
        heads = list(dict.fromkeys(s.headword for s in items))
        sent = []
        # A few items per sentence, so that no reader loses the negation down a long list.
        for i in range(0, len(heads), DENIED_PER_SENTENCE):
            also = " also" if i else ""
            sent.append(f"{cap(v.subj)}{also} denied {join(heads[i:i + DENIED_PER_SENTENCE])}.")
        return Piece("denied", "closing", " ".join(sent), tuple(s.id for s in items), level)

    def conditional(self) -> Piece | None:
        v = self.voice
        items = [s for s in self.g.symptoms if s.assertion == Assertion.hypothetical]
        if not items:
            return None
        level = self._start("conditional")
        heads = list(dict.fromkeys(s.headword for s in items))
        sent = [f"{cap(v.subj)} {v.was()} advised to seek help if {' or '.join(chunk)} occurred."
                for chunk in scoped_lists(heads)]
        return Piece("conditional", "closing", " ".join(sent), tuple(s.id for s in items), level)

    def tests(self) -> Piece | None:
        values = self.g.test_results.values
        if not values:
            return None
        level = self._start("tests")
        sent: list[str] = []
        # the vital-sign pools' bands are adult bands: a child's vital signs are told without their adult meaning
        age = self.g.demographics.age
        adult = age is None or age >= ADULT_AGE
        for heading, kinds in TEST_GROUPS:
            group = [x for x in values if x.kind in kinds]
            if not group:
                continue
            if level >= PLAIN:
                sent.append(f"{heading}: " + " ".join(value_sentence(x, adult or x.kind != TestKind.vital)
                                                      for x in group))
            else:
                told = "; ".join(value_text(x, adult or x.kind != TestKind.vital) for x in group)
                sent.append(f"{heading}: {told}.")
        return Piece("tests", "findings", " ".join(sent), (), level)

    def mental_status(self) -> Piece | None:
        ms = self.g.mental_status
        level = self._start("mse")
        if level >= PLAIN:
            parts = mental_status_parts(ms)
            if not parts:
                return None
            text = "On mental status examination: " + ". ".join(cap(p) for p in parts) + "."
        else:
            mse = mental_status_text(ms)
            if not mse:
                return None
            text = f"On mental status examination: {mse}."
        return Piece("mse", "findings", text, (), level)

    def disposition(self) -> Piece | None:
        pathway = self.g.visit_event.pathway
        if not pathway:
            return None
        level = self._start("disposition")
        if level >= BARE:
            return Piece("disposition", "findings", "", (), level, ("visit_event.pathway",))
        return Piece("disposition", "findings", f"Disposition: {strip_end(pathway)}.", (), level)

    # -- whole text -----------------------------------------------------------------------------------------

    def block_key(self, b: Block) -> str:
        return f"{b.kind}:{b.first_id()}"

    def pieces(self) -> list[Piece]:
        """Every piece of the text, in order."""
        plan = self.plan
        out = [self.lead()]
        stated: set[str] = set()  # diagnoses stated, with their status, in an episode
        for b in plan.blocks:
            key = self.block_key(b)
            if b.kind == "episode":
                piece = self.episode(b, key)
            elif b.kind == "regimen":
                piece = self.regimen(b, key)
            elif b.kind == "induces":
                piece = self.induces(b, key)
            else:
                piece = self.history(b, key)
            if b.kind == "episode":
                stated.update(piece.nodes)
            out.append(piece)
        out += [self.diagnosis(d) for d in self.g.diagnoses if d.id not in stated]
        out += self.closing_history(plan.closing_history)
        out += self.family()
        for p in (self.denied(), self.conditional(), self.tests(), self.mental_status(), self.disposition()):
            if p is not None:
                out.append(p)
        return out

    def render(self) -> str:
        return assemble(self.pieces())


def _condition(p: PastHistory) -> str:
    """A past-history condition in running text: a DSM diagnosis by its name in running-text case."""
    from anonpsy.generate.facts import dx_key

    cond = strip_end(p.condition)
    return dx_name(cond) if dx_key(cond).startswith("dsm:") else cond


def _lower_first(s: str) -> str:
    """A sentence as a clause after a lead-in: first letter lower case unless it starts an acronym or name."""
    first = s.split(" ", 1)[0].strip(",.;:")
    if len(first) > 1 and first.isupper():
        return s
    return s[:1].lower() + s[1:]


def assemble(pieces: Iterable[Piece]) -> str:
    """The text of the pieces: the lead, body paragraphs of a few blocks each, the assessment, the closing and
    the findings, one paragraph each."""
    groups: dict[str, list[str]] = {}
    for p in pieces:
        if p.text.strip():
            groups.setdefault(p.group, []).append(p.text.strip())
    paras: list[str] = list(groups.get("lead", []))
    body = groups.get("body", [])
    paras += [" ".join(body[i:i + BLOCKS_PER_PARAGRAPH]) for i in range(0, len(body), BLOCKS_PER_PARAGRAPH)]
    for g in ("assessment", "closing", "findings"):
        if groups.get(g):
            paras.append(" ".join(groups[g]))
    return tidy("\n\n".join(p for p in paras if p.strip()))


#: Common misspellings of clinical words that a phrase copied from a note may carry ("alcohol withdrawal and
#: dependance"): the output spells them correctly. Whole words, any case; the first letter's case is kept.
_SPELLING: dict[str, str] = {
    "dependance": "dependence", "dependancy": "dependency", "dependancies": "dependencies",
    "alchohol": "alcohol", "alcohal": "alcohol", "seperation": "separation", "seperated": "separated",
    "seperate": "separate", "halucination": "hallucination", "halucinations": "hallucinations",
    "hallucinaton": "hallucination", "suicidial": "suicidal", "concious": "conscious",
    "unconcious": "unconscious", "occured": "occurred", "recieved": "received", "recieve": "receive",
    "recieves": "receives", "recieving": "receiving", "schizophrenai": "schizophrenia",
    "perscribed": "prescribed", "perscription": "prescription", "medicaiton": "medication",
    "medicaitons": "medications", "anxeity": "anxiety", "depresion": "depression",
}
_SPELLING_RE = re.compile(r"\b(?:" + "|".join(_SPELLING) + r")\b", re.I)
#: The same words searched on the lower-cased text: most texts hold none, and the substitution is then skipped.
_SPELLING_SEARCH = Caseless(_SPELLING_RE)


def _respell(m: re.Match[str]) -> str:
    word = m.group(0)
    right = _SPELLING[word.lower()]
    return right.upper() if word.isupper() and len(word) > 1 else (
        right[:1].upper() + right[1:] if word[:1].isupper() else right)


_BLANKS = re.compile(r"[ \t]+")
_SPACE_BEFORE_STOP = re.compile(r" ([,.;])")
_DOTS = re.compile(r"\.\.+")
_DOUBLE_COMMA = re.compile(r",\s*,")


def tidy(text: str) -> str:
    if _SPELLING_SEARCH.search(text) is not None:
        text = _SPELLING_RE.sub(_respell, text)
    text = _BLANKS.sub(" ", text)
    text = _SPACE_BEFORE_STOP.sub(r"\1", text)
    text = _DOTS.sub(".", text)
    text = _DOUBLE_COMMA.sub(",", text)
    return text.strip() + "\n"


@lru_cache(maxsize=4096)
def _tidied_piece(text: str) -> str:
    """A piece's text as the tidied whole holds it ('' for an empty piece); remembered, since every re-writing
    of a text locates again the pieces it left as they were."""
    return tidy(text).strip() if text.strip() else ""


def piece_spans(pieces: list[Piece]) -> tuple[str, list[tuple[int, int]]]:
    """The assembled text and each piece's character span in it ((-1, -1) for an empty piece).

    Pieces are located in order in the tidied text; tidying only touches spacing and punctuation inside a
    piece, so each piece's tidied text is found verbatim.
    """
    text = assemble(pieces)
    spans: list[tuple[int, int]] = []
    order = sorted(range(len(pieces)), key=lambda i: (_GROUP_ORDER.get(pieces[i].group, 9), i))
    pos = 0
    found: dict[int, tuple[int, int]] = {}
    for i in order:
        t = _tidied_piece(pieces[i].text)
        if not t:
            found[i] = (-1, -1)
            continue
        at = text.find(t, pos)
        if at < 0:
            at = text.find(t)
        found[i] = (at, at + len(t)) if at >= 0 else (-1, -1)
        if at >= 0:
            pos = at + len(t)
    spans = [found[i] for i in range(len(pieces))]
    return text, spans


_GROUP_ORDER = {"lead": 0, "body": 1, "assessment": 2, "closing": 3, "findings": 4}


def render(graph: CaseGraph, *, seed: int = 0, levels: Mapping[str, int] | None = None) -> str:
    """Render a case graph as a clinical case history (deterministic given the seed), every piece narrative
    unless ``levels`` says otherwise."""
    return Renderer(graph, seed, levels).render()

