"""Rule kind modules. Every module in this package registers one or more kinds on import."""

from __future__ import annotations

import importlib
import pkgutil

for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_m.name}")
