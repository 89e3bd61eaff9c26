"""ICD-10-CM surface forms for the RecordTwin vocabulary: the shared reader of :mod:`anonpsy.icd10cm`."""

from anonpsy.icd10cm import (
    MAX_PAREN_FORMS,
    RANK_HEAD,
    RANK_NOS,
    RANK_SUB,
    RANK_SYNONYM,
    RANK_TITLE,
    Category,
    CategorySurfaces,
    SurfaceRules,
    Tabular,
    build_surfaces,
    display_name,
    forms_of,
    load_tabular,
    paren_forms,
    tabular_path,
)

__all__ = ["MAX_PAREN_FORMS", "RANK_HEAD", "RANK_NOS", "RANK_SUB", "RANK_SYNONYM", "RANK_TITLE", "Category",
           "CategorySurfaces", "SurfaceRules", "Tabular", "build_surfaces", "display_name", "forms_of",
           "load_tabular", "paren_forms", "tabular_path"]
