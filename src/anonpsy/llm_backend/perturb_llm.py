"""The LLM backend of perturbation P: context rewriting held to the same invariants as the rules backend.

Order of work on a normalised graph:

1. :func:`anonpsy.perturb.perturb` — age, sex, ethnicity, occupation and test values, deterministically;
2. ethnicity / occupation *suggestions* from the model, accepted only when the core pools and age rules allow them
   (``tables.ethnicity_allowed``, ``tables.occupation_allowed``); a rejected suggestion keeps the deterministic draw;
3. STEB frames rewritten in retrograde temporal order (chronological with ``no_retro``), one call per symptom with
   a short window of frames already rewritten and the patient's age at the event; only the fields present before
   are filled; a rewrite that stays too close to the original (rapidfuzz ``token_set_ratio``, and embedding cosine
   when :mod:`anonpsy.evaluate.embeddings` is available) or names a new finding is retried a bounded number of
   times, then the rules backend's generalisation applies;
4. the visit episode and reason for visit rewritten inside the immutable scaffold (checked afterwards with
   ``tables.immutable_visit_fields()``);
5. identifiers left in any narrative field are replaced by neutral descriptions (as in the rules backend).

The mental status examination is structured findings (normalised values with no age or sex wording), so it needs
no rewriting; the ``perturb_mse`` template of the free-text examination is no longer called.

Every change is in the audit with the template or rule that allowed it; every fallback is a note.

When a model call of a step still fails after the client's retries and re-ask, the rules backend does that field:
its draws stand for the demographic suggestions, its context perturbation
(:func:`anonpsy.perturb.contexts.perturb_contexts`) gives the symptom's STEB fields, and identifiers are scrubbed
from the visit text; each such fallback is recorded in ``audit.fallbacks``. With ``strict`` (``--strict-llm``)
nothing falls back to the rules backend: an invalid reply keeps the behaviour above (generalisation, scrubbing)
and any other failure ends the case.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from anonpsy import lexicon
from anonpsy.audit import Audit, Change, Kept
from anonpsy.errors import AnonpsyError
from anonpsy.graph import STEB, CaseGraph, Symptom
from anonpsy.llm.errors import LLMError, LLMReplyError
from anonpsy.llm_backend.steps import LLMBackendError, StepContext
from anonpsy.perturb import check, perturb
from anonpsy.perturb.contexts import (
    RULE_SCRUB,
    RULE_STRESSOR,
    SIMILARITY_MAX,
    perturb_contexts,
    scrub_identifiers,
    stressor_category,
)
from anonpsy.perturb.demographics import occupation_candidates, support_level
from anonpsy.rules import tables
from anonpsy.temporal import duration_interval, horizon
from anonpsy.textfields import map_graph_text

OPERATOR = "perturbation"
#: Cosine similarity at or above which an embedding-checked rewrite is too close to the original.
EMBEDDING_MAX = 0.85
#: Extra asks for fields whose rewrite was rejected (too close, a new finding, missing).
MAX_REWRITE_RETRIES = 2
#: Frames already rewritten that are shown with each STEB call.
WINDOW = 3
#: Occupations offered to the model (a seeded sample of the allowed pool).
OCCUPATION_OPTIONS = 30
UNSPECIFIED = "an unspecified circumstance"
#: Fields whose rewrite is not held to the similarity filter (an emotion word is not identifying).
_NO_SIMILARITY = frozenset({"emotion"})


def _template_rule(template_id: str) -> str:
    return f"llm.{template_id}@v1"


def _step_failed(ctx: StepContext, exc: LLMError, step: str, code: str, detail: str) -> bool:
    """Handle a failed model call of a P step; True when the rules backend does the step (recorded).

    The note ``code detail`` is always written. Under ``strict`` an invalid reply keeps the step's own degraded
    behaviour (False) and any other failure is raised; otherwise :meth:`StepContext.fall_back` decides.
    """
    ctx.note(code, detail)
    if ctx.strict and isinstance(exc, LLMReplyError):
        return False
    ctx.fall_back(exc, stage="perturbation", step=step)
    return True


@lru_cache(maxsize=1)
def embedding_similarity() -> Callable[[str, str], float] | None:
    """Cosine similarity from :mod:`anonpsy.evaluate.embeddings` when an encoder loads offline, else None.

    ``ANONPSY_LLM_EMBEDDINGS=0`` switches the embedding filter off (the token-set filter always applies).
    """
    if os.environ.get("ANONPSY_LLM_EMBEDDINGS", "1") == "0":
        return None
    try:
        from anonpsy.evaluate.embeddings import load_encoder

        encoder = load_encoder()
    except (ImportError, OSError, AnonpsyError):
        return None

    def cosine(a: str, b: str) -> float:
        va, vb = encoder.encode([a, b])
        return float(sum(x * y for x, y in zip(va, vb, strict=True)))

    return cosine


def too_close(old: str, new: str, similarity: Callable[[str, str], float] | None = None) -> bool:
    """Whether a rewrite stays too close to the original (token-set ratio, then embedding cosine)."""
    if fuzz.token_set_ratio(old.lower(), new.lower()) >= SIMILARITY_MAX:
        return True
    return similarity is not None and similarity(old, new) >= EMBEDDING_MAX


def headwords(text: str) -> set[str]:
    """Symptom-lexicon headwords named in ``text``."""
    return {m.headword for m in lexicon.find_terms(text, "symptom")}


def rewrite_problem(
    old: str, new: Any, *, field: str, allowed: set[str], similarity: Callable[[str, str], float] | None
) -> str | None:
    """Why a rewritten field is rejected, or None when it is acceptable."""
    if not isinstance(new, str) or not new.strip():
        return "missing"
    if field not in _NO_SIMILARITY and too_close(old, new, similarity):
        return "too close to the original wording"
    if headwords(new) - headwords(old) - allowed:
        return "names a finding the original does not"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Demographic suggestions


def _replace_value(text: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, text, flags=re.I)


def suggest_demographics(graph: CaseGraph, original: CaseGraph, ctx: StepContext, audit: Audit) -> CaseGraph:
    """Replace the deterministic ethnicity / occupation draws by validated model suggestions."""
    changed = {
        c.path: c for c in audit.changes if c.path in ("demographics.ethnicity", "demographics.occupation")
    }
    if not changed:
        return graph
    d, od = graph.demographics, original.demographics
    sex = d.sex.value
    level = support_level(original)
    rng = random.Random(f"anonpsy:{ctx.seed}:{graph.case_id}:llm-demographics")
    eth_options: list[str] = []
    occ_options: list[str] = []
    occ_candidates: dict[str, str] = {}
    if "demographics.ethnicity" in changed and od.ethnicity:
        eth_options = [lbl for lbl, _ in tables.ethnicity_pool(sex) if lbl.lower() != od.ethnicity.lower()]
    if "demographics.occupation" in changed and od.occupation and d.age is not None:
        # The very list the rules backend drew from (kind, skill level, the age band for a job the age cannot
        # hold): the model is offered a sample of it and only a suggestion inside it is accepted.
        pool, _rule_id = occupation_candidates(od.occupation, d.age, level)
        occ_candidates = {tables.occupation_key(n): o.name for o in pool for n in (o.name, *o.aliases)}
        names = [o.name for o in pool]
        occ_options = sorted(rng.sample(names, min(OCCUPATION_OPTIONS, len(names))))
    payload = {
        "age": d.age,
        "sex": sex,
        "current": {
            "ethnicity": od.ethnicity if eth_options else None,
            "occupation": od.occupation if occ_options else None,
        },
        "ethnicity_options": eth_options,
        "occupation_options": occ_options,
    }
    try:
        reply = ctx.ask("perturb_demographics", payload, operator=OPERATOR)
    except LLMError as exc:
        _step_failed(
            ctx, exc, "perturb_demographics", "P_SUGGESTION_FALLBACK",
            f"perturb_demographics: {exc.code}; deterministic draws kept",
        )
        return graph
    g = graph
    for name, options in (("ethnicity", eth_options), ("occupation", occ_options)):
        path = f"demographics.{name}"
        if not options:
            continue
        suggestion = reply.get(name)
        original_value = str(getattr(od, name))
        if not isinstance(suggestion, str) or not suggestion.strip():
            ctx.note("P_SUGGESTION_REJECTED", f"{name}: no suggestion; deterministic draw kept")
            continue
        suggestion = suggestion.strip()
        if name == "ethnicity":
            problems = tables.ethnicity_allowed(suggestion, sex)
        else:
            assert d.age is not None
            problems = tables.occupation_allowed(d.age, suggestion, level)
            if not problems and tables.occupation_key(suggestion) not in occ_candidates:
                problems = ["OCCUPATION_NOT_A_CANDIDATE"]
        if suggestion.lower() == original_value.lower():
            problems = [*problems, "SAME_AS_ORIGINAL"]
        if problems:
            ctx.note("P_SUGGESTION_REJECTED", f"{name}: {', '.join(problems)}; deterministic draw kept")
            continue
        canonical = (occ_candidates.get(tables.occupation_key(suggestion), suggestion) if name == "occupation"
                     else next((o for o in options if o.lower() == suggestion.lower()), suggestion))
        change = changed[path]
        draw = str(change.new)
        if canonical.lower() == draw.lower():
            continue
        g = g.model_copy(update={"demographics": g.demographics.model_copy(update={name: canonical})})
        rule_id = change.rule_id

        def apply(p: str, text: str, draw: str = draw, new: str = canonical, rule_id: str = rule_id) -> str:
            out = _replace_value(text, draw, new)
            if out != text:
                audit.changes.append(
                    Change(
                        path=p,
                        rule_id=rule_id,
                        old=text,
                        new=out,
                        detail="model suggestion replaced the deterministic draw",
                    )
                )
            return out

        g = map_graph_text(g, apply)
        change.new = canonical
        change.detail = (
            (change.detail + "; ") if change.detail else ""
        ) + "suggested by the language model (perturb_demographics@v1) and validated by this rule"
    return g


# ---------------------------------------------------------------------------------------------------------------
# STEB frames


def _symptom_order(graph: CaseGraph, retro: bool) -> list[tuple[Symptom, int | None]]:
    dmap = graph.duration_map()
    h = horizon(graph)

    def start(s: Symptom) -> int | None:
        ivs = [duration_interval(dmap[i], h) for i in s.duration_ids if i in dmap]
        return min((a for a, _ in ivs), default=None)

    items = [(s, start(s)) for s in graph.symptoms if s.contexts]
    items.sort(key=lambda x: (10**9 if x[1] is None else x[1], x[0].id))
    return list(reversed(items)) if retro else items


def _age_at(graph: CaseGraph, day: int | None) -> int | None:
    age = graph.demographics.age
    if age is None:
        return None
    return max(0, int(age + (day or 0) / 365)) if day is not None and day < 0 else age


def _generalise(old: str, field: str, path: str, audit: Audit) -> str:
    """The rules backend's generalisation of a field whose rewrite failed."""
    if field == "situation":
        category = stressor_category(old)
        new = lexicon.stressor_generalized(category)
        rule = f"{RULE_STRESSOR}.{category}.generalized" if category else f"{RULE_STRESSOR}.generalized"
    else:
        new, _ = scrub_identifiers(old)
        new = new or UNSPECIFIED
        rule = RULE_SCRUB
    audit.generalized.append(
        Change(path=path, rule_id=rule, old=old, new=new, detail="model rewrite rejected; generalised")
    )
    return new


