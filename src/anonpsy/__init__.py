"""anonpsy: de-identify psychiatric case narratives while keeping their clinical structure."""

__version__ = "0.1.0"
