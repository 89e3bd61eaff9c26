"""The one place where the twin package imports the project's extraction: sentence segmentation, the mention
finders and the ConText assertion of one mention. Everything else in :mod:`anonpsy.twin` goes through here, so a
change of the extraction's module layout changes this file only."""

from __future__ import annotations

from anonpsy.extract.rules_backend import classify_in_sentence, find_diagnoses, is_instrument_name, symptom_mentions
from anonpsy.extract.segment import Sentence, section_name, sentences

__all__ = ["Sentence", "classify_in_sentence", "find_diagnoses", "is_instrument_name", "section_name", "sentences",
           "symptom_mentions"]
