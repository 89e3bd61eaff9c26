"""Migration of version-1 case graphs to version 2 (see :mod:`anonpsy.graph` for what version 2 adds).

:func:`migrate_data` works on the raw mapping read from a file, before validation, so that a version-1 file
loads as a version-2 :class:`~anonpsy.graph.CaseGraph`; graphs are only ever written as version 2. A mapping
without ``schema_version`` is taken to be of the current version. Every value the migration decides records the
rule ``migrate.v1.<field>.<value it was decided from>`` as its evidence (no source offsets: a version-1 graph does
not know its source text). The decisions:

* diagnosis ``status``: current → confirmed / current; provisional → provisional / current; rule_out →
  rule_out / current; historical → confirmed / past;
* symptom ``assertion``: present when ``current_symptom`` is set, else historical (version 1 kept only asserted
  symptoms: a denied symptom was dropped);
* treatment ``status``: past when every duration of the treatment ends by day 0 and none is ongoing, else
  current (version 1 cannot tell planned, refused or as-needed treatments apart; they stay current);
* family history: confirmed; past history keeps its status (nothing new is decided);
* the visit's legal status keeps its value and gets no evidence (``legal_status_evidence`` absent: a version-1
  graph does not know whether its note stated it), so it reads as before: stated when it differs from the status
  the setting and the way of arriving imply (:func:`anonpsy.graph.legal_status_stated`). A
  version-2 graph written before the field existed reads the same way;
* the free-text ``test_results`` fields (labs, imaging, other) become structured values
  (:func:`anonpsy.extract.mentions.results.parse_results`) and the free-text ``mental_status`` becomes a
  :class:`~anonpsy.graph.MentalStatus` (:func:`anonpsy.extract.mentions.mse.parse_mental_status`). Nothing of
  the old text is kept verbatim, because generation would copy it: what could not be structured is counted in
  ``omitted`` (field, word count, reason).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anonpsy.graph import SCHEMA_VERSION, UNIT_DAYS, Omission, TestValue, Unit

if TYPE_CHECKING:
    from anonpsy.extract.mentions.results import ResultField

_DX_STATUS = {
    "current": ("confirmed", "current"),
    "provisional": ("provisional", "current"),
    "rule_out": ("rule_out", "current"),
    "historical": ("confirmed", "past"),
}
_TEST_FIELDS: tuple[ResultField, ...] = ("labs", "imaging", "other")


class MigrationError(ValueError):
    """A graph of a version this code cannot read."""


def _rule(*parts: str) -> dict[str, str]:
    return {"rule_id": ".".join(("migrate", "v1", *parts))}


def _ends_by_day0(durations: dict[Any, Any], ids: list[Any]) -> bool:
    ends: list[bool] = []
    for did in ids:
        d = durations.get(did) if isinstance(did, str) else None
        if not isinstance(d, dict):
            return False
        offset, span, ongoing = d.get("offset"), d.get("span"), d.get("ongoing", False)
        unit = d.get("unit", Unit.day.value)
        if ongoing or not isinstance(offset, int) or not isinstance(span, int) or unit not in Unit.__members__:
            return False
        ends.append((offset + span) * UNIT_DAYS[Unit(unit)] <= 0)
    return bool(ends) and all(ends)


def _nodes(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key)
    return [n for n in value if isinstance(n, dict)] if isinstance(value, list) else []


def migrate_data(data: dict[str, Any]) -> dict[str, Any]:
    """A version-2 mapping from a version-1 (or version-2) graph mapping; the input is not modified.

    Raises :class:`MigrationError` for a version this code does not know.
    """
    version = str(data.get("schema_version", SCHEMA_VERSION))
    if version == SCHEMA_VERSION:
        return data
    if version != "1":
        raise MigrationError(f"schema_version {version!r} is not supported; this version reads 1 and 2")
    import copy

    out = copy.deepcopy(data)
    out["schema_version"] = SCHEMA_VERSION
    for dx in _nodes(out, "diagnoses"):
        old = dx.pop("status", "current")
        certainty, temporality = _DX_STATUS.get(str(old), (old, old))
        dx["certainty"], dx["temporality"] = certainty, temporality
        dx["certainty_evidence"] = _rule("status", str(old))
        dx["temporality_evidence"] = _rule("status", str(old))
    for sx in _nodes(out, "symptoms"):
        current = bool(sx.get("current_symptom", False))
        sx["assertion"] = "present" if current else "historical"
        sx["assertion_evidence"] = _rule("current_symptom", str(current).lower())
    durations = {d.get("id"): d for d in _nodes(out, "durations")}
    for tx in _nodes(out, "treatments"):
        ids = tx.get("duration_ids")
        past = _ends_by_day0(durations, ids if isinstance(ids, list) else [])
        tx["status"] = "past" if past else "current"
        tx["status_evidence"] = _rule("durations", "ended" if past else "default")
    for fh in _nodes(out, "family_history"):
        fh["certainty"] = "confirmed"
        fh["certainty_evidence"] = _rule("family_history", "default")
    tr = out.get("test_results")
    if isinstance(tr, dict):
        out["test_results"], mse, omitted = _migrate_tests(tr)
        if mse is not None:
            out["mental_status"] = mse
        if omitted:
            out["omitted"] = omitted
    return out


def _migrate_tests(tr: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, list[dict[str, Any]]]:
    from anonpsy.extract.mentions.mse import parse_mental_status
    from anonpsy.extract.mentions.results import number_values, parse_results

    if "values" in tr and not any(k in tr for k in (*_TEST_FIELDS, "mental_status")):
        return tr, None, []
    values: list[TestValue] = []
    omitted: list[Omission] = []
    for field in _TEST_FIELDS:
        text = tr.get(field)
        if isinstance(text, str) and text.strip():
            found, skipped = parse_results(text, field, rule_id=f"migrate.v1.test_results.{field}")
            values += found
            omitted += skipped
        elif text is not None and not isinstance(text, str):
            raise MigrationError(f"test_results.{field} of a version-1 graph must be text")
    mse: dict[str, Any] | None = None
    text = tr.get("mental_status")
    if isinstance(text, str) and text.strip():
        exam, skipped = parse_mental_status(text, section=None, rule_id="migrate.v1.test_results.mental_status")
        mse = exam.model_dump(mode="json")
        omitted += skipped
    unknown = set(tr) - {*_TEST_FIELDS, "mental_status"}
    if unknown:
        raise MigrationError(f"test_results.{sorted(unknown)[0]} is not a version-1 field")
    return ({"values": [v.model_dump(mode="json") for v in number_values(values)]}, mse,
            [o.model_dump(mode="json") for o in omitted])
