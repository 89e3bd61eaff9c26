"""Assertion: is a mention negated, uncertain, hypothetical, historical, or someone else's?

* :mod:`~anonpsy.extract.assertion.status` — the interface the assembly step uses: one function per kind of fact
  returning each status value with its evidence (source span, section, deciding rule id);
* :mod:`~anonpsy.extract.assertion.context` — the ConText engine over ``rules/lexicon/context.yaml``;
* :mod:`~anonpsy.extract.assertion.scope` — how far a mention's context reaches in a sentence and a section.
"""