def _rewrite_frames(
    ctx: StepContext,
    s: Symptom,
    age_at: int | None,
    window: list[dict[str, str]],
    *,
    episode_mode: bool,
    similarity: Callable[[str, str], float] | None,
) -> tuple[dict[tuple[int, str], str], bool]:
    """Accepted rewrites by (frame index, field), and whether the rules backend is to do the fields left."""
    frames_in = [{f: str(getattr(fr, f)) for f in fr.present_fields()} for fr in s.contexts]
    payload = {
        "symptom": s.headword,
        "age_at_event": age_at,
        "mode": "episode" if episode_mode else "steb",
        "frames": frames_in,
        "already_rewritten": window[-WINDOW:],
    }
    pending = {(k, f) for k, fr in enumerate(frames_in) for f in fr}
    accepted: dict[tuple[int, str], str] = {}
    feedback = ""
    for _attempt in range(1 + MAX_REWRITE_RETRIES):
        try:
            reply = ctx.ask("perturb_steb", payload, operator=OPERATOR, feedback=feedback)
        except LLMError as exc:
            rules = _step_failed(
                ctx, exc, f"perturb_steb:{s.id}", "P_STEB_FALLBACK",
                f"{s.id}: {exc.code}; " + ("generalised" if ctx.strict else "rules backend"),
            )
            return accepted, rules
        frames_out: list[dict[str, Any]] = list(reply.get("frames") or [])
        problems: list[str] = []
        if len(frames_out) != len(frames_in):
            problems.append(f"return exactly {len(frames_in)} frame(s), got {len(frames_out)}")
        extra = sum(
            1
            for k, fr in enumerate(frames_out[: len(frames_in)])
            for f, v in fr.items()
            if v and f not in frames_in[k]
        )
        if extra:
            ctx.note("P_STEB_EXTRA_FIELD", f"{s.id}: {extra} field(s) absent before were ignored")
            problems.append("fill only the fields present in each input frame; the others must be null")
        for k, f in sorted(pending):
            new = frames_out[k].get(f) if k < len(frames_out) else None
            why = rewrite_problem(frames_in[k][f], new, field=f, allowed={s.headword}, similarity=similarity)
            if why is None:
                accepted[(k, f)] = str(new).strip()
            else:
                problems.append(f"frames[{k}].{f}: {why}")
        pending -= accepted.keys()
        if not pending:
            break
        feedback = (
            "Your previous answer could not be used for these fields:\n"
            + "\n".join(f"- {p}" for p in problems)
            + "\nAnswer again with all frames; rewrite those fields in different words."
        )
    return accepted, False


