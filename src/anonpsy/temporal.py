"""Temporal engine: durations to canonical day intervals, normalisation of a graph's time backbone.

All functions are pure and deterministic: they take a :class:`CaseGraph` and return a new one.

Pipeline (:func:`normalize`):

1. :func:`finalize_spans` — ongoing or open-ended durations get a finite span from a horizon derived from the
   case's other episodes (ongoing ones always cover day 0).
2. :func:`deduplicate` — durations with identical signatures are merged into one id.
3. :func:`reconcile` — per node, overlapping or adjacent intervals are merged into disjoint blocks, iterated to a
   fixed point; unreferenced durations are removed.
4. :func:`split_episodes` — a symptom with several disjoint blocks becomes one node per episode, STEB frames
   paired with episodes by temporal order.
5. :func:`recompute_current` — ``current_symptom`` is true iff an interval covers day 0 (half-open rule).
6. :func:`rebuild_presents_with` — PRESENTS_WITH edges from the visit to every symptom covering day 0.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

from anonpsy.caseless import Caseless
from anonpsy.graph import (
    UNIT_DAYS,
    CaseGraph,
    Duration,
    Edge,
    RelationType,
    Symptom,
    Unit,
)

Interval = tuple[int, int]


# ---------------------------------------------------------------------------------------------------------------
# Units and expressions


def to_days(amount: int, unit: Unit) -> int:
    return amount * UNIT_DAYS[unit]


def coarsest_unit(start: int, end: int) -> Unit:
    """The coarsest unit in which both interval ends are whole numbers."""
    for unit in (Unit.year, Unit.month, Unit.week):
        u = UNIT_DAYS[unit]
        if start % u == 0 and end % u == 0:
            return unit
    return Unit.day


@dataclass(frozen=True)
class TimeSpec:
    """A parsed temporal expression: offset/span in ``unit`` relative to day 0."""

    offset: int
    span: int | None
    unit: Unit
    ongoing: bool = False
    coarse: bool = False

    def interval(self) -> Interval | None:
        if self.span is None:
            return None
        u = UNIT_DAYS[self.unit]
        return self.offset * u, (self.offset + self.span) * u


NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "eighteen": 18, "twenty": 20, "thirty": 30,
    "couple": 2, "a couple of": 2, "few": 3, "a few": 3, "several": 3, "many": 5, "some": 2,
}

_UNIT_WORDS: dict[str, Unit] = {
    "day": Unit.day, "days": Unit.day, "night": Unit.day, "nights": Unit.day,
    "week": Unit.week, "weeks": Unit.week, "wk": Unit.week, "wks": Unit.week,
    "month": Unit.month, "months": Unit.month, "mo": Unit.month, "mos": Unit.month,
    "year": Unit.year, "years": Unit.year, "yr": Unit.year, "yrs": Unit.year,
}

_NUM = r"(\d+(?:\.\d+)?|a couple of|a few|couple|few|several|many|some|an|a|one|two|three|four|five|six|seven|" \
       r"eight|nine|ten|eleven|twelve|fifteen|eighteen|twenty|thirty)"
_UNIT = r"(days?|nights?|weeks?|wks?|months?|mos?|years?|yrs?)"


def parse_number(word: str) -> int | None:
    w = word.strip().lower()
    if re.fullmatch(r"\d+", w):
        return int(w)
    if re.fullmatch(r"\d+\.\d+", w):
        return max(1, round(float(w)))
    return NUMBER_WORDS.get(w)


# Life stages as age windows [lo, hi) in years; coarse expressions map to the whole window.
LIFE_STAGES: dict[str, tuple[int, int]] = {
    "early childhood": (1, 6),
    "childhood": (5, 13),
    "as a child": (5, 13),
    "in grade school": (6, 12),
    "elementary school": (6, 11),
    "middle school": (11, 14),
    "high school": (14, 18),
    "adolescence": (13, 18),
    "as a teenager": (13, 18),
    "teens": (13, 20),
    "early adulthood": (18, 26),
    "young adult": (18, 26),
    "college": (18, 23),
}

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b(?:for|over|during|in|within)\s+(?:the\s+)?(?:past|last|previous|preceding)\s+{_NUM}\s+{_UNIT}\b",
                re.I), "past_n"),
    (re.compile(rf"\b(?:for|over|during|in|within)\s+(?:the\s+)?(?:past|last|previous|preceding)\s+{_UNIT}\b", re.I),
     "past_unit"),
    (re.compile(rf"\bfor\s+(?:about\s+|approximately\s+|around\s+|nearly\s+|almost\s+|over\s+|more than\s+)?"
                rf"{_NUM}\s+{_UNIT}\b", re.I), "for_n"),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|prior|earlier|before\s+(?:the\s+)?(?:admission|presentation|visit|"
                rf"evaluation|this visit|arrival))\b", re.I), "n_ago"),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+(?:after|following|post)\s+(?:the\s+)?(?:admission|presentation|visit|"
                rf"evaluation|arrival)\b", re.I), "n_after"),
    (re.compile(r"\bthe\s+day\s+after\s+(?:admission|presentation|the visit|arrival)\b", re.I), "day_after"),
    (re.compile(rf"\bsince\s+{_NUM}\s+{_UNIT}\s+ago\b", re.I), "since_n_ago"),
    (re.compile(r"\b(?:at|by|around|since)\s+(?:the\s+)?age\s+(?:of\s+)?(\d{1,3})\b", re.I), "at_age"),
    (re.compile(r"\b(?:when\s+(?:he|she|they)\s+(?:was|were)|at)\s+(\d{1,3})\s*(?:years?\s+old|yo)\b", re.I),
     "at_age"),
    (re.compile(r"\b(?:in|during|since)\s+(?:(?:his|her|their)\s+)?(early childhood|childhood|adolescence|teens|"
                r"early adulthood|college|high school|middle school|elementary school|grade school)\b", re.I),
     "stage"),
    (re.compile(r"\b(as a child|as a teenager|as a young adult)\b", re.I), "stage"),
    (re.compile(r"\byesterday\b", re.I), "yesterday"),
    (re.compile(r"\b(?:today|this morning|this evening|tonight|on the day of (?:admission|presentation))\b", re.I),
     "today"),
    (re.compile(r"\blast\s+night\b", re.I), "yesterday"),
    (re.compile(r"\b(?:recently|lately|of late|in recent (?:days|weeks))\b", re.I), "recently"),
    (re.compile(r"\blast\s+(week|month|year)\b", re.I), "last_unit"),
    (re.compile(r"\b(?:since\s+)?last\s+(spring|summer|fall|autumn|winter)\b", re.I), "last_season"),
    (re.compile(r"\bfor\s+(?:many|several|a number of)\s+years\b|\bfor\s+years\b|\blong-?standing\b", re.I),
     "years"),
    (re.compile(r"\b(?:lifelong|all (?:his|her|their) life|since birth|since early childhood)\b", re.I), "lifelong"),
]


#: Any of :data:`_PATTERNS`: most clauses hold no temporal expression, and one search tells so.
_ANY_PATTERN = re.compile("|".join(f"(?:{p.pattern})" for p, _ in _PATTERNS), re.I)
_ANY_SEARCH = Caseless(_ANY_PATTERN)
#: Words one of which every match of :data:`_PATTERNS` holds (lower case): a unit ("day", "night", "week", "wk",
#: "mo", "year", "yr"), "for", a word of the past ("past", "last", "previous", "preceding", "late", "recent"), an
#: age ("age", "yo"), a stage of life or a time of day. An ASCII clause that holds none of them holds no temporal
#: expression, which a few substring tests tell sooner than :data:`_ANY_PATTERN` (ASCII only: with ``re.I`` a
#: letter of a pattern also matches a few letters outside ASCII, such as the long s, which ``str.lower`` keeps).
_NEEDED_WORDS = ("day", "night", "week", "wk", "mo", "year", "yr", "for", "past", "last", "previous", "preceding",
                 "late", "recent", "age", "yo", "child", "adolescence", "teen", "adult", "college", "school",
                 "morning", "evening", "standing", "life", "birth")


def _may_hold_expression(expr: str) -> bool:
    """False only when ``expr`` cannot match :data:`_ANY_PATTERN` (see :data:`_NEEDED_WORDS`)."""
    if not expr.isascii():
        return True
    low = expr.lower()
    for w in _NEEDED_WORDS:  # noqa: SIM110 (a plain loop: a generator costs more than the tests)
        if w in low:
            return True
    return False


def parse_expression(expr: str, *, age: int | None = None) -> TimeSpec | None:
    """Map a temporal expression to a :class:`TimeSpec`, or None if it is not recognised.

    Coarse expressions map to the coarsest compatible offset/span ("for several years" → 3 years up to the visit,
    "in childhood" → the whole childhood window given the present age, "recently" → within the past month).
    """
    if not _may_hold_expression(expr) or not _ANY_SEARCH.search(expr):
        return None
    for pattern, kind in _PATTERNS:
        m = pattern.search(expr)
        if not m:
            continue
        spec = _spec(kind, m, age)
        if spec is not None:
            return spec
    return None


def _unit(word: str) -> Unit:
    return _UNIT_WORDS[word.lower()]


def _spec(kind: str, m: re.Match[str], age: int | None) -> TimeSpec | None:
    g = m.groups()
    if kind in ("past_n", "for_n"):
        n = parse_number(g[0])
        if n is None:
            return None
        unit = _unit(g[1])
        vague = g[0].lower() in ("a couple of", "a few", "couple", "few", "several", "many", "some")
        # Ongoing up to the visit: the span is closed by the temporal engine at the case horizon (covers day 0).
        return TimeSpec(-n, None, unit, ongoing=True, coarse=vague)
    if kind == "past_unit":
        unit = _unit(g[0])
        return TimeSpec(-1, None, unit, ongoing=True)
    if kind == "n_ago":
        n = parse_number(g[0])
        return None if n is None else TimeSpec(-n, 1, _unit(g[1]))
    if kind == "n_after":
        n = parse_number(g[0])
        return None if n is None else TimeSpec(n, 1, _unit(g[1]))
    if kind == "day_after":
        return TimeSpec(1, 1, Unit.day)
    if kind == "since_n_ago":
        n = parse_number(g[0])
        return None if n is None else TimeSpec(-n, None, _unit(g[1]), ongoing=True)
    if kind == "at_age":
        at = int(g[0])
        if age is None or at > age:
            return None
        return TimeSpec(at - age, 1, Unit.year, coarse=True)
    if kind == "stage":
        stage = g[0].lower()
        lo, hi = LIFE_STAGES[stage]
        if age is None or lo > age:
            return None
        hi = min(hi, age + 1)
        return TimeSpec(lo - age, max(1, hi - lo), Unit.year, coarse=True)
    if kind == "yesterday":
        return TimeSpec(-1, 1, Unit.day)
    if kind == "today":
        return TimeSpec(0, 1, Unit.day)
    if kind == "recently":
        return TimeSpec(-1, 1, Unit.month, coarse=True)
    if kind == "last_unit":
        return TimeSpec(-1, 1, _unit(g[0]))
    if kind == "last_season":
        # Without a visit date, "last spring" is somewhere 3–15 months back: the coarsest window.
        return TimeSpec(-12, 12, Unit.month, ongoing="since" in m.group(0).lower(), coarse=True)
    if kind == "years":
        return TimeSpec(-3, None, Unit.year, ongoing=True, coarse=True)
    if kind == "lifelong":
        if age is None:
            return TimeSpec(-10, None, Unit.year, ongoing=True, coarse=True)
        return TimeSpec(-age, None, Unit.year, ongoing=True, coarse=True)
    return None


# ---------------------------------------------------------------------------------------------------------------
# Intervals


def duration_interval(d: Duration, horizon: int = 1) -> Interval:
    """Interval of a duration; open spans are closed at the horizon (ongoing) or after one unit."""
    if d.span is not None:
        return d.interval()
    u = UNIT_DAYS[d.unit]
    start = d.offset * u
    if d.ongoing:
        return start, max(start + u, horizon, 1)
    return start, max(start + u, 0) if start < 0 else start + u


def horizon(graph: CaseGraph) -> int:
    """The case's time horizon: the latest end of any finite duration, at least day 1."""
    ends = [d.interval()[1] for d in graph.durations if d.span is not None]
    return max([1, *ends])


