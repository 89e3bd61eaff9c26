"""Persona priors (``rules/personas/*.yaml``, kind ``persona_priors``), seeded persona sampling and the rules
backend's latent-severity response model.

A :class:`Persona` is a sex, an age and one level of each of :data:`ATTRIBUTES` (severity, response style,
symptom awareness, communication style, consistency), drawn from the priors with a random generator derived from
``(seed, row)`` only: row *i* is the same whatever the number of rows asked for.

The response model (:func:`item_probabilities`, :func:`respond`) is Samejima's graded response model with
parameters derived from the persona -- an explicit, documented baseline, not a model of any real population:

* latent severity ``theta = (centre(severity) + N(0, theta_sd)) * prod(theta_scale) + sum(theta_shift)``;
* for item *j* a per-item wobble ``theta_j = theta + N(0, sqrt(sum(item_noise_sd ** 2)))``;
* thresholds ``b_k`` spread evenly over ``[thresholds.low, thresholds.high]`` (K - 1 of them for K response
  codes), then ``b'_k = c + (b_k - c) * prod(threshold_scale) + sum(threshold_shift) + rarity_j`` with ``c``
  their centre;
* ``P(X >= k) = logistic(a * (theta_j - b'_k))`` with ``a = discrimination * prod(discrimination effects)``;
  the answer is the ``k``-th code for one uniform draw ``u``: the number of thresholds with ``u < P(X >= k)``.

Everything here is pure Python (no numpy) so that ``anonpsy tabular synth --backend rules`` and ``anonpsy rules
check`` run on the core install.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.paths import rules_dir
from anonpsy.tabular.instruments import Instrument
from anonpsy.yamlio import load_yaml

KIND = "persona_priors"
ATTRIBUTES = ("severity", "response_style", "symptom_awareness", "communication_style", "consistency")
#: Reason codes of a persona that the priors do not allow (the ``violations`` of failing cases).
REASONS = ("AGE_OUT_OF_RANGE", "MISSING_ATTRIBUTE", "UNKNOWN_LEVEL", "UNKNOWN_SEX")
_TOL = 1e-6


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Effects(_Model):
    theta: float | None = None
    theta_scale: float = Field(default=1.0, gt=0, le=3)
    theta_shift: float = Field(default=0.0, ge=-3, le=3)
    threshold_shift: float = Field(default=0.0, ge=-3, le=3)
    threshold_scale: float = Field(default=1.0, gt=0, le=3)
    discrimination: float = Field(default=1.0, gt=0, le=5)
    item_noise_sd: float = Field(default=0.0, ge=0, le=3)


class Level(_Model):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    p: float = Field(ge=0, le=1)
    description: str = Field(min_length=3)
    effects: Effects = Effects()


class Attribute(_Model):
    id: Literal["severity", "response_style", "symptom_awareness", "communication_style", "consistency"]
    description: str
    levels: tuple[Level, ...] = Field(min_length=1)
    by_sex: dict[str, dict[str, float]] = Field(default_factory=dict)

    def level(self, level_id: str) -> Level | None:
        return next((lv for lv in self.levels if lv.id == level_id), None)

    def weights(self, sex: str) -> list[float]:
        override = self.by_sex.get(sex)
        return [override[lv.id] for lv in self.levels] if override else [lv.p for lv in self.levels]


class SexLevel(_Model):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    code: int | str
    p: float = Field(ge=0, le=1)


class AgeBand(_Model):
    min: int = Field(ge=0, le=120)
    max: int = Field(ge=0, le=120)
    p: float = Field(ge=0, le=1)


class AgePrior(_Model):
    min: int = Field(ge=0, le=120)
    max: int = Field(ge=0, le=120)
    bands: tuple[AgeBand, ...] = Field(min_length=1)


class Thresholds(_Model):
    low: float
    high: float


class ModelParams(_Model):
    thresholds: Thresholds
    discrimination: float = Field(gt=0, le=5)
    theta_sd: float = Field(ge=0, le=3)


class PersonaPriors(_Model):
    kind: Literal["persona_priors"]
    version: int = Field(ge=1)
    id: str
    source: str
    sex: tuple[SexLevel, ...] = Field(min_length=1)
    age: AgePrior
    model: ModelParams
    attributes: tuple[Attribute, ...]

    @model_validator(mode="after")
    def _invariants(self) -> PersonaPriors:
        problems = priors_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def attribute(self, attr_id: str) -> Attribute:
        for a in self.attributes:
            if a.id == attr_id:
                return a
        raise KeyError(attr_id)

    def sex_code(self, sex: str) -> int | str:
        return next(s.code for s in self.sex if s.id == sex)

    def sex_coding(self) -> dict[str, int | str]:
        return {s.id: s.code for s in self.sex}


def priors_problems(pr: PersonaPriors) -> list[str]:
    """Invariants of a priors file, as messages (empty when sound)."""
    out: list[str] = []
    ids = [a.id for a in pr.attributes]
    missing = [a for a in ATTRIBUTES if a not in ids]
    if missing or len(set(ids)) != len(ids):
        out.append(f"attributes must be exactly {list(ATTRIBUTES)} once each (missing {missing})")
    if abs(sum(s.p for s in pr.sex) - 1) > _TOL:
        out.append("sex probabilities must sum to 1")
    if len({s.code for s in pr.sex}) != len(pr.sex) or len({s.id for s in pr.sex}) != len(pr.sex):
        out.append("sex ids and codes must be distinct")
    if not pr.age.min <= pr.age.max:
        out.append("age.min must not exceed age.max")
    expect = pr.age.min
    for band in pr.age.bands:
        if band.min != expect or band.max < band.min:
            out.append(f"age band {band.min}-{band.max} must start at {expect} (bands tile age.min..age.max)")
        expect = band.max + 1
    if expect != pr.age.max + 1:
        out.append(f"age bands must end at age.max {pr.age.max}")
    if abs(sum(b.p for b in pr.age.bands) - 1) > _TOL:
        out.append("age band probabilities must sum to 1")
    if pr.model.thresholds.low >= pr.model.thresholds.high:
        out.append("model.thresholds.low must be below high")
    sexes = {s.id for s in pr.sex}
    for a in pr.attributes:
        lv_ids = [lv.id for lv in a.levels]
        if len(set(lv_ids)) != len(lv_ids):
            out.append(f"{a.id}: level ids must be distinct")
        if abs(sum(lv.p for lv in a.levels) - 1) > _TOL:
            out.append(f"{a.id}: level probabilities must sum to 1")
        for sex, table in a.by_sex.items():
            if sex not in sexes:
                out.append(f"{a.id}: by_sex names unknown sex {sex!r}")
            if set(table) != set(lv_ids) or abs(sum(table.values()) - 1) > _TOL:
                out.append(f"{a.id}: by_sex.{sex} must give every level once, summing to 1")
        has_theta = [lv.effects.theta is not None for lv in a.levels]
        if a.id == "severity" and not all(has_theta):
            out.append("severity: every level needs effects.theta")
        if a.id != "severity" and any(has_theta):
            out.append(f"{a.id}: only severity levels may set effects.theta")
    return out


@dataclass(frozen=True)
class Persona:
    """One simulated respondent: ``sex`` is a level id of the priors (its code goes in the table)."""

    row: int
    sex: str
    age: int
    severity: str
    response_style: str
    symptom_awareness: str
    communication_style: str
    consistency: str

    def attributes(self) -> dict[str, str]:
        return {a: getattr(self, a) for a in ATTRIBUTES}

    def as_dict(self) -> dict[str, Any]:
        return {"row": self.row, "sex": self.sex, "age": self.age, **self.attributes()}


def _rng(seed: int, row: int, stream: str) -> random.Random:
    return random.Random(f"anonpsy.tabular:{seed}:{row}:{stream}")


def _choice(rng: random.Random, ids: Sequence[str], weights: Sequence[float]) -> str:
    return rng.choices(list(ids), weights=list(weights), k=1)[0]


def age_bands_for(priors: PersonaPriors, instrument: Instrument | None) -> list[tuple[int, int, float]]:
    """Age bands of the priors clipped to the instrument's age range, with their (unnormalised) weights."""
    lo, hi = instrument.age_range if instrument is not None else (0, 120)
    out = []
    for b in priors.age.bands:
        a, z = max(b.min, lo), min(b.max, hi)
        if a <= z and b.p > 0:
            out.append((a, z, b.p * (z - a + 1) / (b.max - b.min + 1)))
    if not out:
        raise AnonpsyError(errors.E109_BAD_OPTION,
                           f"the persona priors' ages {priors.age.min}-{priors.age.max} do not meet the "
                           f"instrument's age range {lo}-{hi}", "--priors")
    return out