class _RulesContexts:
    """The rules backend's context perturbation of the whole graph, computed on the first symptom that needs it;
    each symptom that falls back takes its frames and their audit entries from it."""

    def __init__(self, graph: CaseGraph, ctx: StepContext, retro: bool) -> None:
        self.graph, self.ctx, self.retro = graph, ctx, retro
        self._result: tuple[dict[str, Symptom], Audit] | None = None

    def field(self, sid: str, k: int, name: str, audit: Audit) -> str:
        """The rules value of one STEB field; its audit entries (if it changed) are copied to ``audit``."""
        if self._result is None:
            scratch = Audit(case_id=self.graph.case_id, seed=self.ctx.seed)
            done = perturb_contexts(
                self.graph, seed=self.ctx.seed, audit=scratch, source_text=self.ctx.source_text, retro=self.retro,
                identifiers=self.ctx.identifiers,
            )
            self._result = ({s.id: s for s in done.symptoms}, scratch)
        symptoms, scratch = self._result
        path = f"symptoms[{sid}].contexts[{k}].{name}"
        found = False
        for bucket, target in ((scratch.changes, audit.changes), (scratch.generalized, audit.generalized)):
            for c in bucket:
                if c.path == path:
                    found = True
                    detail = "; ".join(x for x in (c.detail, "rules backend (model step failed)") if x)
                    target.append(c.model_copy(update={"detail": detail}))
        if not found:
            audit.kept.append(Kept(path=path, reason="RULES_FALLBACK_NOTHING_IDENTIFYING", rule_id=RULE_SCRUB,
                                   detail="rules backend (model step failed): no identifying detail found"))
        value = getattr(symptoms[sid].contexts[k], name)
        return str(value) if value else UNSPECIFIED


