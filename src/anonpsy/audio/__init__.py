"""Audio de-identification: mute identifiers in clinical recordings (``anonpsy audio-deid``).

Modules: :mod:`~anonpsy.audio.signal` (read, check, resample, write), :mod:`~anonpsy.audio.vad` (voice
activity), :mod:`~anonpsy.audio.asr` (word timestamps: Moonshine timed by PocketSphinx alignment,
PocketSphinx alone, transcription servers), :mod:`~anonpsy.audio.moonshine_worker` (Moonshine in its own
process), :mod:`~anonpsy.audio.spoken` (spoken forms to written forms), :mod:`~anonpsy.audio.cues` (context rules),
:mod:`~anonpsy.audio.detect` (identifiers in the transcript), :mod:`~anonpsy.audio.gaps` (unaccounted speech),
:mod:`~anonpsy.audio.mute` (intervals and silencing), :mod:`~anonpsy.audio.pipeline` (the whole run).

The audio libraries (numpy, soundfile, soxr, webrtcvad, pocketsphinx, moonshine-cpp) are the ``audio`` extra;
this package imports them only where they are used, so the command can say what to install.
"""