def node_intervals(graph: CaseGraph, node_id: str) -> list[Interval]:
    """Sorted intervals of one node (the visit is [0, 1)); see :func:`interval_index` for all nodes at once."""
    return interval_index(graph).get(node_id, [])


def interval_index(graph: CaseGraph) -> dict[str, list[Interval]]:
    """Intervals of every node, computed once per call (horizon and duration map shared)."""
    dmap = graph.duration_map()
    h = horizon(graph)
    out: dict[str, list[Interval]] = {graph.visit_event.id: [(0, 1)]}
    for node in graph.temporal_nodes():
        out[node.id] = sorted(duration_interval(dmap[i], h) for i in node.duration_ids if i in dmap)
    return out


def covers_day0(intervals: list[Interval]) -> bool:
    return any(s <= 0 < e for s, e in intervals)


def merge_intervals(intervals: list[Interval]) -> list[Interval]:
    """Merge overlapping or adjacent half-open intervals into sorted disjoint blocks."""
    out: list[Interval] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def covered_days(intervals: list[Interval]) -> set[int]:
    days: set[int] = set()
    for s, e in intervals:
        days.update(range(s, e))
    return days


# ---------------------------------------------------------------------------------------------------------------
# Allen relations


class Relation(StrEnum):
    before = "before"
    after = "after"
    meets = "meets"
    met_by = "met_by"
    overlaps = "overlaps"
    overlapped_by = "overlapped_by"
    starts = "starts"
    started_by = "started_by"
    during = "during"
    contains = "contains"
    finishes = "finishes"
    finished_by = "finished_by"
    equal = "equal"
    unknown = "unknown"


