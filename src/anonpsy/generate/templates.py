"""Deterministic template generation (the ``rules`` backend of D).

Phrasings are chosen by a seeded RNG so outputs do not all read alike; the same graph and seed always give the same
text. Pronouns and kinship follow the graph's (perturbed) sex.
"""

from __future__ import annotations

import random
import re

from anonpsy.generate.findings import mental_status_text, results_text
from anonpsy.generate.plan import Block, NarrativePlan, plan_narrative
from anonpsy.graph import (
    STEB,
    ArrivalMode,
    Assertion,
    CaseGraph,
    Certainty,
    Diagnosis,
    FamilyCertainty,
    LegalStatus,
    NodeType,
    PastHistory,
    Setting,
    Sex,
    Symptom,
    Temporality,
    Treatment,
    TreatmentStatus,
)
from anonpsy.temporal import Interval

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]

SETTING_PHRASE = {
    Setting.emergency_department: "the emergency department",
    Setting.inpatient: "the inpatient psychiatric unit",
    Setting.outpatient: "the outpatient clinic",
    Setting.consultation_liaison: "the consultation-liaison psychiatry service",
    Setting.telehealth: "a telehealth appointment",
    Setting.community: "the community mental health team",
    Setting.residential: "a residential treatment program",
    Setting.forensic: "a forensic psychiatric evaluation",
    Setting.unknown: "psychiatric evaluation",
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


def _plural_verb(phrase: str) -> str:
    first, _, rest = phrase.partition(" ")
    base = {"has": "have", "does": "do", "is": "are", "goes": "go"}.get(first)
    if base is None:
        base = first[:-2] if first.endswith(("shes", "ches", "sses", "xes")) else (
            first[:-3] + "y" if first.endswith("ies") else first[:-1])
    return f"{base} {rest}".strip()


_PREPOSITIONS = ("after", "when", "while", "during", "following", "at ", "in ", "on ", "before", "since", "as ",
                 "whenever", "once", "amid", "because")
_THOUGHT_VERB_RE = re.compile(
    r"^(?:believes?|believed|thinks?|thought|worrie[sd]|worry|fears?|feared|(?:is|was) convinced|feels? that|"
    r"felt that|(?:is|was) afraid|expects?|expected|assumed?|wondered|insists?|insisted|reports?|reported|"
    r"describes?|described|states?|stated|says|said)\b", re.I)


_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our)\b|[\"“”]")


class Voice:
    """Pronouns and nouns for the patient."""

    def __init__(self, sex: Sex, age: int | None) -> None:
        self.sex = sex
        fem, masc = sex == Sex.female, sex == Sex.male
        self.subj = "she" if fem else "he" if masc else "they"
        self.obj = "her" if fem else "him" if masc else "them"
        self.pos = "her" if fem else "his" if masc else "their"
        self.plural = not (fem or masc)
        if age is not None and age < 13:
            self.noun = "girl" if fem else "boy" if masc else "child"
        elif age is not None and age < 18:
            self.noun = "adolescent girl" if fem else "adolescent boy" if masc else "adolescent"
        else:
            self.noun = "woman" if fem else "man" if masc else "person"

    def was(self) -> str:
        return "were" if self.plural else "was"

    def has(self) -> str:
        return "have" if self.plural else "has"


_EPONYM = re.compile(r"^[A-Z][a-z]+(?:'s|s')$|^(?:Lewy|Korsakoff|Wernicke|Asperger|Tourette|Down|Cushing|Graves)$")


