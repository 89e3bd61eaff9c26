"""Generation of a synthetic corpus: RecordTwin and the three baselines of the method's paper.

=========== ================================================================================================
method      each synthetic document is written from
=========== ================================================================================================
recordtwin  its anonymized lines of entities (published names, generalisations marked, blanks for deleted
            entities), its sentence count and N style examples from a separately anonymized pool
replace     nothing new: the original text with every mention rewritten to its anonymized version (kept,
            generalised or blanked)
orge        its *original* lines of entities (no anonymization), sentence count and the same style examples
orgd        the original document itself as the only example
=========== ================================================================================================

The pool is ``pool_size`` kept documents drawn with the seed; each is anonymized on its own
(:func:`~anonpsy.twin.textops.anonymize_example`): entity mentions rewritten to its published set, identifiers
masked, rare words blanked. A target's examples are the N pool documents nearest to it (cosine over the
published sets with their ancestors), never the target itself.

**Leak check** (recordtwin): every concept named anywhere in a generated document, whatever its assertion, is
compared with the target's published set. Naming a deleted entity of the document, a specific entity where only
its generalisation is published, any specific member of a published generalisation, a generalisation of a
deleted entity, or a concept the frequency floor removed from the corpus is a *violation*: the document is
written again (the llm backend is told which of its own words were not allowed) up to ``max_attempts`` times,
then the run fails (``on_violation="fail"``, exit 1) or the document is left out and listed
(``on_violation="drop"``, exit 1 at the end). Other concepts the target does not have are counted as
*extraneous* (a violation too with ``strict``).

Outputs are written as the module :mod:`~anonpsy.twin.store` describes; a run is resumable from its journal
and deterministic given the seed (each document's generator is seeded with ``seed`` and its id, and the output
is assembled in table order, so the llm backend's concurrent requests -- the client configuration's
``concurrency`` -- do not change it).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.twin.anonymize import item_for
from anonpsy.twin.concepts import Hierarchy
from anonpsy.twin.errors import T103_BAD_OPTION, T106_STALE_RUN, T107_LEAK
from anonpsy.twin.lines import Line, entity_lines
from anonpsy.twin.mentions import Matcher
from anonpsy.twin.store import SYNTH_FORMAT, VERSION, AnonymizedTable
from anonpsy.twin.table import Table
from anonpsy.twin.textops import (
    Boilerplate,
    floor_words,
    mask_identifiers,
    replace_text,
    style_sentences,
    token_df,
)
from anonpsy.twin.writers import Example, Request, Writer
from anonpsy.yamlio import write_atomic

METHODS = ("recordtwin", "replace", "orge", "orgd")
DELETED = "deleted"
NOT_GENERALISED = "not_generalised"
RARE = "rare"
EXTRANEOUS = "extraneous"
FSYNC_EVERY = 50


class LeakError(AnonpsyError):
    """A generated document still names a concept it may not name after every attempt (exit status 1)."""


@dataclass(frozen=True)
class Settings:
    """What shapes a run's output (its hash guards resumption)."""

    method: str = "recordtwin"
    backend: str = "rules"
    examples: int = 2
    pool_size: int = 20
    word_floor: int | None = None
    seed: int = 0
    docs: str = "kept"
    strict: bool = False
    max_attempts: int = 3
    on_violation: str = "fail"
    limit: int | None = None

    def validate(self) -> None:
        if self.method not in METHODS:
            raise AnonpsyError(T103_BAD_OPTION, f"unknown method; choose one of {', '.join(METHODS)}", "--method")
        if self.examples < 0 or self.pool_size < 0:
            raise AnonpsyError(T103_BAD_OPTION, "--examples and --pool-size must not be negative", "--examples")
        if self.examples > self.pool_size:
            raise AnonpsyError(T103_BAD_OPTION, "--examples cannot exceed --pool-size", "--examples")
        if self.max_attempts < 1:
            raise AnonpsyError(T103_BAD_OPTION, "--max-attempts must be at least 1", "--max-attempts")
        if self.docs not in ("kept", "all"):
            raise AnonpsyError(T103_BAD_OPTION, "--docs must be kept or all", "--docs")
        if self.limit is not None and self.limit < 1:
            raise AnonpsyError(T103_BAD_OPTION, "--limit must be at least 1", "--limit")
        if self.on_violation not in ("fail", "drop"):
            raise AnonpsyError(T103_BAD_OPTION, "--on-violation must be fail or drop", "--on-violation")