def rewrite_contexts(
    graph: CaseGraph, ctx: StepContext, audit: Audit, *, retro: bool = True, episode_mode: bool = False
) -> CaseGraph:
    """STEB rewriting in retrograde (or chronological) order with a short window of rewritten frames."""
    similarity = embedding_similarity()
    window: list[dict[str, str]] = []
    new_contexts: dict[str, list[STEB]] = {}
    rules = _RulesContexts(graph, ctx, retro)
    for s, start in _symptom_order(graph, retro):
        accepted, by_rules = _rewrite_frames(
            ctx, s, _age_at(graph, start), window, episode_mode=episode_mode, similarity=similarity
        )
        frames: list[STEB] = []
        for k, frame in enumerate(s.contexts):
            update: dict[str, str] = {}
            for f in frame.present_fields():
                old = str(getattr(frame, f))
                path = f"symptoms[{s.id}].contexts[{k}].{f}"
                if (k, f) in accepted:
                    update[f] = accepted[(k, f)]
                    audit.changes.append(
                        Change(
                            path=path,
                            rule_id=_template_rule("perturb_steb"),
                            old=old,
                            new=update[f],
                            detail="rewritten; similarity filter passed",
                        )
                    )
                elif by_rules:
                    update[f] = rules.field(s.id, k, f, audit)
                else:
                    update[f] = _generalise(old, f, path, audit)
            new_frame = frame.model_copy(update=update)
            frames.append(new_frame)
            window.append({f: str(getattr(new_frame, f)) for f in new_frame.present_fields()})
        new_contexts[s.id] = frames
    if not new_contexts:
        return graph
    symptoms = [s.model_copy(update={"contexts": new_contexts.get(s.id, s.contexts)}) for s in graph.symptoms]
    return graph.model_copy(update={"symptoms": symptoms})