def allen(a: Interval, b: Interval) -> Relation:
    """Allen interval relation of half-open intervals a and b."""
    (a1, a2), (b1, b2) = a, b
    if a1 == b1 and a2 == b2:
        return Relation.equal
    if a2 < b1:
        return Relation.before
    if b2 < a1:
        return Relation.after
    if a2 == b1:
        return Relation.meets
    if b2 == a1:
        return Relation.met_by
    if a1 == b1:
        return Relation.starts if a2 < b2 else Relation.started_by
    if a2 == b2:
        return Relation.finishes if a1 > b1 else Relation.finished_by
    if b1 < a1 and a2 < b2:
        return Relation.during
    if a1 < b1 and b2 < a2:
        return Relation.contains
    return Relation.overlaps if a1 < b1 else Relation.overlapped_by


def node_extent(graph: CaseGraph, node_id: str) -> Interval | None:
    ivs = node_intervals(graph, node_id)
    if not ivs:
        return None
    return min(s for s, _ in ivs), max(e for _, e in ivs)


def temporal(graph: CaseGraph, a: str, b: str) -> Relation:
    """Temporal(a, b): the Allen relation between the extents of nodes a and b (``unknown`` if either is untimed)."""
    ea, eb = node_extent(graph, a), node_extent(graph, b)
    if ea is None or eb is None:
        return Relation.unknown
    return allen(ea, eb)