def sample_persona(priors: PersonaPriors, seed: int, row: int, instrument: Instrument | None = None) -> Persona:
    """The persona of table row ``row`` (0-based) for ``seed``; independent of how many rows are drawn."""
    rng = _rng(seed, row, "persona")
    sex = _choice(rng, [s.id for s in priors.sex], [s.p for s in priors.sex])
    bands = age_bands_for(priors, instrument)
    band = rng.choices(bands, weights=[w for _, _, w in bands], k=1)[0]
    age = rng.randint(band[0], band[1])
    levels = {}
    for attr_id in ATTRIBUTES:
        attr = priors.attribute(attr_id)
        levels[attr_id] = _choice(rng, [lv.id for lv in attr.levels], attr.weights(sex))
    return Persona(row=row, sex=sex, age=age, **levels)


def persona_problems(priors: PersonaPriors, persona: Mapping[str, Any]) -> list[str]:
    """Reason codes why the priors do not allow ``persona`` (a mapping of sex, age and the attributes)."""
    codes: list[str] = []
    if persona.get("sex") not in {s.id for s in priors.sex}:
        codes.append("UNKNOWN_SEX")
    age = persona.get("age")
    if isinstance(age, bool) or not isinstance(age, int) or not priors.age.min <= age <= priors.age.max:
        codes.append("AGE_OUT_OF_RANGE")
    for attr_id in ATTRIBUTES:
        if attr_id not in persona:
            codes.append("MISSING_ATTRIBUTE")
        elif priors.attribute(attr_id).level(str(persona[attr_id])) is None:
            codes.append("UNKNOWN_LEVEL")
    return sorted(set(codes))