# ---------------------------------------------------------------------------------------------------------------
# Visit episode


_VISIT_TEXT = ("reason_for_visit", "visit_episode")


def _scaffold(reply_or_visit: Any) -> dict[str, Any]:
    def get(name: str) -> Any:
        return reply_or_visit.get(name) if isinstance(reply_or_visit, dict) else getattr(reply_or_visit, name)

    def val(x: Any) -> str:
        return str(getattr(x, "value", x))

    return {
        "setting": val(get("setting")),
        "arrival_mode": val(get("arrival_mode")),
        "legal_status": val(get("legal_status")),
        "safety_flags": sorted(val(f) for f in get("safety_flags") or []),
    }


def rewrite_visit(graph: CaseGraph, ctx: StepContext, audit: Audit) -> CaseGraph:
    """Rewrite the visit narrative; the scaffold the model echoes must equal the original one."""
    ve = graph.visit_event
    fields = {f: str(getattr(ve, f)) for f in _VISIT_TEXT if getattr(ve, f)}
    if not fields:
        return graph
    scaffold = _scaffold(ve)
    payload = {
        "scaffold": scaffold,
        "age": graph.demographics.age,
        "sex": graph.demographics.sex.value,
        **{f: getattr(ve, f) for f in _VISIT_TEXT},
    }
    similarity = embedding_similarity()
    current = headwords(" ".join(s.headword for s in graph.symptoms))
    accepted: dict[str, str] = {}
    feedback = ""
    by_rules = False
    for _attempt in range(1 + MAX_REWRITE_RETRIES):
        try:
            reply = ctx.ask("perturb_visit", payload, operator=OPERATOR, feedback=feedback)
        except LLMError as exc:
            by_rules = _step_failed(
                ctx, exc, "perturb_visit", "P_VISIT_FALLBACK",
                f"perturb_visit: {exc.code}; identifiers scrubbed instead",
            )
            break
        problems: list[str] = []
        if _scaffold(reply) != scaffold:
            ctx.note(
                "P_VISIT_SCAFFOLD_CHANGED", "perturb_visit: the reply changed an immutable field; rejected"
            )
            problems.append("setting, arrival_mode, legal_status and safety_flags must be copied unchanged")
        else:
            for f in sorted(set(fields) - accepted.keys()):
                why = rewrite_problem(
                    fields[f], reply.get(f), field=f, allowed=current, similarity=similarity
                )
                if why is None:
                    accepted[f] = str(reply[f]).strip()
                else:
                    problems.append(f"{f}: {why}")
        if set(fields) <= accepted.keys():
            break
        feedback = (
            "Your previous answer could not be used:\n"
            + "\n".join(f"- {p}" for p in problems)
            + "\nAnswer again."
        )
    update: dict[str, str] = {}
    for f, old in fields.items():
        path = f"visit_event.{f}"
        if f in accepted:
            update[f] = accepted[f]
            audit.changes.append(
                Change(
                    path=path,
                    rule_id=_template_rule("perturb_visit"),
                    old=old,
                    new=update[f],
                    detail="rewritten inside the immutable visit scaffold",
                )
            )
        else:
            new, _ = scrub_identifiers(
                old, keep_ages={graph.demographics.age} if graph.demographics.age else None
            )
            update[f] = new or "details withheld"
            audit.generalized.append(
                Change(
                    path=path,
                    rule_id=RULE_SCRUB,
                    old=old,
                    new=update[f],
                    detail="rules backend (model step failed): identifiers scrubbed"
                    if by_rules
                    else "model rewrite rejected; identifiers scrubbed",
                )
            )
    new_visit = ve.model_copy(update=update)
    for fld in tables.immutable_visit_fields():
        if getattr(new_visit, fld) != getattr(ve, fld):
            raise LLMBackendError(
                f"visit rewrite changed the immutable field {fld!r}", template_id="perturb_visit"
            )
    return graph.model_copy(update={"visit_event": new_visit})


