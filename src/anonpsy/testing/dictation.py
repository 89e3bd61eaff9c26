"""Synthetic clinical dictations with known identifier spans, spoken by espeak-ng, and how well they are muted.

A dictation is a list of sentences; each sentence a list of segments, some of them identifiers (a name, a
phone number, a date, an address, a record number). Every segment is synthesised on its own with the
dictation's voice, trimmed of leading and trailing silence, and the pieces are concatenated with short gaps
inside a sentence and longer ones between sentences. So the true sample span of every identifier is known.

:func:`measure` compares an input and an output recording segment by segment on 10 ms frames: an identifier
span is *fully muted* when every frame that carries speech in the input (above ``-45 dBFS``) is at least 40 dB
quieter in the output; the *kept share* is the duration of speech frames of the other segments that are
unchanged in the output (within 0.1 dB) over all their speech frames.

Voices and speeds vary over espeak-ng's English voices and variants. The text is written by us (all names,
numbers and places are invented); nothing here comes from a real patient. Needs the ``espeak-ng`` program
(Debian package ``espeak-ng``) and the audio extra.
"""

from __future__ import annotations

import io
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

RATE = 22050
FRAME = RATE // 100  # 10 ms

VOICES: tuple[str, ...] = (
    "en-us", "en-us+klatt4", "en-us+f3", "en-gb-x-rp", "en+klatt2", "en-us+m3", "en-029", "en-gb-scotland",
    "en-us-nyc", "en+f5", "en-us+klatt", "en-gb+m7", "en-us+f2", "en-gb-x-gbclan",
)

FIRST = ("Maria", "John", "Renee", "Okonkwo", "Priya", "Dmitri", "Aisha", "Tomasz", "Leilani", "Gareth", "Mei",
         "Santiago", "Fatima", "Bjorn", "Keisha", "Anders", "Yusuf", "Colleen", "Hiroshi", "Esperanza", "Nadia",
         "Declan", "Oluwaseun", "Margot", "Ravi", "Ingrid", "Thaddeus", "Lucia", "Kwame", "Siobhan")
LAST = ("Lopez", "Miller", "Banks", "Nakamura", "Kowalski", "Abernathy", "Okafor", "Lindqvist", "Haddad",
        "Petrov", "Castellanos", "Whitfield", "Mbeki", "Fitzgerald", "Ramanathan", "Delacroix", "Szymanski",
        "Thornbury", "Achterberg", "Vasquez", "Mulligan", "Oyelaran", "Brennan", "Kessler", "Yamamoto", "Duarte")
STREETS = ("Oak Street", "Kessler Avenue", "Maple Drive", "Harbor View Road", "Juniper Lane", "Cedar Court",
           "Lincoln Boulevard", "Willow Way", "Pine Street", "Elmwood Avenue")
CITIES = ("Tacoma", "Spokane", "Bellingham", "Olympia", "Yakima", "Fresno", "Duluth", "Tallahassee", "Boise",
          "Albuquerque", "Savannah", "Missoula")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
ORD = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth",
       9: "ninth", 10: "tenth", 11: "eleventh", 12: "twelfth", 13: "thirteenth", 14: "fourteenth",
       15: "fifteenth", 16: "sixteenth", 17: "seventeenth", 18: "eighteenth", 19: "nineteenth", 20: "twentieth",
       21: "twenty first", 22: "twenty second", 23: "twenty third", 24: "twenty fourth", 25: "twenty fifth",
       26: "twenty sixth", 27: "twenty seventh", 28: "twenty eighth"}
TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

#: Ordinary clinical sentences (no identifiers).
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


def _say_number(n: int) -> str:
    if n < 10:
        return DIGITS[n]
    if n < 20:
        return TEENS[n - 10]
    tens, unit = divmod(n, 10)
    return TENS[tens] + ("" if unit == 0 else " " + DIGITS[unit])


def _digits(rng: random.Random, n: int) -> str:
    return " ".join(DIGITS[rng.randrange(10)] for _ in range(n))


def _phone(rng: random.Random) -> str:
    area = f"{rng.randrange(2, 10)}{rng.randrange(10)}{rng.randrange(10)}"
    groups = [" ".join(DIGITS[int(d)] for d in area), _digits(rng, 3), _digits(rng, 4)]
    return ", ".join(groups)