def temporal_backbone(graph: CaseGraph) -> dict[tuple[str, str], Relation]:
    """Temporal(a, b) for every ordered pair of distinct nodes."""
    ids = [i for i, _ in graph.iter_nodes()]
    index = interval_index(graph)
    extents: dict[str, Interval | None] = {
        i: (min(s for s, _ in index[i]), max(e for _, e in index[i])) if index.get(i) else None for i in ids
    }
    out: dict[tuple[str, str], Relation] = {}
    for a in ids:
        for b in ids:
            if a == b:
                continue
            ea, eb = extents[a], extents[b]
            out[(a, b)] = Relation.unknown if ea is None or eb is None else allen(ea, eb)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Normalisation steps


def _with_span(d: Duration, interval: Interval) -> Duration:
    u = UNIT_DAYS[d.unit]
    start, end = interval
    span = max(1, math.ceil((end - start) / u))
    return d.model_copy(update={"span": span})


def finalize_spans(graph: CaseGraph) -> CaseGraph:
    """Give every open-ended duration a finite span (ongoing ones reach the horizon and cover day 0)."""
    if all(d.span is not None for d in graph.durations):
        return graph
    h = horizon(graph)
    durations = [d if d.span is not None else _with_span(d, duration_interval(d, h)) for d in graph.durations]
    return graph.model_copy(update={"durations": durations})