# ------------------------------------------------------------------------------------------- response model


@dataclass(frozen=True)
class ItemModel:
    """Graded-response parameters of one persona: latent severity, item-noise sd, discrimination and the
    transformed thresholds (before each item's rarity)."""

    theta: float
    noise_sd: float
    discrimination: float
    thresholds: tuple[float, ...]


def _effects(priors: PersonaPriors, persona: Persona) -> list[Effects]:
    return [priors.attribute(a).level(v).effects for a, v in persona.attributes().items()]  # type: ignore[union-attr]


def persona_model(priors: PersonaPriors, persona: Persona, n_codes: int, seed: int) -> ItemModel:
    """The persona's graded-response parameters for an instrument with ``n_codes`` response codes."""
    effects = _effects(priors, persona)
    centre = priors.attribute("severity").level(persona.severity).effects.theta  # type: ignore[union-attr]
    assert centre is not None
    rng = _rng(seed, persona.row, "theta")
    theta = centre + rng.gauss(0.0, priors.model.theta_sd) if priors.model.theta_sd else centre
    theta = theta * math.prod(e.theta_scale for e in effects) + sum(e.theta_shift for e in effects)
    low, high = priors.model.thresholds.low, priors.model.thresholds.high
    k = n_codes - 1
    base = [(low + high) / 2] if k == 1 else [low + (high - low) * i / (k - 1) for i in range(k)]
    c = (low + high) / 2
    scale = math.prod(e.threshold_scale for e in effects)
    shift = sum(e.threshold_shift for e in effects)
    thresholds = tuple(c + (b - c) * scale + shift for b in base)
    noise = math.sqrt(sum(e.item_noise_sd**2 for e in effects))
    a = priors.model.discrimination * math.prod(e.discrimination for e in effects)
    return ItemModel(theta=theta, noise_sd=noise, discrimination=a, thresholds=thresholds)


def _logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def item_probabilities(model: ItemModel, theta_j: float, rarity: float) -> list[float]:
    """``P(X >= k)`` for k = 1..K-1 (non-increasing in k)."""
    return [_logistic(model.discrimination * (theta_j - (b + rarity))) for b in model.thresholds]


def respond(
    priors: PersonaPriors, persona: Persona, instrument: Instrument, seed: int
) -> list[int]:
    """The persona's answers to every item of ``instrument`` (codes of its scale), deterministic in the seed."""
    model = persona_model(priors, persona, len(instrument.values), seed)
    rng = _rng(seed, persona.row, f"answers:{instrument.id}")
    out = []
    for item in instrument.items:
        theta_j = model.theta + (rng.gauss(0.0, model.noise_sd) if model.noise_sd else 0.0)
        u = rng.random()
        steps = sum(1 for p in item_probabilities(model, theta_j, item.rarity) if u < p)
        out.append(instrument.values[steps])
    return out


# ----------------------------------------------------------------------------------------------------- loading


def personas_dir() -> Path:
    return rules_dir() / "personas"


def priors_from_doc(doc: dict[str, Any], location: str = "priors") -> PersonaPriors:
    try:
        return PersonaPriors.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " -> ".join(str(p) for p in first["loc"]) or "(top level)"
        raise AnonpsyError(errors.E103_SCHEMA, f"persona priors are invalid at [{where}]: {first['msg']}",
                           location) from None


@lru_cache(maxsize=16)
def _load(path: str) -> PersonaPriors:
    p = Path(path)
    try:
        doc = load_yaml(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AnonpsyError(errors.E100_MISSING_FILE, "persona priors file not found", path) from None
    except yaml.YAMLError:
        raise AnonpsyError(errors.E102_MALFORMED_YAML, "persona priors file is not valid YAML", path) from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise AnonpsyError(errors.E103_SCHEMA, f"not a persona priors file (expected 'kind: {KIND}')", path)
    return priors_from_doc(doc, path)


def load_priors(path: str | Path | None = None) -> PersonaPriors:
    """Load a priors file; ``None`` gives the bundled ``rules/personas/priors.yaml``."""
    return _load(str(path if path is not None else personas_dir() / "priors.yaml"))