@dataclass(frozen=True)
class Check:
    """Result of the leak check of one document: violations (code, concept) and extraneous concepts."""

    violations: tuple[tuple[str, str], ...]
    extraneous: tuple[str, ...]
    surfaces: tuple[tuple[int, int], ...] = ()

    def failed(self, strict: bool) -> bool:
        return bool(self.violations) or (strict and bool(self.extraneous))


@dataclass
class Corpus:
    """A table with its texts, its anonymization and the hierarchy; the per-document views generation needs."""

    table: Table
    texts: Mapping[str, str]
    anon: AnonymizedTable | None
    h: Hierarchy
    matcher: Matcher
    _df: Counter[str] | None = field(default=None, repr=False)
    _bp: dict[int, Boilerplate] = field(default_factory=dict, repr=False)

    def published(self, d: str) -> frozenset[str]:
        return self.anon.published.get(d, frozenset()) if self.anon is not None else frozenset()

    def original(self, d: str) -> frozenset[str]:
        return frozenset(self.table.rows.get(d, {}))

    def item(self, d: str) -> Callable[[str], str | None]:
        pub = self.published(d)
        return lambda c: item_for(c, pub, self.h)

    def other(self, d: str) -> Callable[[str], str | None]:
        """Where a non-entity mention (negated, a relative's …) goes: a concept of the document follows the
        document's outcome; any other follows the corpus-wide recoding (a rare concept is generalised or blanked)."""
        orig = self.original(d)
        item = self.item(d)
        rec = self.anon.recoding if self.anon is not None else {}

        def go(c: str) -> str | None:
            if c in orig:
                return item(c)
            return rec.get(c, c)

        return go

    def boilerplate(self, floor: int) -> Boilerplate:
        if floor not in self._bp:
            self._bp[floor] = Boilerplate.build((self.texts[d.doc_id] for d in self.table.docs), self.matcher, floor)
        return self._bp[floor]

    def token_df(self) -> Counter[str]:
        if self._df is None:
            self._df = token_df(self.texts[d.doc_id] for d in self.table.docs)
        return self._df


# -------------------------------------------------------------------------------------------------------------
# Targets, pool and examples


def targets(c: Corpus, s: Settings) -> list[str]:
    """Source documents that get a synthetic twin, in table order (the first ``limit`` only when given)."""
    return _targets(c, s)[:s.limit] if s.limit is not None else _targets(c, s)


def _targets(c: Corpus, s: Settings) -> list[str]:
    ids = [d.doc_id for d in c.table.docs]
    if s.method == "recordtwin" or s.docs == "kept":
        if c.anon is None:
            raise AnonpsyError(T103_BAD_OPTION, "this method needs an anonymized table", "DIR")
        return [d for d in ids if c.published(d)]
    if s.method == "orge":
        return [d for d in ids if c.original(d)]
    return ids


def pool_ids(c: Corpus, s: Settings) -> list[str]:
    """The example pool: ``pool_size`` kept documents drawn with the seed (sorted)."""
    if s.examples == 0:
        return []
    kept = sorted(d.doc_id for d in c.table.docs if c.published(d.doc_id)) if c.anon is not None \
        else sorted(d.doc_id for d in c.table.docs if c.original(d.doc_id))
    rng = random.Random(f"{s.seed}:pool")
    return sorted(rng.sample(kept, min(s.pool_size, len(kept))))


def word_floor(c: Corpus, s: Settings) -> int:
    return s.word_floor if s.word_floor is not None else max(c.anon.k if c.anon is not None else 2, 5)


def anonymize_example(c: Corpus, d: str, floor: int) -> Example:
    """A pool document made safe to show a generator (see :mod:`~anonpsy.twin.textops`)."""
    text = c.texts[d]
    ments = c.table.mentions.get(d, [])
    replaced = replace_text(text, ments, c.item(d), c.other(d), c.h)
    safe = floor_words(mask_identifiers(replaced), c.token_df(), floor)
    lines = entity_lines(ments, c.h, c.item(d))
    return Example(d, safe, tuple(style_sentences(safe, c.matcher, c.boilerplate(floor))), tuple(lines))


