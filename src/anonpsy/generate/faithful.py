"""Faithful generation: render, guard against copying, read the text back, repair, and report what is left.

:func:`generate` turns a perturbed graph into text with the rules backend and checks the text two ways:

* **copy guard** — no run of more than :data:`COPY_LIMIT` consecutive words of the source (drug names with doses
  excepted, as the fidelity yardstick counts them) may appear in the text. A piece that holds such a run is
  written again plainly (one fact per sentence from the graph's normalised values); if it still copies, again
  without its free text (STEB frames, the index-episode narrative, outcomes, disposition), each left-out item
  recorded by its graph path. A run still over the limit is a ``COPY_GUARD`` violation.
* **round trip** — the rules extractor reads the text back and every diagnosis (certainty, temporality),
  treatment (status), symptom (assertion) and relative's condition (certainty) is compared with the graph on
  normalised fact tuples (:mod:`anonpsy.generate.facts`). A fact missing, read with another status, or a
  diagnosis, treatment or relative's condition the text adds, makes the pieces that state or name it be written
  again, plainly, then without free text; what still disagrees is a ``ROUND_TRIP`` violation.

The round trip only judges facts the extractor can read at all: a fact whose plain sentence, alone, the
extractor does not read back with its status (a drug name outside the lexicon, a status the extractor has no
rule for) is recorded as unverifiable, never counted as agreeing. The comparison works on the normalised facts
of whatever graph :func:`anonpsy.extract.extract_facts` returns (the fact nodes of
:func:`anonpsy.extract.extract`, without the visit scaffold, examination and test values it never compares), so it
keeps working as the extractor evolves.

Both records go to the audit (:class:`anonpsy.audit.GenerationRecord`); violations name codes, fact kinds,
statuses and node ids, never text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol, TypeVar

from anonpsy.audit import CopyGuardRecord, FactCheck, GenerationRecord, RoundTripRecord
from anonpsy.evaluate.verbatim import CopyMeter
from anonpsy.generate.facts import Fact, graph_facts, node_facts
from anonpsy.generate.plain import plain_node
from anonpsy.generate.templates import BARE, PLAIN, Piece, Renderer, piece_spans
from anonpsy.generate.words import Voice
from anonpsy.graph import CaseGraph, Diagnosis, PastHistory, Sex, Symptom, Treatment, TreatmentType
from anonpsy.validate import Violation

#: Longest run of words a text may copy from its source (drug names with doses excepted).
COPY_LIMIT = 12
#: Statuses that make a fact the text adds a contradiction of the graph (an asserted diagnosis, a treatment
#: presented as taken, any relative's condition); an added symptom is recorded but allowed (STEB frames and
#: discontinuation reasons name symptoms the graph keeps as free text).
_ADDED_MATTERS = {
    "diagnosis": frozenset({"confirmed/current", "provisional/current", "rule_out/current", "confirmed/past",
                            "provisional/past", "rule_out/past"}),
    "treatment": frozenset({"current", "prn"}),
    "family": frozenset({"confirmed", "possible"}),
    "symptom": frozenset(),
}
Reader = Callable[[str], CaseGraph]


def _read(text: str) -> CaseGraph:
    from anonpsy.extract.assembly.build import read_facts

    return read_facts(text, case_id="roundtrip")


@dataclass
class Generation:
    """Generated text, its pieces, the record for the audit and the violations left."""

    text: str
    pieces: list[Piece]
    record: GenerationRecord
    violations: list[Violation] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------------
# Round trip


def compare(expected: Iterable[Fact], found: Iterable[Fact], checkable: Iterable[tuple[str, str]] | None = None,
            explained: Iterable[tuple[str, str, str]] = ()) -> list[FactCheck]:
    """Facts of ``expected`` that ``found`` lacks or states with another status, and facts ``found`` adds that
    matter (see :data:`_ADDED_MATTERS`). ``checkable`` limits the first two to the facts the reader can read;
    an added fact in ``explained`` (kind, key, status) is the reader's own reading of the graph's statements."""
    checkable = None if checkable is None else set(checkable)
    explained = set(explained)
    exp = {f.ident: f for f in expected}
    got = {f.ident: f for f in found}
    out: list[FactCheck] = []
    for ident, f in exp.items():
        if checkable is not None and ident not in checkable:
            continue
        g = got.get(ident)
        if g is None or g.status != f.status:
            out.append(FactCheck(kind=f.kind, key=f.key, node_id=f.node_id, expected=f.status,
                                 found=None if g is None else g.status))
    for ident, g in got.items():
        if ident not in exp and g.status in _ADDED_MATTERS[g.kind] and (g.kind, g.key, g.status) not in explained:
            out.append(FactCheck(kind=g.kind, key=g.key, node_id=None, expected=None, found=g.status))
    return out


@lru_cache(maxsize=16384)
def _probe(sentence: str, lead: str) -> frozenset[tuple[str, str, str]]:
    """The facts (kind, key, status) the rules extractor reads in ``sentence`` alone, after a neutral lead."""
    return frozenset((f.kind, f.key, f.status) for f in graph_facts(_read(f"{lead} {sentence}")))


@dataclass(frozen=True)
class Readability:
    """What the reader can judge for one graph: the facts whose plain sentence it reads back, alone, with the
    graph's status (``checkable``), and every fact it reads out of the graph's own plain sentences and findings
    (``explained``: a fact the text adds that the graph's statements themselves make the reader see, such as a
    depression read out of a rating scale's interpretation, is the reader's, not the text's)."""

    checkable: frozenset[tuple[str, str]]
    explained: frozenset[tuple[str, str, str]]


def readability(graph: CaseGraph, facts: Iterable[Fact], reader: Reader | None = None) -> Readability:
    """Probe the reader with each fact's plain sentence and each finding alone (cached per sentence).

    A fact is checkable when its own plain sentence reads back with its status and no other plain sentence makes
    the reader see it with another status (a symptom read out of a diagnosis' name: "oppositional defiant
    disorder" → defiance)."""
    v = Voice(graph.demographics.sex, graph.demographics.age)
    noun = {Sex.female: "woman", Sex.male: "man"}.get(graph.demographics.sex, "person")
    lead = f"The patient is a 40-year-old {noun}."

    def probe(sentence: str) -> frozenset[tuple[str, str, str]]:
        if reader is None:
            return _probe(sentence, lead)
        return frozenset((x.kind, x.key, x.status) for x in graph_facts(reader(f"{lead} {sentence}")))

    facts = list(facts)
    read: dict[tuple[str, str], frozenset[tuple[str, str, str]]] = {}
    for f in facts:
        try:
            read[f.ident] = probe(plain_node(graph, f.node_id, v))
        except KeyError:
            continue
    ok = {f.ident for f in facts if (f.kind, f.key, f.status) in read.get(f.ident, frozenset())}
    for i, sentence in enumerate(_finding_sentences(graph)):
        read[("finding", str(i))] = probe(sentence)
    status = {f.ident: f.status for f in facts}
    for ident, got in read.items():
        for kind, key, st in got:
            other = (kind, key)
            if other != ident and other in status and st != status[other]:
                ok.discard(other)
    explained = frozenset(x for got in read.values() for x in got)
    return Readability(frozenset(ok), explained)


def checkable_facts(graph: CaseGraph, facts: Iterable[Fact], reader: Reader | None = None) -> set[tuple[str, str]]:
    """The facts the reader can judge (see :func:`readability`)."""
    return set(readability(graph, facts, reader).checkable)


def _finding_sentences(graph: CaseGraph) -> list[str]:
    """The structured findings as the plain text states them (the mental status examination a domain at a time,
    each test value), the lead's demographics and setting, and the past-history conditions that are not
    diagnoses: a reader may read a fact out of them ("mood depressed" → depressed mood, "an adult day program
    participant" → a day program, "non-insulin-dependent diabetes" → insulin)."""
    from anonpsy.generate.facts import dx_key
    from anonpsy.generate.findings import mental_status_parts, value_sentence
    from anonpsy.generate.plain import plain_history

    v = Voice(graph.demographics.sex, graph.demographics.age)
    out = [Renderer(graph, 0, {"lead": BARE}).lead().text]
    # past-history conditions that are not diagnoses ("non-insulin-dependent diabetes" names insulin)
    out += [plain_history(p, v) for p in graph.past_history if not dx_key(p.condition).startswith("dsm:")]
    out += [f"On mental status examination: {p}." for p in mental_status_parts(graph.mental_status)]
    out += [f"Laboratory results: {value_sentence(v)}" for v in graph.test_results.values]
    return out


def _pieces_for(check: FactCheck, pieces: list[Piece], spans: list[tuple[int, int]], names: dict[tuple[str, str], str],
                evidence: Spans) -> set[int]:
    """Pieces that state or name the fact of one disagreement (by node, by name, or by where the extractor read
    it)."""
    hit: set[int] = set()
    ident = (check.kind, check.key)
    name = names.get(ident, "").lower()
    for i, p in enumerate(pieces):
        states = check.node_id is not None and check.node_id in p.nodes
        if states or (len(name) >= 3 and name in p.text.lower()):
            hit.add(i)
    for a, b in evidence.get(ident, []):
        for i, (s, e) in enumerate(spans):
            if s >= 0 and a < e and s < b:
                hit.add(i)
    return hit


Spans = dict[tuple[str, str], list[tuple[int, int]]]


def _evidence(g: CaseGraph) -> tuple[list[Fact], Spans, dict[tuple[str, str], str]]:
    """The facts of a re-read graph, where in the text each was read, and its name."""
    facts = graph_facts(g)
    spans: Spans = {}
    names: dict[tuple[str, str], str] = {}
    by_id = {f.node_id: f.ident for f in node_facts(g)}
    nodes: list[Diagnosis | Treatment | Symptom | PastHistory] = [*g.diagnoses, *g.treatments, *g.symptoms,
                                                                   *g.past_history]
    for n in nodes:
        ident = by_id.get(n.id)
        if ident is None:
            continue
        for ev in (getattr(n, "certainty_evidence", None), getattr(n, "temporality_evidence", None),
                   getattr(n, "status_evidence", None), getattr(n, "assertion_evidence", None)):
            if ev is not None and ev.start is not None and ev.end is not None:
                spans.setdefault(ident, []).append((ev.start, ev.end))
    for i, fh in enumerate(g.family_history):
        ident = by_id.get(f"fh_{i}")
        ev = fh.certainty_evidence
        if ident is not None and ev is not None and ev.start is not None and ev.end is not None:
            spans.setdefault(ident, []).append((ev.start, ev.end))
    for f in facts:
        names.setdefault(f.ident, f.name)
    return facts, spans, names


# ---------------------------------------------------------------------------------------------------------------
# Copy guard


def _pieces_over(runs: list[tuple[int, int, int]], spans: list[tuple[int, int]]) -> set[int]:
    out: set[int] = set()
    for a, b, _ in runs:
        for i, (s, e) in enumerate(spans):
            if s >= 0 and a < e and s < b:
                out.add(i)
    return out


#: Pieces whose facts are probed apart and not read again with the text.
_FINDINGS_READ_APART = ("tests", "mse")


class _Doc:
    """The pieces at their current levels, re-rendered on demand."""

    def __init__(self, graph: CaseGraph, seed: int) -> None:
        self.graph = graph
        self.seed = seed
        self.levels: dict[str, int] = {}
        self.render()

    def render(self) -> None:
        self.pieces = Renderer(self.graph, self.seed, self.levels).pieces()
        self.text, self.spans = piece_spans(self.pieces)

    def fact_text(self) -> str:
        """The text with the structured findings (test results, mental status examination) blanked out, offsets
        kept: what the round trip reads. A fact the reader would see in a finding is never checkable (see
        :func:`readability`), so the findings need not be read again."""
        chars = list(self.text)
        for p, (a, b) in zip(self.pieces, self.spans, strict=True):
            if p.key in _FINDINGS_READ_APART and a >= 0:
                chars[a:b] = " " * (b - a)
        return "".join(chars)

    def raise_level(self, indices: Iterable[int]) -> list[str]:
        """Write the given pieces one level plainer; the keys of those that could still be raised."""
        raised = []
        for i in indices:
            key = self.pieces[i].key
            level = self.levels.get(key, 0)
            if level < BARE:
                self.levels[key] = level + 1
                raised.append(key)
        if raised:
            self.render()
        return raised


def _guard(doc: _Doc, meter: CopyMeter, record: CopyGuardRecord) -> list[tuple[int, int, int]]:
    runs = meter.runs(doc.text, COPY_LIMIT)
    while runs:
        raised = doc.raise_level(_pieces_over(runs, doc.spans))
        if not raised:
            break
        record.rewritten += [k for k in raised if k not in record.rewritten]
        runs = meter.runs(doc.text, COPY_LIMIT)
    return runs


def generate(graph: CaseGraph, *, seed: int = 0, source: str | None = None, round_trip: bool = True,
             reader: Reader | None = None) -> Generation:
    """Text for ``graph`` (rules backend) with the copy guard (when the ``source`` text is given) and the round
    trip (unless ``round_trip`` is False); ``reader`` replaces the rules extractor (tests)."""
    doc = _Doc(graph, seed)
    record = GenerationRecord(backend="rules")
    violations: list[Violation] = []
    # Only drug names with doses may be kept verbatim: a therapy's name ("acceptance and commitment therapy")
    # excepts none of its words.
    drugs = [t.name for t in graph.treatments if t.type is TreatmentType.medication]
    meter = CopyMeter(source, drugs) if source is not None else None
    copy_rec = CopyGuardRecord(limit=COPY_LIMIT) if meter is not None else None
    if meter is not None and copy_rec is not None:
        _guard(doc, meter, copy_rec)
    if round_trip:
        expected = graph_facts(graph)
        rd = readability(graph, expected, reader)
        rt = _repair(doc, reader, expected, rd, BARE)
        if meter is not None and copy_rec is not None:
            before = dict(doc.levels)
            _guard(doc, meter, copy_rec)
            if doc.levels != before:
                rt = _final_round_trip(doc, reader, rt, expected, rd)
        record.round_trip = rt
        violations += round_trip_violations(rt)
    if meter is not None and copy_rec is not None:
        runs = meter.runs(doc.text, COPY_LIMIT)
        copy_rec.remaining = len(runs)
        copy_rec.longest_run = meter.longest(doc.text)
        record.copy_guard = copy_rec
        for _, _, words in runs:
            violations.append(Violation(code="COPY_GUARD", message=f"a run of {words} words copied from the source "
                                        f"remains after plain re-writing (limit {COPY_LIMIT})"))
    record.levels = {k: v for k, v in sorted(doc.levels.items()) if v}
    record.dropped = [d for p in doc.pieces for d in p.dropped]
    return Generation(doc.text, doc.pieces, record, violations)


def round_trip_repair(doc: _Doc, graph: CaseGraph, reader: Reader | None = None,
                      rounds: int = BARE) -> RoundTripRecord:
    """Read the text back, compare, and write the pieces of each disagreement plainer (at most ``rounds``
    times); the record of what agreed, what was repaired and what is left."""
    expected = graph_facts(graph)
    return _repair(doc, reader, expected, readability(graph, expected, reader), rounds)


def _repair(doc: _Doc, reader: Reader | None, expected: list[Fact], rd: Readability, rounds: int) -> RoundTripRecord:
    """:func:`round_trip_repair` given the graph's facts and what the reader can judge of them (computed once by
    :func:`generate` for this and the final check)."""
    read = reader or _read
    checkable = rd.checkable
    rec = RoundTripRecord(checked=len(checkable),
                          unverifiable=sorted(f"{f.kind}:{f.key}" for f in expected if f.ident not in checkable))
    names = {f.ident: f.name for f in expected}
    for attempt in range(rounds + 1):
        found, where, found_names = _evidence(read(doc.fact_text()))
        checks = compare(expected, found, checkable, rd.explained)
        if attempt == 0:
            rec.first_pass = checks
        rec.remaining = checks
        if not checks or attempt == rounds:
            break
        targets: set[int] = set()
        for c in checks:
            targets |= _pieces_for(c, doc.pieces, doc.spans, {**found_names, **names}, where)
        raised = doc.raise_level(targets)
        rec.repaired += [k for k in raised if k not in rec.repaired]
        if not raised:
            break
    rec.agreed = rec.checked - sum(1 for c in rec.remaining if c.expected is not None)
    return rec


def _final_round_trip(doc: _Doc, reader: Reader | None, rec: RoundTripRecord, expected: list[Fact],
                      rd: Readability) -> RoundTripRecord:
    """After the copy guard rewrote pieces, the final text's disagreements (no further repair)."""
    found, _, _ = _evidence((reader or _read)(doc.fact_text()))
    rec.remaining = compare(expected, found, rd.checkable, rd.explained)
    rec.agreed = rec.checked - sum(1 for c in rec.remaining if c.expected is not None)
    return rec


def round_trip_violations(rec: RoundTripRecord) -> list[Violation]:
    """One ``ROUND_TRIP`` violation per disagreement left (kinds, statuses and node ids only)."""
    out = []
    for c in rec.remaining:
        if c.expected is None:
            msg = f"the text states a {c.kind} the graph does not hold (read as {c.found})"
        elif c.found is None:
            msg = f"a {c.kind} of the graph ({c.expected}) is not read back from the text"
        else:
            msg = f"a {c.kind} is read back as {c.found}; the graph says {c.expected}"
        out.append(Violation(code="ROUND_TRIP", node_ids=(c.node_id,) if c.node_id else (), message=msg))
    return out


# ---------------------------------------------------------------------------------------------------------------
# The same check for text written by a language model


class Section(Protocol):
    """A piece of text written by another backend: its key, the graph nodes it narrates and its text."""

    key: str
    nodes: list[str]
    text: str


S = TypeVar("S", bound=Section)


def round_trip_sections(graph: CaseGraph, sections: list[S], assemble: Callable[[list[S]], str],
                        *, seed: int = 0, reader: Reader | None = None,
                        known: tuple[str, CaseGraph] | None = None) -> tuple[str, RoundTripRecord, list[Violation]]:
    """The round trip for text another backend wrote section by section (the llm backend): read the assembled
    text back, and write every section that states or names a disagreeing fact again in the plain sentences of
    the rules backend (the lead without its free text; a section narrating no fact is left out, and recorded).
    ``known``: a text and the reader's reading of it that the caller already has (the first reading is skipped
    when the assembled text is that text). Returns the final text, the record and a ``ROUND_TRIP`` violation per
    disagreement left."""
    reader_of = reader or _read

    def read(t: str) -> CaseGraph:
        return known[1] if known is not None and known[0] == t else reader_of(t)

    expected = graph_facts(graph)
    rd = readability(graph, expected, reader)
    rec = RoundTripRecord(checked=len(rd.checkable),
                          unverifiable=sorted(f"{f.kind}:{f.key}" for f in expected if f.ident not in rd.checkable))
    names = {f.ident: f.name for f in expected}
    v = Voice(graph.demographics.sex, graph.demographics.age)
    text = assemble(sections)
    found, where, found_names = _evidence(read(text))
    rec.first_pass = rec.remaining = compare(expected, found, rd.checkable, rd.explained)
    # First the sections that disagree are written plainly; a closing that still disagrees then gets its findings
    # at the bare level too, as the rules backend's own repair does (the free-text disposition is left out).
    for findings_level in (PLAIN, BARE):
        if not rec.remaining:
            break
        pieces = [Piece(s.key, "", s.text, tuple(s.nodes) + (_family_nodes(graph) if s.key == "closing" else ()))
                  for s in sections]
        _, spans = _section_spans(text, [s.text for s in sections])
        targets: set[int] = set()
        for c in rec.remaining:
            targets |= _pieces_for(c, pieces, spans, {**found_names, **names}, where)
        if findings_level == BARE:
            targets = {i for i in targets if sections[i].key == "closing"}
            if not targets:
                break
        for i in sorted(targets):
            sec = sections[i]
            plain = " ".join(plain_node(graph, n, v) for n in pieces[i].nodes if _known(graph, n))
            if sec.key == "lead":
                sec.text = Renderer(graph, seed, {"lead": BARE}).lead().text
            elif sec.key == "closing":  # the findings are structured: their own plain rendering
                findings = [p.text for p in Renderer(graph, seed, dict.fromkeys(_FINDINGS, findings_level)).pieces()
                            if p.key in _FINDINGS and p.text]
                sec.text = " ".join([plain, *findings]).strip()
            else:
                sec.text = plain
            if sec.key not in rec.repaired:
                rec.repaired.append(sec.key)
        text = assemble(sections)
        found, where, found_names = _evidence(read(text))
        rec.remaining = compare(expected, found, rd.checkable, rd.explained)
    rec.agreed = rec.checked - sum(1 for c in rec.remaining if c.expected is not None)
    return text, rec, round_trip_violations(rec)


_FINDINGS = ("tests", "mse", "disposition")


def _family_nodes(graph: CaseGraph) -> tuple[str, ...]:
    return tuple(f"fh_{i}" for i in range(len(graph.family_history)))


def _known(graph: CaseGraph, node_id: str) -> bool:
    try:
        plain_node(graph, node_id, Voice(graph.demographics.sex, graph.demographics.age))
    except KeyError:
        return False
    return True


def _section_spans(text: str, parts: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Where each section's text lies in the assembled text ((-1, -1) when not found verbatim)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for part in parts:
        t = " ".join(part.split())
        at = text.find(t, pos) if t else -1
        if at < 0 and t:
            at = text.find(t)
        spans.append((at, at + len(t)) if at >= 0 else (-1, -1))
        if at >= 0:
            pos = at + len(t)
    return text, spans
