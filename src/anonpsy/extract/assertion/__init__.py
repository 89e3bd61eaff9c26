"""Assertion: is a mention negated, uncertain, hypothetical, historical, or someone else's?

* :mod:`~anonpsy.extract.assertion.context` — the ConText engine over ``rules/lexicon/context.yaml``;
* :mod:`~anonpsy.extract.assertion.scope` — how far a mention's context reaches in a sentence and a section.
"""
