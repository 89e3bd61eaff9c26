"""The fidelity scorer's own cue lexicon: does a sentence assert a diagnosis, medication or symptom as the
patient's, current and certain, or does a cue say otherwise?

This is a deliberately small, self-contained judge (NegEx/ConText-style trigger phrases, after Chapman et al.
2001 and Harkema et al. 2009, plus medication-status phrases of our own). It shares no code and no trigger file
with the extractor (``rules/lexicon/context.yaml``), so the extractor cannot be tuned into agreeing with its own
judge by editing one file. Changing it changes every fidelity figure: bump :data:`CUES_VERSION`.

A cue has a category, the concept types it applies to (``dx`` diagnoses, ``med`` medications, ``sx``
symptoms), a direction and a scope in words:

==============  ==============================================================================================
category        meaning
==============  ==============================================================================================
``negated``     absent, denied, ruled out ("denies", "no", "ruled out", "unlikely", "does not meet criteria for")
``possible``    uncertain ("possible", "rule out", "r/o", "may have", "cannot be ruled out", "versus")
``past``        historical (dx/sx: "history of", "as a child", "years ago"; med: "previously", "tried",
                "stopped", "discontinued", "off", "switched from")
``resolved``    no longer present ("resolved", "in remission")
``planned``     med not yet taken ("recommended", "will start", "consider", "may take", "encouraged to go back
                on", "if needed")
``current``     med explicitly current ("currently", "continue", "remains on", "restarted")
``hypothetical``  conditional or asked ("if", "risk of", "monitor for", "side effects of"); a sentence that is a
                question is hypothetical as a whole
``family``      someone else's ("family history of", "mother", "father", "in his family", "wife")
``pseudo``      looks like a trigger but is not ("no change", "not only", "mother reports"): consumed, so the
                shorter trigger inside it does not fire
==============  ==============================================================================================

Matching is case-insensitive on word boundaries; overlapping matches resolve leftmost-longest. A cue applies
to a mention that lies in its direction within its scope, with no scope break between them (``;`` or one of
"but", "however", "although", "though", "except", "whereas", "yet"; a family cue also stops at a pronoun or
noun naming the patient as subject). A cue that overlaps the mention never applies (the concept's own words
are not context). Among the temporal categories of a medication (past, planned, current) the nearest cue
wins; the others combine, with the precedence family > negated > hypothetical > possible/planned > past.

Section headers set a default where no cue decides: a family-history section makes mentions someone else's,
a past-history or past-medication section makes them past, a referral-question section makes diagnoses
possible, and drugs in an allergy section are not being taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

CUES_VERSION = 1

Category = Literal["negated", "possible", "past", "resolved", "planned", "current", "hypothetical", "family",
                   "pseudo"]
Direction = Literal["forward", "backward", "both"]
ConceptType = Literal["dx", "med", "sx"]
DX: frozenset[str] = frozenset({"dx"})
MED: frozenset[str] = frozenset({"med"})
SX: frozenset[str] = frozenset({"sx"})
DX_SX: frozenset[str] = frozenset({"dx", "sx"})
ALL: frozenset[str] = frozenset({"dx", "med", "sx"})

_RELATIVES = (r"(?:biological |birth |maternal |paternal |older |younger |twin |half[- ]|step ?)?"
              r"(?:mother|mom|mum|father|dad|sisters?|brothers?|siblings?|aunts?|uncles?|cousins?|grandmother|"
              r"grandfather|grandparents?|grandma|grandpa|sons?|daughters?|children|child|kids|parents?|relatives?|"
              r"family members?|wife|husband|spouse|partner|girlfriend|boyfriend|fianc[eé]e?|nieces?|nephews?|"
              r"twin|stepfather|stepmother|stepson|stepdaughter|friends?|roommates?|coworkers?|teachers?|baby|"
              r"infant|cousin)")
_REPORTING = (r"(?:reports?|reported|states?|stated|says|said|notes?|noted|describes?|described|is concerned|"
              r"was concerned|worries|worried|observed|noticed|brought|brings|called|calls|accompanied|"
              r"accompanies|confirms?|confirmed|provided|provides|gave|requested|requests|found|discovered|"
              r"adds|added|explains?|explained)")


@dataclass(frozen=True)
class Cue:
    """One group of trigger phrases (regular expressions over lower-case text)."""

    id: str
    category: Category
    types: frozenset[str]
    direction: Direction
    scope: int
    phrases: tuple[str, ...]
    stop_at: str | None = None  # a word that ends this cue's scope (e.g. "to" after "switched from")


def _c(cid: str, category: Category, types: frozenset[str], direction: Direction, scope: int,
       *phrases: str, stop_at: str | None = None) -> Cue:
    return Cue(cid, category, types, direction, scope, phrases, stop_at)


CUES: tuple[Cue, ...] = (
    # ---------------------------------------------------------------------------------------- negation
    _c("neg.deny", "negated", ALL, "forward", 15,
       "denies", "denying", "deny", "negates", "negated", "does not endorse", "did not endorse", "doesn't endorse",
       "does not report", "did not report", "no complaints? of", "no reports? of", "not endorsing",
       "does not admit to", "did not admit to", "does not complain of", "did not complain of",
       "(?:(?:is|are|was|were) )?negative for", "(?:has|have|had|did|does) not (?:displayed?|exhibited?|demonstrated?|"
       "shown|show|reported|endorsed|expressed|voiced)(?: any)?",
       "no (?:evidence|signs?|symptoms|indications?) (?:of|for)"),
    _c("neg.no", "negated", ALL, "forward", 8,
       "no", "not", "never", "without", "nor", "neither", "none of", "absence of", "free of",
       "tested negative for", "no features (?:of|for)",
       "no (?:known|prior|previous|past|current|recent|active|acute|significant|obvious|overt|apparent|frank)",
       "(?:has|had|have|with) no", "not any", "(?:does|did|do) not have", "(?:doesn't|didn't|don't) have",
       "(?:has|have|had) not had", "(?:has|had) never had", "never had", "never (?:been )?diagnosed with",
       "not (?:experiencing|having|reporting|taking|on)"),
    _c("neg.refused", "negated", MED, "forward", 6,
       "refus(?:es|ed|ing)", "declin(?:es|ed|ing)", "unwilling to (?:take|try|start)",
       "(?:does|did) not want to (?:take|try|start)", "not interested in (?:taking|trying|starting)"),
    _c("neg.no_history", "negated", DX_SX, "forward", 10,
       r"no (?:known |prior |previous |past |personal |significant |family )?(?:psychiatric |medical )?"
       r"(?:history|hx) of", "no h/o", "negative (?:psychiatric |medical )?history (?:of|for)"),
    _c("neg.criteria", "negated", DX, "forward", 20,
       "rules out", "has ruled out",
       "(?:does|did|do) not (?:yet )?meet (?:full |the |diagnostic )?criteria (?:for|of)",
       "not meeting criteria for", "criteria (?:are |were )?not met for",
       "(?:does|did|do) not support(?: a diagnosis of| the diagnosis of)?", "not supportive of",
       "not consistent with", "inconsistent with", "argues against", "rather than", "unlikely to (?:be|have)",
       "not (?:suggestive|indicative|diagnostic) of", "no longer meets? criteria for"),
    _c("neg.denied", "negated", ALL, "both", 12, "denied"),
    _c("neg.ruled_out", "negated", DX, "both", 8, "ruled out"),
    # a relative clause after a drug tells of that drug only: "acetaminophen, which he has not been using, Motrin"
    _c("neg.med_relative", "negated", MED, "backward", 10,
       "(?:which|that) (?:he|she|they|the patient|patient) (?:has|have|had|is|are|was|were) not (?:been )?"
       "(?:using|taking|used|taken|filled|started)",
       "(?:which|that) (?:he|she|they|the patient|patient) (?:hasn't|haven't|hadn't|isn't|wasn't|never) "
       "(?:been )?(?:using|taking|used|taken|filled|started)"),
    _c("neg.backward", "negated", DX_SX, "backward", 6,
       "(?:was|were|has been|have been|is|are) ruled out", "(?:is|was|are|were) excluded",
       "(?:is|was|appears to be|appear to be|seems|seemed|seem to be|seems to be) (?:very |highly )?unlikely",
       "unlikely", "(?:is|are|was|were) (?:not )?(?:absent|negative)", "absent", "negative",
       "(?:is |are |was |were )?not (?:supported|elevated|present|seen|found|detected|indicated|evident|"
       "observed|met|endorsed|elicited|reported|a concern|an issue)",
       "(?:was|were|is|are) denied", "none", "no longer (?:a problem|an issue|present|a concern)"),
    _c("pseudo.neg", "pseudo", ALL, "both", 1,
       "no increase", "no change", "no changes", "no significant change", "not only", "not just", "no further",
       "not necessarily", "no doubt", "not sure", "not certain", "not clear", "without difficulty", "no one",
       "nobody", "not able to", "unable to", "not to mention", "no matter", "nothing but", "gram negative",
       "not cause", "not caused by", "no show", "no-show", "never once", "not worth", "no hope", "no energy",
       "no motivation", "no appetite", "no interest", "no insight", "no remorse", "no friends", "no future",
       "non-?smoker", "non-?drinker", "never smoker", "no one else", "negative symptoms", "negative thoughts",
       "negative affect", "negative mood", "without (?:benefit|success|effect|improvement)",
       # a drug still taken that does not work well enough: the drug is not negated ("Motrin, which has not helped")
       "(?:has|have|hasn't|haven't) not? ?(?:really |much |fully |yet )?(?:helped|worked)",
       "(?:is|are|isn't|aren't) not? ?(?:really |fully )?(?:helping|working)"),
    # ---------------------------------------------------------------------------------------- uncertainty
    _c("poss.not_ruled_out", "possible", DX_SX, "both", 8,
       r"(?:can ?not|can't|could not|couldn't|should not|shouldn't|has not been|have not been|hasn't been|"
       r"haven't been|not) (?:\w+ ){0,2}(?:be )?(?:entirely |completely |fully |unequivocally |yet )?"
       r"(?:ruled out|excluded)",
       "(?:cannot|can't|could not|unable to) (?:rule out|exclude)"),
    _c("poss.forward", "possible", DX_SX, "forward", 6,
       "possible", "possibly", "probable", "(?:some )?symptoms of", "suggestion (?:of|that)",
       "(?:scores?|scales?|testing|profile|results?) (?:indicate|indicates|suggest|suggests|show|shows)",
       "probably", "likely", "most likely", "suspected", "suspect",
       "suspicion (?:of|for)", "suspicious (?:of|for)", "concern(?:s|ing)? (?:for|of)", "question of",
       "questionable", "rule[- ]out", "to rule out", "r/o", "rule out",
       "differential(?: diagnosis)?(?: includes?| of)?",
       "consider(?:ed|ing)?", "could be", "may be", "might be", "may have(?: had)?", "might have(?: had)?",
       "could have(?: had)?", "may reflect", "might reflect", "provisional(?:ly)?(?: diagnosed (?:with|as))?",
       "presumptive", "presumed", "working diagnosis of", "evaluat(?:e|ion|ed) for", "assess(?:ment|ed)? for",
       "screen(?:ing|ed)? for", "to clarify", "clarify", "uncertain (?:whether|if)", "unclear (?:whether|if)",
       "not sure (?:whether|if)", "wonder(?:s|ed)? (?:whether|if|about)", "suggestive of", "query",
       "cannot be excluded", "symptoms suggestive of", "traits of", "features of"),
    _c("poss.backward", "possible", DX_SX, "backward", 6,
       "(?:is|was|remains) (?:a |also a )?possibility", "a possibility", "(?:is|was) (?:also )?possible",
       "(?:is|was) (?:most )?likely", "(?:is|was) probable", "(?:is|was|are|were) suspected",
       "to be ruled out", "(?:was|were|is|are|being) considered", "(?:is|was) questionable",
       "(?:is|was|remains) (?:uncertain|unclear)", "or not", "provisional", "traits", "features",
       "(?:by|per) (?:self[- ])?report"),
    _c("poss.versus", "possible", DX, "both", 4, "versus", r"vs\.?", "or possibly"),
    # ---------------------------------------------------------------------------------------- history (dx/sx)
    _c("past.history", "past", DX_SX, "forward", 8,
       "history of", "hx of", "h/o", "past history of", "previous(?:ly)?", "prior", "formerly", "former",
       "used to (?:have|be)", "once had", "remote",
       "as a (?:child|teen(?:ager)?|youth|young adult|adolescent|boy|girl)",
       "in (?:kindergarten|grade school|elementary school|middle school|high school|college)",
       r"at (?:the )?age (?:of )?\d+", r"when (?:he|she) was (?:younger|a child|a teenager|in \w+ school|\d+)",
       "earlier in (?:life|his life|her life)"),
    _c("past.both", "past", DX_SX, "both", 8,
       "in the past", "years ago", "decades ago", r"\w+ (?:years|months) ago", "at that time", "back then",
       "as a teenager", "as a child", "in the distant past", "in (?:his|her|their) (?:teens|twenties|youth|childhood|"
       "adolescence)", "(?:in|during) (?:early )?(?:childhood|adolescence)",
       "while (?:intoxicated|high|drunk|under the influence)",
       "(?:at )?(?:different|various) times"),
    _c("resolved.backward", "resolved", DX_SX, "backward", 6,
       "(?:has |have |had |now )?resolved", "in (?:full |partial |sustained |early )?remission",
       "(?:has |had )?remitted",
       "which resolved", "that resolved", "no longer (?:present|active)"),
    _c("resolved.forward", "resolved", DX_SX, "forward", 6,
       "resolution of", "recovered from", "remission (?:of|from)", "(?:in|with) remission of"),
    # ---------------------------------------------------------------------------------------- medication status
    _c("med.past", "past", MED, "forward", 6,
       "previous", "prior", "formerly", "former", "past trials? of", "(?:has |had |did )?tri(?:ed|al of|als of)",
       "(?:had )?failed", "stop taking", "discontinue", "discontinuing", r"d/c(?:'?d)?", "dc'?d",
       "(?:was |were )?taken off", "took (?:him|her|them) off", "came off", "went off", "weaned (?:off|from)",
       "tapered (?:off|from)", "no longer (?:on|taking|takes|using)", "used to (?:take|be on)",
       "had (?:been )?taken", "had been (?:on|taking|prescribed|given|treated with)", "history of", "ran out of",
       "had (?:been )?started (?:(?:him|her|them) )?on", "overdose(?:d)? (?:of|on|with)", "took too many",
       "(?:has|have) been on (?:a variety of|several|multiple|many|numerous|various) (?:different )?medications",
       "(?:during the time|when|while) (?:he|she|they) (?:was|were) (?:taking|on)",
       "quit", "in (?:kindergarten|grade school|elementary school|middle school|high school|college)"),
    _c("med.off", "past", MED, "forward", 2, "off", "off of"),
    _c("med.switch", "past", MED, "forward", 3,
       "switched from", "changed from", "switch(?:ed)? (?:him|her|them) from", "converted from", "transitioned from",
       "replaced", stop_at="to"),
    _c("med.past_both", "past", MED, "both", 12,
       "previously", "in the past", r"\w+ (?:years|months|weeks) ago", "years ago", "at that time", "at the time",
       "as a (?:child|teen(?:ager)?)", "stopped(?: taking| using)?", "discontinued",
       "(?:at )?(?:different|various) times",
       r"at (?:the )?age (?:of )?\d+", "(?:in|during) (?:early )?(?:childhood|adolescence)"),
    _c("med.past_backward", "past", MED, "backward", 8,
       "(?:which|that) (?:he|she|they|the patient) (?:had )?(?:stopped|discontinued|quit)(?: taking)?",
       "(?:was|were|has been|have been|had been) (?:stopped|discontinued|d/c'?d|tapered|held)", "ago",
       "(?:(?:was|were|is|has been) )?(?:changed|switched) (?:over )?to",
       "(?:was|were) (?:ineffective|not effective|not helpful|unhelpful)",
       "without (?:benefit|success|effect|improvement)"),
    _c("med.planned", "planned", MED, "forward", 8,
       "recommend(?:ed|s)?", "recommendations? (?:is|are|include)", "suggest(?:ed|s)?",
       "advised to (?:start|take|try|resume|restart|go back on)", "consider(?:ed|ing)?",
       "will (?:start|begin|initiate|try|add|consider|prescribe|trial|switch to)",
       "would (?:start|consider|benefit from|recommend)",
       "(?:may|might|could) (?:benefit from|try|take|start|consider|use|be (?:started|tried|considered|restarted))",
       "plans? to (?:start|begin|initiate|try|add)", "planning to (?:start|begin|try)", "to be started on",
       "to start", "to begin", "to try", "encouraged to (?:go back on|start|take|resume|restart|try)",
       "go back on", "in the future", "option of", "options include", "alternative", "as an alternative",
       "discussed (?:starting|trying|the option of|a trial of)", "referral for", "candidate for"),
    _c("med.planned_backward", "planned", MED, "backward", 6,
       "(?:is|was|were|are) (?:recommended|suggested|considered|discussed|offered|proposed)",
       "(?:will|would|could|may|might) be (?:started|considered|tried|added|helpful|restarted|an option|used)",
       "if needed", "if necessary", "in the future", "as an alternative", "is an option", "if (?:this|that|it) "
       "(?:fails|does not work)"),
    _c("med.current", "current", MED, "forward", 6,
       "currently", "current", "presently", "at present", "now", "continue(?:s|d)?", "remains? on",
       "still (?:on|taking|takes)", "restart(?:ed)?", "resume(?:d)?", "(?:is|are) (?:on|taking|maintained on)",
       "takes", "(?:was |were )?(?:re)?started(?: on| today)?", "began", "begin", "start", "initiated",
       "(?:changed|switched) (?:(?:him|her|them) )?(?:over )?to",
       "increase(?:d)?", "titrate(?:d)?"),
    _c("med.current_backward", "current", MED, "backward", 4,
       "(?:was|were|is|are|will be) (?:continued|resumed|restarted|increased|titrated)", "continues",
       "(?:was|were) (?:re)?started (?:today|at this visit|this morning)"),
    _c("pseudo.med", "pseudo", MED, "both", 1,
       "as needed", "p\\.?r\\.?n\\.?", "previously prescribed dose",
       "at the time of (?:admission|discharge|this visit)"),
    _c("pseudo.history", "pseudo", ALL, "both", 1,
       "history of present illness", "past (?:medical|psychiatric|surgical|social|family) history", "past history",
       "social history", "medical history", "history (?:was )?obtained from", "history (?:provided|given) by",
       "prior to (?:admission|arrival|presentation|this (?:visit|admission|evaluation))", "previous visit"),
    # ---------------------------------------------------------------------------------------- hypothetical
    _c("hyp.conditional", "hypothetical", ALL, "forward", 8,
       "if", "in case(?: of)?", "unless", "should (?:he|she|they|the patient|symptoms)", "whether",
       "in the event(?: of| that)?", "return (?:to the ed |to the er )?if", "call if", "seek (?:help|care) if"),
    _c("hyp.risk", "hypothetical", ALL, "forward", 8,
       "risks? (?:of|for)", "at (?:increased |high |low )?risk (?:of|for)", "monitor(?:ed|ing)? for",
       "watch(?:ing)? for", "side effects?(?: of| include| such as)?", "precautions",
       "educat(?:ed|ion) (?:about|on|regarding)",
       "warned (?:about|of)", "counsell?ed (?:about|on|regarding)", "to prevent", "prevention of",
       "asked (?:about|whether|if)", "screening questions?"),
    _c("pseudo.hyp", "pseudo", ALL, "both", 1,
       "as if", "even if", "if any", "if so", "whether or not"),
    # ---------------------------------------------------------------------------------------- someone else
    _c("fam.history", "family", ALL, "forward", 12,
       "family (?:psychiatric |medical )?(?:history|hx)(?: of| is significant for| significant for| includes?)?",
       "fh(?: of)?", "familial", "(?:first|second)[- ]degree relatives?(?: with)?", "relatives? with",
       "family members?(?: with| have| had)?", "genetic (?:psychiatric )?history"),
    _c("fam.member", "family", ALL, "forward", 8,
       rf"(?:(?:his|her|their|the patient's|patient's|a|an|the|one|two|three|both) )?{_RELATIVES}(?:'s)?",
       "maternal", "paternal"),
    _c("fam.backward", "family", ALL, "backward", 6,
       r"in (?:his|her|their|the) (?:immediate |extended |biological )?family",
       r"runs? in (?:the|his|her|their) family", r"in (?:several|multiple|many|some) (?:family members|relatives)",
       rf"in (?:his|her|their|the patient's|a|the) {_RELATIVES}",
       r"on (?:his|her|the) (?:mother's|father's|maternal|paternal) side", r"(?:maternal|paternal) side"),
    _c("pseudo.fam", "pseudo", ALL, "both", 1,
       rf"(?:(?:his|her|their|the patient's|patient's|the) )?{_RELATIVES} {_REPORTING}",
       rf"(?:per|according to|collateral from|spoke (?:with|to)) (?:his|her|their|the patient's|the) {_RELATIVES}",
       rf"lives with (?:his|her|their|the|a) {_RELATIVES}", rf"(?:his|her) {_RELATIVES} and (?:he|she)"),
)

_BREAKS = re.compile(r";|(?<!\w)(?:but|however|although|though|except|whereas|yet)(?!\w)", re.I)
_PATIENT_SUBJECT = re.compile(r"(?<!\w)(?:he|she|the patient|patient|client|pt|mr|ms|mrs)(?!\w)", re.I)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class CueHit:
    """One cue match in a sentence."""

    cue: Cue
    start: int
    end: int


@lru_cache(maxsize=8)
def _compiled(kind: str) -> tuple[tuple[Cue, re.Pattern[str]], ...]:
    out = []
    for cue in CUES:
        if kind in cue.types:
            pat = "|".join(f"(?:{p})" for p in cue.phrases)
            out.append((cue, re.compile(rf"(?<![\w/-])(?:{pat})(?![\w-])", re.I)))
    return tuple(out)


def cue_hits(sentence: str, kind: ConceptType) -> list[CueHit]:
    """Every cue of concept type ``kind`` in the sentence, overlaps resolved leftmost-longest."""
    found: list[CueHit] = []
    for cue, rx in _compiled(kind):
        for m in rx.finditer(sentence):
            if m.end() > m.start():
                found.append(CueHit(cue, m.start(), m.end()))
    found.sort(key=lambda h: (h.start, -(h.end - h.start)))
    out: list[CueHit] = []
    last = -1
    for h in found:
        if h.start >= last:
            out.append(h)
            last = h.end
    return out


#: Between a mention and a backward cue: other words, then the parenthesis that holds the cue ("A, B (now in
#: remission)"). A parenthetical remark qualifies the words it directly follows, not a list item before them.
_PAREN_OF_ANOTHER = re.compile(r"^[^()]*\w[^()]*\([^()]*$")


@dataclass(frozen=True)
class MentionContext:
    """How a sentence presents one mention: its status and the ids of the cues that decided it."""

    status: str
    cues: tuple[str, ...] = ()


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def classify(sentence: str, start: int, end: int, kind: ConceptType, *, section: str | None = None,
             question: bool = False, hits: list[CueHit] | None = None) -> MentionContext:
    """The status of the mention ``sentence[start:end]`` of concept type ``kind``.

    Statuses: ``dx`` -- family, negated, hypothetical, possible, resolved, past, affirmed; ``med`` -- family,
    other (allergy list), negated, hypothetical, planned, past, current; ``sx`` -- family, negated,
    hypothetical, possible, resolved, past, present.
    """
    applied: dict[str, list[tuple[int, str]]] = {}
    for h in hits if hits is not None else cue_hits(sentence, kind):
        cue = h.cue
        if cue.category == "pseudo":
            continue
        if h.start < end and start < h.end:
            # A cue overlapping the mention: one that starts before it reads forward into it ("no history of"
            # + "history of X"); one inside it is the concept's own words, except an uncertainty word.
            inside = start <= h.start and h.end <= end
            if (inside and cue.category == "possible") or (not inside and h.start < start
                                                           and cue.direction in ("forward", "both")):
                applied.setdefault(cue.category, []).append((0, cue.id))
            continue
        if h.end <= start and cue.direction in ("forward", "both"):
            between = sentence[h.end:start]
        elif h.start >= end and cue.direction in ("backward", "both"):
            between = sentence[end:h.start]
            if _PAREN_OF_ANOTHER.match(between):
                continue  # "A, B (now in remission)": the parenthesis qualifies B, the word it follows
        else:
            continue
        dist = _words(between)
        if dist > cue.scope or _BREAKS.search(between):
            continue
        if cue.stop_at and re.search(rf"(?<!\w){cue.stop_at}(?!\w)", between, re.I):
            continue
        if cue.category == "family" and h.end <= start and _PATIENT_SUBJECT.search(between):
            continue
        applied.setdefault(cue.category, []).append((dist, cue.id))
    sec = section_kind(section)
    ids = tuple(sorted({cid for v in applied.values() for _, cid in v}))
    if "family" in applied or sec == "family":
        return MentionContext("family", ids)
    if kind == "med" and sec == "allergy":
        return MentionContext("other", ids)
    if "negated" in applied:
        return MentionContext("negated", ids)
    if question or "hypothetical" in applied:
        return MentionContext("hypothetical", ids)
    if kind == "med":
        temporal = [(d, cat) for cat in ("past", "planned", "current") for d, _ in applied.get(cat, [])]
        if temporal:
            best = min(temporal, key=lambda t: (t[0], ("current", "past", "planned").index(t[1])))
            return MentionContext(best[1], ids)
        return MentionContext("past" if sec == "past" else "current", ids)
    if "possible" in applied or (kind == "dx" and sec == "question"):
        return MentionContext("possible", ids)
    if "resolved" in applied:
        return MentionContext("resolved", ids)
    if "past" in applied or sec == "past":
        return MentionContext("past", ids)
    return MentionContext("affirmed" if kind == "dx" else "present", ids)


_SECTION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("allergy", re.compile(r"\bALLERG")),
    ("family", re.compile(r"\b(?:FAMILY|GENETIC|SIBLINGS?|PARENTS?|CHILDREN)\b")),
    ("past", re.compile(r"\b(?:PAST|PREVIOUS|PRIOR)\b(?!.*\bAND PRESENT\b)(?!\s+MEDICAL)|\bTRIALS?\b")),
    ("question", re.compile(r"\bREFERRAL QUESTIONS?\b|\bQUESTIONS? FOR\b")),
)


def section_kind(header: str | None) -> str | None:
    """What a section header implies for the mentions under it: family, past, question, allergy or None."""
    if not header:
        return None
    h = header.upper()
    for kind, rx in _SECTION_RULES:
        if rx.search(h):
            return kind
    return None