def _year(rng: random.Random) -> str:
    y = rng.randrange(1940, 2006)
    if y < 2000:
        return f"nineteen {_say_number(y % 100)}" if y % 100 >= 10 else f"nineteen oh {DIGITS[y % 100]}"
    return f"two thousand {_say_number(y - 2000)}" if y > 2000 else "two thousand"


def _date(rng: random.Random, with_year: bool) -> str:
    month = rng.choice(MONTHS)
    day = rng.randrange(1, 29)
    base = f"the {ORD[day]} of {month}" if rng.random() < 0.25 else f"{month} {ORD[day]}"
    return f"{base}, {_year(rng)}" if with_year else base


def _address(rng: random.Random) -> str:
    house = rng.randrange(2, 99)
    if rng.random() < 0.5:
        number = f"{DIGITS[rng.randrange(1, 10)]} {_say_number(rng.randrange(10, 99))}"
    else:
        number = _say_number(house)
    return f"{number} {rng.choice(STREETS)}"


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _sentence(rng: random.Random) -> list[Segment]:
    """One sentence with one or two identifiers, in one of many contexts."""
    name = _name(rng)
    last = rng.choice(LAST)
    choices: list[list[Segment]] = [
        [Segment("The patient's name is"), Segment(name, "PERSON"), Segment(".")],
        [Segment("She was seen today by Doctor"), Segment(last, "PERSON"),
         Segment("in the outpatient clinic.")],
        [Segment("Her phone number is"), Segment(_phone(rng), "TELEPHONE_NUMBER"), Segment(".")],
        [Segment("He can be reached at"), Segment(_phone(rng), "TELEPHONE_NUMBER"), Segment(".")],
        [Segment("She was born on"), Segment(_date(rng, True), "DATE"), Segment(".")],
        [Segment("Date of birth"), Segment(_date(rng, True), "DATE"), Segment(".")],
        [Segment("She lives at"), Segment(_address(rng), "ADDRESS"), Segment("with her mother.")],
        [Segment("He lives on"), Segment(rng.choice(STREETS), "ADDRESS"), Segment("in"),
         Segment(rng.choice(CITIES), "LOCATION"), Segment(".")],
        [Segment("Her sister"), Segment(name, "PERSON"), Segment("called the clinic yesterday.")],
        [Segment("Medical record number"), Segment(_digits(rng, 7), "MEDICAL_RECORD_NUMBER"), Segment(".")],
        [Segment("Follow up is scheduled for"), Segment(_date(rng, False), "DATE"), Segment(".")],
        [Segment("He moved to"), Segment(rng.choice(CITIES), "LOCATION"),
         Segment("last year after losing his job.")],
        [Segment("Mister"), Segment(last, "PERSON"), Segment("reports poor sleep.")],
        [Segment(name, "PERSON"), Segment("is a forty two year old woman with recurrent depression.")],
        [Segment("Collateral was obtained from"), Segment(name, "PERSON"), Segment(", her case manager.")],
        [Segment("She was admitted on"), Segment(_date(rng, False), "DATE"),
         Segment("for suicidal ideation.")],
        [Segment("My name is"), Segment(name, "PERSON"), Segment("and I am calling about my son.")],
        [Segment("You can call me at"), Segment(_phone(rng), "TELEPHONE_NUMBER"), Segment(".")],
        [Segment("I live in"), Segment(rng.choice(CITIES), "LOCATION"), Segment("with my two children.")],
        [Segment("Her husband"), Segment(name, "PERSON"), Segment("brought her to the emergency department.")],
    ]
    return rng.choice(choices)


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


def measure(d: Dictation, output: npt.NDArray[Any], *, speech_dbfs: float = -45.0) -> Measure:
    """Per-segment RMS comparison of a dictation and its muted output (see the module docstring)."""
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
            if bool(np.all(rout[speech] <= rin[speech] * 0.01)):
                m.phi_muted += 1
            else:
                m.missed.append((d.voice, seg.phi))
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
    "presidio_corpus",
    "presidio_scripts",
    "synthesize",
    "through_transcription_server",
]
