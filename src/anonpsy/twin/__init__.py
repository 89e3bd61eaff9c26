"""RecordTwin: k-anonymous synthetic corpora from anonymized entities, with re-identification and utility
evaluation.

Never rewrite a document: extract its clinical entities, k-anonymize the corpus-level document–entity table, and
write each synthetic document only from its anonymized entity set plus a few separately anonymized style
examples. Modules, in pipeline order:

* :mod:`~anonpsy.twin.corpus` -- JSONL (optionally gzip) or ``.txt`` corpora with their metadata.
* :mod:`~anonpsy.twin.concepts` -- entity types, canonical concepts and the generalisation hierarchy.
* :mod:`~anonpsy.twin.mentions` -- the mention and assertion layers over the project's extraction.
* :mod:`~anonpsy.twin.table` -- the sparse document–entity table and its files.
* :mod:`~anonpsy.twin.anonymize` -- frequency floor, generalisation, nearest-neighbour grouping, verification,
  information loss.
* :mod:`~anonpsy.twin.lines`, :mod:`~anonpsy.twin.textops`, :mod:`~anonpsy.twin.writers`,
  :mod:`~anonpsy.twin.generate` -- lines of entities, the example pool, the rules and llm writers, the leak
  check, the baselines and the resumable run.
* :mod:`~anonpsy.twin.evaluate`, :mod:`~anonpsy.twin.report` -- re-identification, ROUGE-L, diversity, TSTR/TRTR.

Everything but the table needs the ``twin`` extra (scikit-learn, scipy, rouge-score, matplotlib).
"""