def original_example(c: Corpus, d: str) -> Example:
    """The source document as its own example (ORGD with the rules backend)."""
    text = c.texts[d]
    ments = c.table.mentions.get(d, [])
    return Example(d, text, tuple(style_sentences(text, c.matcher)), tuple(entity_lines(ments, c.h)))


def _expanded(items: frozenset[str], h: Hierarchy) -> frozenset[str]:
    return frozenset(a for x in items for a in h.lineage(x))


def nearest(c: Corpus, d: str, pool: Sequence[str], n: int, use_published: bool) -> list[str]:
    """The ``n`` pool documents nearest to ``d`` by cosine over sets with ancestors (ties by id), ``d`` excluded."""
    if n == 0:
        return []
    rows = c.published if use_published else c.original
    me = _expanded(rows(d), c.h)
    scored = []
    for p in pool:
        if p == d:
            continue
        other = _expanded(rows(p), c.h)
        denom = math.sqrt(len(me) * len(other))
        scored.append((-(len(me & other) / denom if denom else 0.0), p))
    return [p for _, p in sorted(scored)[:n]]


# -------------------------------------------------------------------------------------------------------------
# Leak check


def check_text(c: Corpus, d: str, text: str) -> Check:
    """Compare every concept named in ``text`` with what document ``d`` may name (module docstring)."""
    allowed = c.published(d)
    implied = _expanded(allowed, c.h)
    orig = c.original(d)
    orig_closure = _expanded(orig, c.h)
    item = c.item(d)
    rec = c.anon.recoding if c.anon is not None else {}
    violations: list[tuple[str, str]] = []
    extraneous: list[str] = []
    where: list[tuple[int, int]] = []
    for sp in c.matcher.spans(text):
        x = sp.concept
        if x in implied:
            continue
        if x in orig_closure:
            code = NOT_GENERALISED if x in orig and item(x) is not None else DELETED
        elif rec.get(x, x) != x:
            code = RARE
        elif any(a in allowed for a in c.h.ancestors(x)):
            code = NOT_GENERALISED
        else:
            extraneous.append(x)
            continue
        violations.append((code, x))
        where.append((sp.start, sp.end))
    return Check(tuple(violations), tuple(extraneous), tuple(where))


def feedback_for(text: str, check: Check) -> str:
    """Re-ask message naming the writer's own words that were not allowed (never anything from the source)."""
    words = sorted({text[a:b] for a, b in check.surfaces})
    quoted = ", ".join(f'"{w}"' for w in words)
    return ("Your previous reply named clinical entities that are not in the lines: " + quoted + ". Write the "
            "document again without them and without any other entity that is not in the lines; for an entity "
            "marked (general), write only its general words.")


# -------------------------------------------------------------------------------------------------------------
# The run


@dataclass
class RunResult:
    """Counts of one run (written to ``summary.json``)."""

    total: int = 0
    generated: int = 0
    resumed: int = 0
    dropped: list[str] = field(default_factory=list)
    attempts: Counter[int] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    extraneous: int = 0
    documents_with_extraneous: int = 0

    def merge(self, other: RunResult) -> None:
        """Add the counts of one document's run."""
        self.generated += other.generated
        self.dropped.extend(other.dropped)
        self.attempts.update(other.attempts)
        self.violations.update(other.violations)
        self.extraneous += other.extraneous
        self.documents_with_extraneous += other.documents_with_extraneous


