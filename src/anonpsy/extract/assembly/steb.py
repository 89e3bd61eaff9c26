"""Situation–Thought–Emotion–Behavior frames from the clause patterns around a symptom mention."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from anonpsy import kinship, lexicon
from anonpsy.caseless import Caseless
from anonpsy.extract.sections import segment_index, segments
from anonpsy.graph import STEB

_MAX_WORDS = 25
_SITUATION = Caseless(re.compile(r"\b(?:often\s+|usually\s+|especially\s+|mostly\s+|typically\s+|only\s+)?"
                                 r"((?:when|while|whenever|after|following|during|before|in the context of|"
                                 r"at the time of|every time|each time|triggered by|in response to)\b[^,;.:]{3,160})",
                                 re.I))
_THOUGHT_VERB = re.compile(r"\b(?:believes?|believed|believing|thinks?|thought(?!\s+(?:broadcasting|insertion|"
                           r"withdrawal|blocking|content|process|disorder|of|about))|worries|worried|fears?|feared|"
                           r"is convinced|was convinced|is certain|was certain|insists?|insisted|is sure|was sure|"
                           r"feels? that|felt that|says|said|states|stated)\s+"
                           # "X (is) thought/believed/said to represent Y": a passive with no holder, not a belief
                           r"(?!to\b)", re.I)
_SAYING = re.compile(r"^(?:says|said|states|stated)\s+$", re.I)
_THOUGHT_LEAD = re.compile(r"^(?:that\s+|about\s+(?=\w+ing\b))", re.I)
#: A new main clause inside a captured phrase: the subject of the sentence comes back ("after the assault she has").
_MAIN_CLAUSE = re.compile(r"\s(?:she|he|they|I|we|the patient|patient|pt)\s", re.I)
_BEHAVIOR_VERBS = re.compile(r"\b((?:stopped|started|began|refused|refuses|quit|locked|locks|barricaded|called|calls|"
                             r"ran|hid|hides|stayed|stays|avoided|avoids|checks|checked|washes|washed|threw|"
                             r"throws|broke|hit|punched|cuts? (?:her|his|their|him|them)|burned|drank|drinks|took|"
                             r"takes|ingested|overdosed|"
                             r"isolated|isolates|paced|paces|screamed|yelled|shouted|wandered|missed|misses|skipped|"
                             r"skips|spent|attacked|fled|pushed|smashed|stole|lied|sits|sat|keeps|kept|showers|weighs|"
                             r"clings|cries|cried|follows|pinches|picked|picks|covered|covering|banging|shouting|"
                             r"climbs|blurts|interrupts|rehearses|spends|drove|texted|pounded|"
                             r"left (?:the|her|his|their|work|school|home)|walked out|ran away|runs off)\b"
                             r"[^,;.:]{0,120})", re.I)
#: Thought and behaviour verbs as each sentence is searched for them.
_THOUGHT_SEARCH, _BEHAVIOR_SEARCH = Caseless(_THOUGHT_VERB), Caseless(_BEHAVIOR_VERBS)
#: A subject right before a behaviour verb that is not the patient ("they began", "it stopped", "which started").
_OTHER_SUBJECT = re.compile(r"\b(?:they|it|these|those|which|we|I|you|that)\s+(?:have\s+|had\s+|has\s+|then\s+|"
                            r"just\s+|also\s+|all\s+)?$", re.I)
#: A count or a determiner right before a behaviour word makes it a noun ("2 drinks per day", "a few drinks", "the
#: cuts on her arm"): no act of the patient to tell, and rendered without its count it reads "drinks per day".
_NOUN_BEFORE = re.compile(r"(?:\b(?:\d+(?:[.,/-]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a|an|the|"
                          r"few|several|many|some|more|any|no|of|her|his|their|my|these|those|daily|nightly|"
                          # a linking verb makes the word after it a state, not an act ("tired of feeling ran down")
                          r"feeling|feel|feels|felt|being|get|gets|got|getting|looks?|looked|looking|seems?|seemed)|\d)"
                          r"[\s-]*$", re.I)
#: Where the holder of a thought verb's clause begins: the last clause break or reporting verb before the verb
#: ("Her mother says | she believes", "… and that | his partner feels").
_HOLDER_START = re.compile(r"[,;:]|\b(?:that|and|but|because|says|said|states|stated|reports|reported|notes|noted|"
                           r"adds|added|explains|explained)\b", re.I)
#: A believer other than the patient, or a negated belief: the proposition is then not the patient's thought, and
#: rendering it as one would reverse or misattribute it ("his partner no longer feels that he is safe").
_NOT_PATIENTS_BELIEF = re.compile(
    rf"\b(?:not|no longer|never|nor|hardly|denies|denied|n't|{kinship.alternation()}|teachers?|staff|nurses?|"
    r"doctors?|physicians?|therapist|counselor|police|officers?|neighbou?rs?|others|everyone|nobody|no one|"
    r"examiner|writer|I|we)\b|n't\b", re.I)
NARRATIVE_SECTIONS = {"hpi", "chief_complaint", "past_psych", "social_history", "substance"}


_SPACES = re.compile(r"\s+")
_LEADING_CONJUNCTION = re.compile(r"^(?:and|or|but|then|so|that)\s+", re.I)
_TRAILING_STOP = re.compile(r"[.,;:]+([\"”’']?)$")


def _clean_field(text: str | None, *, min_words: int = 1) -> str | None:
    """A clean STEB field: no unbalanced quotes, no leading conjunction, at most 25 whole words, no dangling
    function word at the end."""
    if not text:
        return None
    t = _SPACES.sub(" ", text).strip(" ,;:-")
    if t.count('"') % 2:
        t = t.replace('"', "")
    if (t.count("“") + t.count("”")) % 2:
        t = t.replace("“", "").replace("”", "")
    if t.count("(") != t.count(")"):
        t = t.replace("(", "").replace(")", "")
    t = _LEADING_CONJUNCTION.sub("", t)
    words = t.split()
    if len(words) > _MAX_WORDS:
        words = words[:_MAX_WORDS]
    while words and words[-1].lower().strip(",;:") in {"and", "or", "but", "the", "a", "an", "of", "to", "in",
                                                         "on", "at", "for", "with", "that", "his", "her", "their",
                                                         "so", "because", "as", "by", "from", "my", "is", "was"}:
        words.pop()
    t = " ".join(words).strip(" ,;:-")
    t = _TRAILING_STOP.sub(r"\1", t)
    if t.count('"') % 2:
        t = t.replace('"', "")
    return t if len(t) >= 3 and len(t.split()) >= min_words else None


def _thought_at(sentence: str, m: re.Match[str]) -> tuple[int, str] | None:
    """The proposition after a thought verb (the verb dropped): a quotation, or the clause up to the end of its
    comma segment. After "says/states" only a quotation or a that-clause is a thought."""
    rest = sentence[m.end():]
    q = re.match(r"\s*[\"“]([^\"”]{3,400})[\"”]", rest)
    if q:
        return m.end() + q.start(1), q.group(1)
    lead = _THOUGHT_LEAD.match(rest)
    if _SAYING.match(m.group(0)) and not lead:
        return None
    body_start = m.end() + (lead.end() if lead else 0)
    body = sentence[body_start:]
    stop = re.search(r"[;,:]|\.(?:\s|$)|\s(?:but|although|though|whereas)\s", body)
    prop = body[: stop.start()] if stop else body
    about = re.search(r"\babout\s+", prop) if not lead else None
    if about is not None and m.group(0).lower().startswith(("worr", "fear")):
        body_start += about.end()
        prop = prop[about.end():]
    # Keep the first proposition of "X and that Y".
    prop = re.split(r"\s+and that\s+", prop, maxsplit=1)[0]
    return (body_start, prop) if len(prop.split()) >= 2 else None


#: Verbs of beginning or ending: with a symptom as their subject they tell its course, not an act of the patient.
_ASPECTUAL = re.compile(r"(?:started|began|stopped)\b", re.I)
#: What may stand between a symptom and such a verb: another noun of the same subject ("night sweats and cough
#: began"), never a person ("night sweats and she began"), and adverbs ("the headaches have gradually started").
_SUBJECT_GAP = re.compile(r"(?:\s+(?:and|or)\s+(?!(?:he|she|they|we|i|the patient|patient)\b)(?:[a-z-]+\s+){0,2}"
                          r"[a-z-]+)?\s*(?:(?:also|then|first|initially|both|all|have|has|had|later|gradually|"
                          r"suddenly|abruptly|again)\s+)*", re.I)


def _symptom_onset(sentence: str, verb_start: int, mentions: Sequence[tuple[int, int]]) -> bool:
    """Whether the verb at ``verb_start`` begins or ends a symptom named right before it ("Night sweats and cough
    began in December", "the panic attacks stopped"): the symptom is the subject, so no behaviour is told."""
    if not _ASPECTUAL.match(sentence, verb_start):
        return False
    return any(end <= verb_start and _SUBJECT_GAP.fullmatch(sentence, end, verb_start) for _, end in mentions)


def _patients_belief(sentence: str, verb_start: int) -> bool:
    """Whether the verb at ``verb_start`` states the patient's own, affirmed belief or act: its clause names no
    other subject and no negation before the verb."""
    pre = sentence[:verb_start]
    cut = 0
    for m in _HOLDER_START.finditer(pre):
        cut = m.end()
    return _NOT_PATIENTS_BELIEF.search(pre, cut) is None


def _cut_main_clause(phrase: str) -> str:
    """A situation phrase without the main clause that follows it ("after the assault she has had ..." →
    "after the assault"); a subject right after the conjunction is the clause's own ("whenever she has to
    separate")."""
    words = list(re.finditer(r"\S+", phrase))
    if len(words) < 3:
        return phrase
    m = _MAIN_CLAUSE.search(phrase, words[1].end())
    return phrase[: m.start()] if m else phrase


@lru_cache(maxsize=4096)
def _frame(sentence: str, span: tuple[int, int], others: tuple[tuple[int, int], ...] = ()) -> STEB | None:
    """STEB frame from clause patterns around the symptom mention at ``span``; None when no field is found.

    Situation: a when/while/after/during clause in the mention's comma segment, or in the neighbouring segment
    that introduces it, cut before the main clause; never the clause that contains the mention itself. Thought:
    the proposition of believes/thinks/worries/is convinced (the verb dropped; a quotation is taken whole) when the
    mention lies in it or shares its segment, and only when the belief is the patient's own and affirmed (not
    "his partner feels that", "does not believe that"). Emotion: an emotion-lexicon word in the mention's segment.
    Behavior: an action-verb phrase in the mention's segment (not the taking of a medication), under the same
    condition (not "his brother hit him", "she never hit anyone"). ``others`` are
    the spans of the other symptom mentions of the sentence: a clause that belongs to another symptom's segment
    is not copied to this one. Every field is at most 25 words, cut at a word boundary.

    >>> extract_steb("He believes his neighbors implanted a microchip in his tooth.", (0, 11)).thought
    'his neighbors implanted a microchip in his tooth'
    >>> f = extract_steb("She cries several times a day, often while feeding the baby.", (4, 9))
    >>> f.situation, f.behavior
    ('while feeding the baby', 'cries several times a day')
    """
    segs = segments(sentence)
    i = segment_index(segs, span[0])
    own = segs[i]
    other_segs = {segment_index(segs, o[0]) for o in others if o != span}

    situation = None
    for j in (i, i + 1, i - 1):
        if not 0 <= j < len(segs) or (j != i and j in other_segs):
            continue
        a, b = segs[j]
        m = _SITUATION.search(sentence, a, b)
        if m is None or (j != i and m.start() - a > 12):
            continue
        phrase = _cut_main_clause(m.group(1))
        if m.start(1) <= span[0] < m.start(1) + len(phrase):
            continue  # the mention is inside this clause: it is the situation of something else
        here = abs(m.start(1) - span[0])
        if j == i and any(a <= o[0] < b and abs(m.start(1) - o[0]) < here for o in others if o != span):
            continue  # another symptom of the segment is nearer: the clause is about that one
        situation = phrase
        break

    thought = None
    for m in _THOUGHT_SEARCH.finditer(sentence):
        got = _thought_at(sentence, m)
        if got is None or not _patients_belief(sentence, m.start()):
            continue
        start, prop = got
        inside = start <= span[0] < start + len(prop)
        same_seg = segment_index(segs, m.start()) == i
        between = any(min(m.end(), span[0]) <= o[0] < max(m.start(), span[1]) for o in others if o != span)
        if inside or (same_seg and not between):
            # "She states that she has mesothelioma": what the patient says is told as said, never as a belief
            # the generator could phrase as a conviction
            quoted = start > 0 and sentence[start - 1] in "\"“"
            thought = f"said that {prop}" if _SAYING.match(m.group(0)) and not quoted else prop
            break

    emotion = None
    a, b = own
    best: tuple[int, str] | None = None
    for e in lexicon.find_terms(sentence[a:b], "emotion"):
        s0, e0 = a + e.start, a + e.end
        if any(s0 < o[1] and o[0] < e0 for o in (span, *others)):
            continue  # the word is a symptom mention itself ("euphoric and irritable")
        d = abs(s0 - span[0])
        if best is None or d < best[0]:
            best = (d, e.surface.lower())
    if best is not None:
        emotion = best[1]

    behavior = None
    m = _BEHAVIOR_SEARCH.search(sentence, a, b)
    while m and (_NOUN_BEFORE.search(sentence, 0, m.start(1)) or _OTHER_SUBJECT.search(sentence, 0, m.start(1))
                 or _symptom_onset(sentence, m.start(1), (span, *others))):
        # "2 drinks per day": a noun, not the verb; "they began as soon as she arrived": someone else's act;
        # "night sweats and cough began in December": the symptoms' onset
        m = _BEHAVIOR_SEARCH.search(sentence, m.end(1), b)
    if m and _patients_belief(sentence, m.start(1)):
        phrase = re.split(r"\s+and\s+(?=\w+s\b|\w+ed\b)|\s+(?:but|although|though|whereas|yet)\s+", m.group(1),
                          maxsplit=1)[0]
        if len(phrase.split()) >= 2 and not lexicon.find_terms(phrase, "medication"):
            behavior = phrase

    frame = STEB(situation=_clean_field(situation, min_words=2), thought=_clean_field(thought, min_words=2),
                 emotion=_clean_field(emotion), behavior=_clean_field(behavior, min_words=2))
    return frame if frame.present_fields() else None


def extract_steb(sentence: str, span: tuple[int, int],
                 others: Sequence[tuple[int, int]] = ()) -> STEB | None:
    """The STEB frame of :func:`_frame`, remembered per sentence and spans (every read of a text holding the
    sentence again — the round trip reads the output more than once — asks the same); a copy, the caller's own."""
    frame = _frame(sentence, (span[0], span[1]), tuple((a, b) for a, b in others))
    return None if frame is None else frame.model_copy()
