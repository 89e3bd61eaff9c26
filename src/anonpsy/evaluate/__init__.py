"""Evaluation harness: how far a de-identification method lowers re-identification risk and how much clinical
structure it keeps.

Modules, from metrics to report:

* :mod:`~anonpsy.evaluate.embeddings` -- offline sentence encoders (all-MiniLM-L6-v2 by default), long texts
  chunked by sentence and mean-pooled.
* :mod:`~anonpsy.evaluate.similarity` -- cosine similarity of original vs output per case.
* :mod:`~anonpsy.evaluate.canonical` -- DSM label canonicalization (specifiers, synonyms, rule ids).
* :mod:`~anonpsy.evaluate.diagnosis` -- diagnosis soft-F1 by greedy semantic matching.
* :mod:`~anonpsy.evaluate.lexical` -- ROUGE-L F.
* :mod:`~anonpsy.evaluate.reident` -- nearest-document Jaccard re-identification and judge-rubric summaries.
* :mod:`~anonpsy.evaluate.stats` -- typed wrappers over scipy / statsmodels tests.
* :mod:`~anonpsy.evaluate.report` and :mod:`~anonpsy.evaluate.plots` -- Markdown, JSON and PNG reports.

Nothing here is imported eagerly: the heavy dependencies (torch, sentence-transformers, scipy, statsmodels,
rouge-score, matplotlib) come with the ``eval`` extra and are imported only by the functions that need them.
"""

from __future__ import annotations