def settings_hash(s: Settings, extra: Mapping[str, Any]) -> str:
    payload = json.dumps({"settings": asdict(s), **extra}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _read_journal(path: Path, key: str, restart: bool) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        head = json.loads(lines[0]) if lines else {}
    except ValueError:
        head = {}
    if head.get("settings_hash") != key:
        if restart:
            path.unlink()
            return {}
        raise AnonpsyError(T106_STALE_RUN, "the output directory holds an unfinished run with other settings; "
                           "use another directory or --restart", path.parent.name)
    done: dict[str, dict[str, Any]] = {}
    for line in lines[1:]:
        try:
            rec = json.loads(line)
        except ValueError:
            break  # a line cut short by an interruption: that document is generated again
        done[str(rec["source"])] = rec
    return done


def run(c: Corpus, s: Settings, writer: Writer, outdir: Path, *, extra: Mapping[str, Any] | None = None,
        restart: bool = False, progress: Callable[[int], None] | None = None,
        on_start: Callable[[int], None] | None = None) -> tuple[dict[str, Any], RunResult]:
    """Generate (or resume) a synthetic corpus into ``outdir``; returns (manifest, counts)."""
    s.validate()
    todo = targets(c, s)
    extra = dict(extra or {})
    key = settings_hash(s, extra)
    outdir.mkdir(parents=True, exist_ok=True)
    journal = outdir / "journal.jsonl"
    finished = outdir / "manifest.json"
    if finished.is_file():
        prev = json.loads(finished.read_text(encoding="utf-8"))
        if prev.get("settings_hash") == key and not restart:
            return prev, RunResult(total=len(todo), resumed=len(todo))
        if not restart:
            raise AnonpsyError(T106_STALE_RUN, "the output directory holds a synthetic corpus made with other "
                               "settings; use another directory or --restart", outdir.name)
        for name in ("synthetic.jsonl", "links.jsonl", "summary.json", "manifest.json"):
            (outdir / name).unlink(missing_ok=True)
    done = _read_journal(journal, key, restart)
    pool = pool_ids(c, s)
    floor = word_floor(c, s)
    use_pub = s.method in ("recordtwin", "replace")
    examples: dict[str, Example] = {}
    if s.method in ("recordtwin", "orge"):
        examples = {p: anonymize_example(c, p, floor) for p in pool}
    res = RunResult(total=len(todo), resumed=sum(1 for d in todo if d in done))
    if on_start is not None:
        on_start(len(todo) - res.resumed)
    new = not journal.is_file()
    fresh = [d for d in todo if d not in done]

    def work(d: str) -> tuple[dict[str, Any], RunResult]:
        delta = RunResult()
        return _one(c, s, writer, d, pool, examples, use_pub, delta), delta

    workers = max(1, int(getattr(writer, "workers", 1)))
    fh = journal.open("a", encoding="utf-8")
    try:
        if new:
            fh.write(json.dumps({"settings_hash": key}) + "\n")
        pending = 0
        with ThreadPoolExecutor(max_workers=workers) as pool_ex:
            # One document at a time per worker; the journal is written here only, in completion order.
            results = (f.result() for f in as_completed([pool_ex.submit(work, d) for d in fresh])) \
                if workers > 1 else (work(d) for d in fresh)
            try:
                for rec, delta in results:
                    res.merge(delta)
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    fh.flush()
                    pending += 1
                    if pending >= FSYNC_EVERY:
                        os.fsync(fh.fileno())
                        pending = 0
                    done[rec["source"]] = rec
                    if progress is not None:
                        progress(1)
            except BaseException:
                pool_ex.shutdown(wait=True, cancel_futures=True)
                raise
        fh.flush()
        os.fsync(fh.fileno())
    finally:
        fh.close()
    for rec in done.values():
        if rec.get("status") == "dropped" and rec["source"] not in res.dropped:
            res.dropped.append(rec["source"])
    manifest = _finish(c, s, outdir, todo, done, key, res, extra, pool, floor)
    journal.unlink()
    return manifest, res


def _request(c: Corpus, s: Settings, d: str, pool: Sequence[str], examples: Mapping[str, Example],
             use_pub: bool, backend: str) -> Request:
    ments = c.table.mentions.get(d, [])
    n = c.table.doc(d).sentences
    if s.method == "orgd":
        if backend == "llm":
            return Request(d, tuple(entity_lines(ments, c.h)), n, (), s.seed, source_text=c.texts[d])
        return Request(d, tuple(entity_lines(ments, c.h)), n, (original_example(c, d),), s.seed)
    lines: list[Line] = entity_lines(ments, c.h, c.item(d) if s.method == "recordtwin" else None)
    ex = tuple(examples[p] for p in nearest(c, d, pool, s.examples, use_pub))
    return Request(d, tuple(lines), n, ex, s.seed, boilerplate=c.boilerplate(word_floor(c, s)))


def _one(c: Corpus, s: Settings, writer: Writer, d: str, pool: Sequence[str], examples: Mapping[str, Example],
         use_pub: bool, res: RunResult) -> dict[str, Any]:
    if s.method == "replace":
        text = replace_text(c.texts[d], c.table.mentions.get(d, []), c.item(d), c.other(d), c.h)
        res.generated += 1
        return {"source": d, "status": "ok", "text": text, "attempts": 1}
    req = _request(c, s, d, pool, examples, use_pub, writer.name)
    feedback = ""
    last: Check | None = None
    for attempt in range(1, s.max_attempts + 1):
        text = writer.write(req, feedback)
        if s.method != "recordtwin":
            res.generated += 1
            res.attempts[attempt] += 1
            return {"source": d, "status": "ok", "text": text, "attempts": attempt}
        chk = check_text(c, d, text)
        for code, _ in chk.violations:
            res.violations[code] += 1
        if not text.strip():
            chk = Check((("empty", ""),), ())
        if not chk.failed(s.strict):
            res.generated += 1
            res.attempts[attempt] += 1
            res.extraneous += len(chk.extraneous)
            res.documents_with_extraneous += bool(chk.extraneous)
            return {"source": d, "status": "ok", "text": text, "attempts": attempt,
                    "extraneous": len(chk.extraneous)}
        last = chk
        feedback = feedback_for(text, chk) if writer.name == "llm" else ""
        if writer.name != "llm":
            break  # a deterministic writer writes the same text again
    codes = sorted({code for code, _ in (last.violations if last else ())}) or [EXTRANEOUS]
    if s.on_violation == "fail":
        raise LeakError(T107_LEAK, f"the generated text still names a concept it may not name ({', '.join(codes)}) "
                        f"after {s.max_attempts if writer.name == 'llm' else 1} attempt(s); the run stops "
                        "(rerun to resume, or --on-violation drop)", f"doc {d}")
    res.dropped.append(d)
    return {"source": d, "status": "dropped", "codes": codes}


def _finish(c: Corpus, s: Settings, outdir: Path, todo: Sequence[str], done: Mapping[str, dict[str, Any]],
            key: str, res: RunResult, extra: Mapping[str, Any], pool: Sequence[str], floor: int) -> dict[str, Any]:
    ok = [d for d in todo if done.get(d, {}).get("status") == "ok"]
    order = list(ok)
    random.Random(f"{s.seed}:shuffle").shuffle(order)
    width = max(5, len(str(len(order))))
    ids = {d: f"syn-{i + 1:0{width}d}" for i, d in enumerate(order)}
    synth = "".join(json.dumps({"id": ids[d], "text": done[d]["text"]}, ensure_ascii=False) + "\n" for d in order)
    links = "".join(json.dumps({"id": ids[d], "source": d}) + "\n" for d in order)
    write_atomic(outdir / "synthetic.jsonl", synth)
    write_atomic(outdir / "links.jsonl", links)
    attempts = Counter(int(done[d].get("attempts", 1)) for d in ok)
    summary = {
        "method": s.method, "backend": s.backend, "targets": len(todo), "generated": len(ok),
        "dropped": sorted(d for d in todo if done.get(d, {}).get("status") == "dropped"),
        "attempts": {str(k): v for k, v in sorted(attempts.items())},
        "violations_this_run": dict(sorted(res.violations.items())),
        "documents_with_extraneous": sum(1 for d in ok if done[d].get("extraneous")),
        "extraneous_mentions": sum(int(done[d].get("extraneous", 0)) for d in ok),
        "pool": list(pool), "word_floor": floor,
    }
    write_atomic(outdir / "summary.json", json.dumps(summary, indent=2) + "\n")
    manifest = {"format": SYNTH_FORMAT, "version": VERSION, "settings_hash": key, **asdict(s),
                "word_floor": floor, "documents": len(ok), **extra}
    write_atomic(outdir / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest
