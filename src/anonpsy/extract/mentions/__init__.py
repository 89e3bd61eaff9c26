"""Mentions: what the text names and where — diagnoses, symptoms, drugs, therapies, demographics, dates, relatives."""