# ---------------------------------------------------------------------------------------------------------------


def scrub_remaining(graph: CaseGraph, audit: Audit) -> CaseGraph:
    """Neutral descriptions for identifiers still in any narrative field (as the rules backend does).

    The PHI analyzer runs once per distinct text: evidence sentences recur across nodes, and the scrub of a text
    depends on the text alone (each field that changes still gets its own audit entry).
    """
    age = graph.demographics.age
    keep = {age} if age is not None else set()
    scrubbed: dict[str, tuple[str, list[str]]] = {}

    def fn(path: str, text: str) -> str:
        if text not in scrubbed:
            scrubbed[text] = scrub_identifiers(text, keep_ages=keep)
        new, types = scrubbed[text]
        if new == text:
            return text
        new = new or (UNSPECIFIED if ".contexts[" in path else "details withheld")
        audit.changes.append(
            Change(
                path=path,
                rule_id=RULE_SCRUB,
                old=text,
                new=new,
                detail="replaced: " + ", ".join(sorted(set(types))),
            )
        )
        return new

    return map_graph_text(graph, fn)


def perturb_with_llm(
    graph: CaseGraph, ctx: StepContext, *, options: dict[str, Any] | None = None
) -> tuple[CaseGraph, Audit]:
    """LLM-backed P over a normalised graph; returns the perturbed graph and its audit (violations filled)."""
    opts = options or {}
    g, audit = perturb(graph, ctx.seed)
    audit.backend = "llm"
    g = suggest_demographics(g, graph, ctx, audit)
    g = rewrite_contexts(
        g, ctx, audit, retro=not opts.get("no_retro"), episode_mode=bool(opts.get("no_steb"))
    )
    g = rewrite_visit(g, ctx, audit)
    g = scrub_remaining(g, audit)
    audit.violations = [v.model_dump() for v in check(graph, g)]
    return g, audit