def _node_lists(graph: CaseGraph) -> dict[str, list[object]]:
    return {
        "diagnoses": list(graph.diagnoses),
        "symptoms": list(graph.symptoms),
        "treatments": list(graph.treatments),
        "past_history": list(graph.past_history),
    }


def _remap_ids(graph: CaseGraph, remap: dict[str, str]) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for key, nodes in _node_lists(graph).items():
        new_nodes: list[object] = []
        for n in nodes:
            ids = list(dict.fromkeys(remap.get(i, i) for i in n.duration_ids))  # type: ignore[attr-defined]
            new_nodes.append(n.model_copy(update={"duration_ids": ids}))  # type: ignore[attr-defined]
        out[key] = new_nodes
    return out


def deduplicate(graph: CaseGraph) -> CaseGraph:
    """Merge durations with identical signatures into the first id (in pool order)."""
    first: dict[tuple[int, int | None, str, bool], str] = {}
    remap: dict[str, str] = {}
    keep: list[Duration] = []
    for d in graph.durations:
        sig = d.signature()
        if sig in first:
            remap[d.id] = first[sig]
        else:
            first[sig] = d.id
            keep.append(d)
    if not remap:
        return graph
    update: dict[str, object] = dict(_remap_ids(graph, remap))
    update["durations"] = keep
    return graph.model_copy(update=update)


def _block_id(interval: Interval, taken: set[str]) -> str:
    s, e = interval
    base = f"dur_{'m' if s < 0 else ''}{abs(s)}_{'m' if e < 0 else ''}{abs(e)}"
    cand, k = base, 2
    while cand in taken:
        cand, k = f"{base}_{k}", k + 1
    return cand


def reconcile(graph: CaseGraph) -> CaseGraph:
    """Per node, merge overlapping/adjacent intervals into disjoint blocks (to a fixed point); drop orphans."""
    g = finalize_spans(graph)
    while True:
        nxt = _reconcile_once(g)
        if nxt == g:
            return g
        g = nxt


def _reconcile_once(graph: CaseGraph) -> CaseGraph:
    dmap = graph.duration_map()
    by_interval: dict[Interval, str] = {}
    for d in graph.durations:
        by_interval.setdefault(d.interval(), d.id)
    new_durations: dict[str, Duration] = {}
    taken = set(dmap)
    update: dict[str, object] = {}
    for key, nodes in _node_lists(graph).items():
        new_nodes: list[object] = []
        for n in nodes:
            ids: list[str] = n.duration_ids  # type: ignore[attr-defined]
            ivs = [(dmap[i].interval(), dmap[i]) for i in ids if i in dmap]
            blocks = merge_intervals([iv for iv, _ in ivs])
            new_ids: list[str] = []
            for block in blocks:
                if block in by_interval:
                    bid = by_interval[block]
                    if bid in dmap:
                        new_durations[bid] = dmap[bid]
                else:
                    bid = _block_id(block, taken)
                    taken.add(bid)
                    by_interval[block] = bid
                    ongoing = any(d.ongoing for iv, d in ivs if block[0] <= iv[0] and iv[1] <= block[1])
                    unit = coarsest_unit(*block)
                    u = UNIT_DAYS[unit]
                    new_durations[bid] = Duration(
                        id=bid, offset=block[0] // u, span=(block[1] - block[0]) // u, unit=unit, ongoing=ongoing
                    )
                new_ids.append(bid)
            new_nodes.append(n.model_copy(update={"duration_ids": new_ids}))  # type: ignore[attr-defined]
        update[key] = new_nodes
    # Keep pool order for existing durations, then new blocks sorted by interval; drop unreferenced ones.
    existing = [d for d in graph.durations if d.id in new_durations]
    added = sorted((d for i, d in new_durations.items() if i not in dmap), key=lambda d: (d.interval(), d.id))
    update["durations"] = existing + added
    return graph.model_copy(update=update)


