"""The one place where the twin package imports the project's extraction: sentences and sections, the mention
finders, and the assertion statuses of one mention (with the rule that decided each). Everything else in
:mod:`anonpsy.twin` goes through here."""

from __future__ import annotations

from anonpsy.extract.assertion.scope import classify_in_sentence, is_family
from anonpsy.extract.assertion.status import Mention as StatusMention
from anonpsy.extract.assertion.status import diagnosis_status, symptom_status, treatment_status
from anonpsy.extract.mentions.diagnoses import find_diagnoses, is_instrument_name
from anonpsy.extract.mentions.symptoms import symptom_mentions
from anonpsy.extract.mentions.treatments import medication_mentions, therapy_mentions
from anonpsy.extract.sections import Sentence, section_name, sentences

__all__ = [
           "Sentence",
           "StatusMention",
           "classify_in_sentence",
           "diagnosis_status",
           "find_diagnoses",
           "is_family",
           "is_instrument_name",
           "medication_mentions",
           "section_name",
           "sentences",
           "symptom_mentions",
           "symptom_status",
           "therapy_mentions",
           "treatment_status",
]