def clinical_case(label: str) -> str:
    """DSM-style Title Case to running-text case: 'Alcohol Use Disorder' → 'alcohol use disorder'; acronyms and
    eponyms (ADHD, Tourette's, Lewy) keep their capitals."""
    words = label.split(" ")
    out = []
    for w in words:
        core = w.strip("(),")
        if core[:1].isupper() and core[1:].islower() and not _EPONYM.match(core):
            w = w.replace(core, core.lower(), 1)
        out.append(w)
    return " ".join(out)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _num(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def _amount(days: int) -> str:
    """Human amount of time for a positive number of days, in the coarsest sensible unit."""
    days = abs(days)
    if days >= 365:
        n, unit = round(days / 365), "year"
    elif days >= 60:
        n, unit = round(days / 30), "month"
    elif days >= 14:
        n, unit = round(days / 7), "week"
    else:
        n, unit = days, "day"
    n = max(1, n)
    return f"{_num(n)} {unit}{'s' if n != 1 else ''}"


def _join(items: list[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _lead_in(when: str, clause: str) -> str:
    """'When, clause' or just 'Clause' when there is no time phrase."""
    return f"{_cap(when)}, {clause}" if when else _cap(clause)


def _strip_end(s: str) -> str:
    return s.strip().rstrip(".;,")


class Renderer:
    def __init__(self, graph: CaseGraph, seed: int) -> None:
        self.g = graph
        self.rng = random.Random(f"anonpsy-render:{seed}:{graph.case_id}")
        self.voice = Voice(graph.demographics.sex, graph.demographics.age)
        setting = graph.visit_event.setting
        self.event = "admission" if setting in (Setting.inpatient, Setting.residential) else (
            "presentation" if setting == Setting.emergency_department else "visit")
        self.dx_named: set[str] = set()

    def pick(self, options: list[str]) -> str:
        return options[self.rng.randrange(len(options))]

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
            return "the day after " + self.event if s == 1 else f"{_amount(s)} after the {self.event}"
        if e >= 1:  # ongoing through the index encounter
            amount = _amount(-s)
            amount = amount[4:] if amount.startswith("one ") else amount  # "the past year", not "one year"
            return self.pick([f"for the past {amount}", f"over the past {amount}"])
        age_then = self.age_at(s)
        if age_then is not None and -s >= 5 * 365:
            if age_then < 13:
                return self.pick(["in childhood", f"at age {age_then}"])
            if age_then < 18:
                return self.pick(["in adolescence", f"at age {age_then}"])
            return f"at age {age_then}"
        return f"{_amount(-s)} before the {self.event}"

    def lasting(self, iv: Interval | None) -> str:
        if iv is None:
            return ""
        s, e = iv
        if e >= 1 or s >= 0:
            return ""
        return f", lasting about {_amount(e - s)}"

    # -- sections -------------------------------------------------------------------------------------------

    def reason(self) -> str:
        """The reason for the visit: as recorded when it is a clinical phrase; a patient's own words (quotes,
        first person) are summarised by the current symptoms instead, since quotes identify."""
        raw = _strip_end(self.g.visit_event.reason_for_visit or "").strip("\"'“”")
        if raw and not _FIRST_PERSON.search(raw) and len(raw.split()) <= 12:
            return raw[:1].lower() + raw[1:] if not raw[:2].isupper() else raw
        current = [s.headword for s in self.g.symptoms if s.current_symptom][:3]
        return _join(current)

    def lead(self) -> str:
        d, v, ve = self.g.demographics, self.voice, self.g.visit_event
        art_age = ""
        if d.age is not None:
            art_age = f"{d.age}-year-old"
        who = " ".join(x for x in [art_age, d.ethnicity or "", v.noun] if x)
        article = "an" if who[:1].lower() in "aeiou" or who.startswith(("8", "11", "18")) else "a"
        occ = f", {'an' if d.occupation and d.occupation[0].lower() in 'aeiou' else 'a'} {d.occupation}," \
            if d.occupation else ""
        where = SETTING_PHRASE[ve.setting]
        verb = "was seen in" if ve.setting in (Setting.outpatient, Setting.telehealth, Setting.community) else (
            "was admitted to" if ve.setting == Setting.inpatient else "presented to")
        if ve.setting == Setting.consultation_liaison:
            verb = "was evaluated by"
        how = ARRIVAL_PHRASE[ve.arrival_mode].format(pos=v.pos)
        legal = LEGAL_PHRASE[ve.legal_status]
        parts = [f"The patient is {article} {who}{occ} who {verb} {where}"]
        tail = ", ".join(x for x in [how, legal] if x)
        sent = parts[0] + (f", {tail}" if tail else "")
        reason = self.reason()
        if reason:
            sent += f" because of {reason}"
        out = [sent + "."]
        flags = [SAFETY_PHRASE.get(f.value, f.value) for f in ve.safety_flags]
        if flags:
            out.append(self.pick([f"The presentation involved {_join(flags)}.",
                                  f"Safety concerns at {self.event} included {_join(flags)}."]))
        if d.family_structure:
            fs = _strip_end(d.family_structure)
            be = "are" if v.plural else "is"
            if fs.lower().startswith(("married", "single", "divorced", "widowed", "separated", "engaged")):
                noun = fs.lower().split()[-1] in ("man", "woman", "mother", "father", "parent", "person")
                out.append(f"Socially, {v.subj} {be} {'a ' if noun else ''}{fs}.")
            elif fs.lower().startswith(("lives", "has", "shares", "stays", "resides")):
                out.append(f"Socially, {v.subj} {fs}.")
            elif len(fs.split()) == 1:
                art = "an" if fs[:1].lower() in "aeiou" else "a"
                plural = fs.lower().endswith(("children", "parents", "siblings", "kids"))
                out.append(f"Socially, {v.subj} {v.has()} {fs if plural else f'{art} {fs}'}.")
            else:
                out.append(f"Family situation: {fs}.")
        if ve.source_of_information:
            out.append(f"History was obtained from {_join([_strip_end(s) for s in ve.source_of_information])}.")
        if ve.visit_episode:
            out.append(_cap(_strip_end(ve.visit_episode)) + ".")
        return " ".join(out)

    def frame_sentences(self, subject: str, frame: STEB) -> list[str]:
        """Sentences for one STEB frame; ``subject`` names what arose ("The insomnia", "These symptoms")."""
        v = self.voice
        out: list[str] = []
        if frame.situation:
            sit = _strip_end(frame.situation)
            if sit.lower().startswith(_PREPOSITIONS):
                out.append(f"{subject} arose {sit}.")
            else:
                out.append(f"{subject} arose in the context of {sit}.")
        if frame.thought:
            th = _strip_end(frame.thought)
            if _THOUGHT_VERB_RE.match(th):
                out.append(f"{_cap(v.subj)} {th}.")
            else:
                verb = self.pick(["believed", "was convinced", "thought"])
                out.append(f"{_cap(v.subj)} {verb} that {th}.")
        if frame.emotion:
            em = _strip_end(frame.emotion)
            if em.lower().startswith(("felt", "was", "became", "grew", "feels", "is ")):
                out.append(f"{_cap(v.subj)} {em}.")
            else:
                out.append(f"{_cap(v.subj)} felt {em}.")
        if frame.behavior:
            be = _strip_end(frame.behavior)
            first = be.split(" ", 1)[0].lower()
            if first.endswith("ed") or first in _PAST_VERBS:
                lead = self.pick(["In response, ", "As a result, ", ""])
                out.append(f"{lead}{v.subj} {be}." if lead else f"{_cap(v.subj)} {be}.")
            elif _PRESENT_VERB.match(first):
                out.append(f"{_cap(v.subj)} {be if not v.plural else _plural_verb(be)}.")
            elif first.endswith("ing"):
                out.append(f"{_cap(v.subj)} {v.was()} {be}.")
            else:
                out.append(f"This was accompanied by {be}.")
        return [_cap(x) for x in out]

    def episode(self, b: Block) -> str:
        v = self.voice
        when = self.when(b.interval)
        current = [s for s in b.symptoms if s.current_symptom]
        heads = _join(list(dict.fromkeys(_symptom_name(s) for s in b.symptoms)))
        all_current = bool(current) and len(current) == len(b.symptoms)
        if b.interval is None:
            if all_current:
                opener = self.pick([f"At the {self.event}, {v.subj} {v.was()} noted to have {heads}",
                                    f"{_cap(v.subj)} also presented with {heads}"])
            else:
                opener = self.pick([f"Previously, {v.subj} had experienced {heads}",
                                    f"{_cap(v.pos)} history also included {heads}"])
        elif all_current:
            opener = self.pick([_lead_in(when, f"{v.subj} {v.has()} experienced {heads}"),
                                f"{_cap(v.subj)} {v.has()} had {heads} {when}",
                                _lead_in(when, f"{v.subj} {v.has()} reported {heads}")])
        else:
            opener = self.pick([_lead_in(when, f"{v.subj} developed {heads}"),
                                _lead_in(when, f"{v.subj} experienced {heads}"),
                                f"{_cap(v.subj)} first experienced {heads} {when}"])
        sent = [opener.strip() + self.lasting(b.interval) + "."]
        # Identical frames shared by several symptoms of the block are narrated once for the group.
        frames: dict[tuple[str | None, ...], tuple[STEB, list[str]]] = {}
        for s in b.symptoms:
            if s.pattern:
                sent.append(f"The {s.headword} was {_strip_end(s.pattern)}.")
            for frame in s.contexts:
                key = (frame.situation, frame.thought, frame.emotion, frame.behavior)
                frames.setdefault(key, (frame, []))[1].append(s.headword)
        for frame, owners in frames.values():
            names = list(dict.fromkeys(owners))
            subject = f"The {names[0]}" if len(names) == 1 else (
                "These symptoms" if len(names) == len(b.symptoms) else f"The {_join(names)}")
            sent += self.frame_sentences(subject, frame)
        if b.diagnosis is not None:
            sent.append(self.dx_sentence(b.diagnosis))
        return " ".join(sent)

    def dx_sentence(self, dx: Diagnosis) -> str:
        label = clinical_case(dx.label)
        spec = f" ({', '.join(dx.specifiers)})" if dx.specifiers else ""
        if dx.id in self.dx_named:
            return self.pick([f"These symptoms were again attributed to {label}.",
                              f"This was understood as part of the same {label}."])
        self.dx_named.add(dx.id)
        if dx.certainty == Certainty.ruled_out:
            return f"{_cap(label)} was considered and ruled out."
        if dx.certainty == Certainty.rule_out:
            return f"{_cap(label)}{spec} was considered and remains to be ruled out."
        if dx.certainty == Certainty.provisional:
            past = " in the past" if dx.temporality == Temporality.past else ""
            return f"The presentation was provisionally diagnosed as {label}{spec}{past}."
        if dx.temporality == Temporality.past:
            return f"{_cap(self.voice.subj)} had been diagnosed with {label}{spec} before the {self.event}."
        return self.pick([f"These symptoms were consistent with {label}{spec}.",
                          f"The clinical picture met criteria for {label}{spec}.",
                          f"A diagnosis of {label}{spec} was made."])

    def treatment_phrase(self, t: Treatment) -> str:
        bits = [t.name]
        if t.dose:
            bits.append(t.dose)
        if t.route and t.route.value not in ("unknown", "not_applicable"):
            bits.append(t.route.value.replace("_", "-").replace("long-acting-injectable", "long-acting injectable"))
        if t.frequency:
            bits.append(t.frequency)
        elif t.status == TreatmentStatus.prn:
            bits.append("as needed")
        return " ".join(bits)

    def regimen(self, b: Block) -> str:
        v = self.voice
        when = self.when(b.interval)
        taken = [t for t in b.treatments if t.status not in (*_NOT_TAKEN, TreatmentStatus.past)]
        meds = [t for t in taken if t.type.value == "medication"]
        other = [t for t in taken if t.type.value != "medication"]
        out = self.not_taken([t for t in b.treatments if t.status in _NOT_TAKEN])
        target = f" for {clinical_case(b.diagnosis.label)}" if b.diagnosis is not None else ""
        stopped = [t for t in b.treatments if t.status == TreatmentStatus.past]
        if stopped:
            out.append(_lead_in(when, f"{v.subj} had previously taken "
                                      f"{_join([self.treatment_phrase(t) for t in stopped])}{target}."))
        ongoing = b.interval is not None and b.interval[1] >= 1 and b.interval[0] < 0
        if meds:
            regimen = _join([self.treatment_phrase(t) for t in meds])
            if ongoing:
                been = "have been" if v.plural else "has been"
                out.append(self.pick([_lead_in(when, f"{v.subj} {been} taking {regimen}{target}"),
                                      f"{_cap(v.subj)} {been} treated with {regimen}{target} {when}"]).strip() + ".")
            elif b.interval is None:
                out.append(self.pick([f"{_cap(v.subj)} {v.was()} treated with {regimen}{target}.",
                                      f"Treatment included {regimen}{target}."]))
            else:
                out.append(self.pick([_lead_in(when, f"{v.subj} {v.was()} started on {regimen}{target}"),
                                      _lead_in(when, f"{v.subj} received {regimen}{target}"),
                                      f"{_cap(v.subj)} {v.was()} treated with {regimen}{target} {when}"]).strip()
                           + ".")
        if other:
            therapy = _join([self.treatment_phrase(t) for t in other])
            out.append(_lead_in(when, f"{v.subj} engaged in {therapy}{target}.") if when
                       else f"{_cap(v.subj)} also received {therapy}{target}.")
        for t in b.treatments:
            if t.outcome:
                out.append(f"With {t.name}, the outcome was {_strip_end(t.outcome)}.")
            if t.discontinued_reason:
                out.append(f"{_cap(t.name)} was stopped because of {t.discontinued_reason}.")
        return " ".join(x.replace("  ", " ").replace(", ,", ",") for x in out)

    def not_taken(self, treatments: list[Treatment]) -> list[str]:
        """Treatments planned or refused: never written as taken."""
        out: list[str] = []
        planned = [self.treatment_phrase(t) for t in treatments if t.status == TreatmentStatus.planned]
        refused = [self.treatment_phrase(t) for t in treatments if t.status == TreatmentStatus.refused]
        if planned:
            out.append(f"{_cap(_join(planned))} {'were' if len(planned) > 1 else 'was'} recommended.")
        if refused:
            out.append(f"{_cap(self.voice.subj)} declined {_join(refused)}.")
        return out

    def name_of(self, node_id: str) -> str:
        node = self.g.node(node_id)
        t = self.g.node_types()[node_id]
        if t == NodeType.diagnosis:
            return clinical_case(node.label)  # type: ignore[union-attr]
        if t == NodeType.symptom:
            return node.headword  # type: ignore[union-attr]
        if t == NodeType.treatment:
            return node.name  # type: ignore[union-attr]
        if t == NodeType.past_history:
            return node.condition  # type: ignore[union-attr]
        return "the index episode"

    def induces(self, b: Block) -> str:
        src = self.name_of(b.source_id or "")
        targets = _join([self.name_of(t) for t in b.target_ids])
        return self.pick([f"The {targets} {'were' if len(b.target_ids) > 1 else 'was'} attributed to {src}.",
                          f"{_cap(src)} induced the {targets}.",
                          f"The {targets} developed as a consequence of {src}."])

    def history(self, b: Block) -> str:
        ph = b.history
        assert ph is not None
        when = self.when(b.interval)
        status = "" if ph.status.value == "unknown" else f" ({ph.status.value})"
        return _lead_in(when, f"{self.voice.pos} history included {ph.condition}{status}.")

    def closing(self, plan: NarrativePlan) -> list[str]:
        v, g = self.voice, self.g
        paras: list[str] = []
        sent: list[str] = []
        if plan.closing_history:
            items = [self._history_item(p) for p in plan.closing_history]
            sent.append(self.pick([f"Past history is notable for {_join(items)}.",
                                   f"{_cap(v.pos)} past history includes {_join(items)}."]))
        if g.family_history:
            fam = [("possible " if f.certainty == FamilyCertainty.possible else "")
                   + f"{clinical_case(f.condition)} in {v.pos} {f.member}" for f in g.family_history]
            sent.append(f"Family history is significant for {_join(fam)}.")
        denied = list(dict.fromkeys(s.headword for s in g.symptoms if s.assertion == Assertion.absent))
        # A few items per sentence, so that no reader loses the negation down a long list.
        for i in range(0, len(denied), _DENIED_PER_SENTENCE):
            also = " also" if i else ""
            sent.append(f"{_cap(v.subj)}{also} denied {_join(denied[i:i + _DENIED_PER_SENTENCE])}.")
        if_occur = list(dict.fromkeys(s.headword for s in g.symptoms if s.assertion == Assertion.hypothetical))
        if if_occur:
            sent.append(f"{_cap(v.subj)} {v.was()} advised to seek help should {_join(if_occur)} occur.")
        if sent:
            paras.append(" ".join(sent))
        tests: list[str] = []
        for heading, text in results_text(g.test_results.values).items():
            tests.append(f"{heading}: {text}.")
        mse = mental_status_text(g.mental_status)
        if mse:
            tests.append(f"On mental status examination: {mse}.")
        if g.visit_event.pathway:
            tests.append(f"Disposition: {_strip_end(g.visit_event.pathway)}.")
        if tests:
            paras.append(" ".join(tests))
        return paras

    def _history_item(self, p: PastHistory) -> str:
        status = "" if p.status.value == "unknown" else f" ({p.status.value})"
        return f"{p.condition}{status}"

    def render(self) -> str:
        plan = plan_narrative(self.g)
        paras = [self.lead()]
        body: list[str] = []
        for b in plan.blocks:
            if b.kind == "episode":
                body.append(self.episode(b))
            elif b.kind == "regimen":
                body.append(self.regimen(b))
            elif b.kind == "induces":
                body.append(self.induces(b))
            else:
                body.append(self.history(b))
        # Diagnoses with no symptoms are still stated.
        unnamed = [d for d in self.g.diagnoses if d.id not in self.dx_named]
        for d in unnamed:
            body.append(self.dx_sentence(d))
        # Group the chronological body into paragraphs of a few blocks each.
        for i in range(0, len(body), 3):
            paras.append(" ".join(x for x in body[i:i + 3] if x))
        paras += self.closing(plan)
        text = "\n\n".join(p for p in paras if p.strip())
        return _tidy(text)


#: Denied symptoms named per sentence.
_DENIED_PER_SENTENCE = 3
#: Treatment statuses that are never written as taken.
_NOT_TAKEN = (TreatmentStatus.planned, TreatmentStatus.refused)


def _symptom_name(s: Symptom) -> str:
    """A symptom as named in the narrative: "possible" when its presence is uncertain."""
    return f"possible {s.headword}" if s.assertion == Assertion.possible else s.headword


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" ([,.;])", r"\1", text)
    text = re.sub(r"\.\.+", ".", text)
    text = re.sub(r",\s*,", ",", text)
    return text.strip() + "\n"


def render(graph: CaseGraph, *, seed: int = 0) -> str:
    """Render a case graph as a clinical case history (deterministic given the seed)."""
    return Renderer(graph, seed).render()
