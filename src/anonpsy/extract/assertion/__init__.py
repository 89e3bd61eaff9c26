"""Assertion: is a mention negated, uncertain, hypothetical, historical, or someone else's?"""