def split_episodes(graph: CaseGraph) -> CaseGraph:
    """One symptom node per disjoint episode; STEB frames paired with episodes by temporal order.

    The earliest episode keeps the original id; later ones get ``<id>_e2``, ``<id>_e3``, … Every edge that touches
    the original symptom is copied to each episode node. With k frames and n episodes, frame i goes to episode i;
    surplus frames stay with the last episode (no frame is dropped, none invented).
    """
    dmap = graph.duration_map()
    taken = {i for i, _ in graph.iter_nodes()}
    new_symptoms: list[Symptom] = []
    clones: dict[str, list[str]] = {}
    changed = False
    for s in graph.symptoms:
        ids = [i for i in s.duration_ids if i in dmap]
        if len(ids) <= 1:
            new_symptoms.append(s)
            continue
        changed = True
        ordered = sorted(ids, key=lambda i: (dmap[i].interval(), i))
        n = len(ordered)
        frames = list(s.contexts)
        per_episode: list[list[object]] = [[] for _ in range(n)]
        for k, frame in enumerate(frames):
            per_episode[min(k, n - 1)].append(frame)
        clone_ids: list[str] = []
        for k, did in enumerate(ordered):
            if k == 0:
                nid = s.id
            else:
                nid, j = f"{s.id}_e{k + 1}", k + 1
                while nid in taken:
                    j += 1
                    nid = f"{s.id}_e{j}"
                taken.add(nid)
            clone_ids.append(nid)
            new_symptoms.append(
                s.model_copy(update={"id": nid, "duration_ids": [did], "contexts": per_episode[k]})
            )
        clones[s.id] = clone_ids
    if not changed:
        return graph
    edges: list[Edge] = []
    for e in graph.edges:
        sources = clones.get(e.source, [e.source])
        targets = clones.get(e.target, [e.target])
        for src in sources:
            for tgt in targets:
                edges.append(e.model_copy(update={"source": src, "target": tgt}))
    edges = list({e.key(): e for e in edges}.values())
    return graph.model_copy(update={"symptoms": new_symptoms, "edges": edges})


def recompute_current(graph: CaseGraph) -> CaseGraph:
    """``current_symptom`` iff one of the symptom's intervals covers day 0. Untimed symptoms keep their flag."""
    dmap = graph.duration_map()
    h = horizon(graph)
    new: list[Symptom] = []
    for s in graph.symptoms:
        ivs = [duration_interval(dmap[i], h) for i in s.duration_ids if i in dmap]
        current = covers_day0(ivs) if ivs else s.current_symptom
        new.append(s if current == s.current_symptom else s.model_copy(update={"current_symptom": current}))
    return graph.model_copy(update={"symptoms": new})


def rebuild_presents_with(graph: CaseGraph) -> CaseGraph:
    """PRESENTS_WITH edges from the visit to exactly the current symptoms (existing evidence text kept)."""
    visit = graph.visit_event.id
    old = {e.target: e for e in graph.edges if e.type == RelationType.PRESENTS_WITH and e.source == visit}
    others = [e for e in graph.edges if e.type != RelationType.PRESENTS_WITH]
    pw = [
        old.get(s.id) or Edge(type=RelationType.PRESENTS_WITH, source=visit, target=s.id)
        for s in graph.symptoms
        if s.current_symptom
    ]
    return graph.model_copy(update={"edges": others + pw})


def drop_unreferenced(graph: CaseGraph) -> CaseGraph:
    used = {i for n in graph.temporal_nodes() for i in n.duration_ids}
    keep = [d for d in graph.durations if d.id in used]
    if len(keep) == len(graph.durations):
        return graph
    return graph.model_copy(update={"durations": keep})


def normalize(graph: CaseGraph) -> CaseGraph:
    """Run the whole temporal pipeline; idempotent."""
    g = finalize_spans(graph)
    g = deduplicate(g)
    g = reconcile(g)
    g = deduplicate(g)
    g = split_episodes(g)
    g = recompute_current(g)
    g = rebuild_presents_with(g)
    g = drop_unreferenced(g)
    # Re-validate once so callers get a model whose invariants (unique ids) were checked.
    return CaseGraph.model_validate(g.model_dump())
