"""Ways to run the MiniLM model on this CPU: batch throughput, one-query latency, agreement with the
full-precision torch model, and the memory a web process holds with each.

    .venv/bin/python bench/encoders.py                    # all three parts, ~20 min on 2 shared cores
    .venv/bin/python bench/encoders.py --part batch       # or query, or rss
    .venv/bin/python bench/encoders.py --part rss --searches 10000
    .venv/bin/python bench/encoders.py --part variants      # the memories' ONNX variants, ~5 min

Texts are 2,000 LoCoMo-like memory contents (bench/corpus.py's memory_item, seed 7), measured per
text (not per memory: how many texts a memory needs is another change's business). Queries are 200
LoCoMo questions (bench/perf.py's sample, seed 11). No database is used.

batch  every variant encodes the texts in chunks of --chunk (one embed_texts call each); the variants
       take turns chunk by chunk, so that the shared machine's load falls on all of them alike;
       texts/s = texts / the variant's summed time. "unsorted" feeds encode() one batch at a time in
       corpus order (sentence-transformers sorts each call's texts by length itself).
query  every variant embeds one question at a time, the variants taking turns question by question.
agreement  each variant's vectors against the torch fp32 ones (mean and min cosine), and for a way of
       storing and querying: the mean share of each question's 10 nearest texts that the fp32 model
       also puts in its 10 nearest.
variants  the ONNX variants that may store memories (apps/memories/onnx_encoder.py VARIANTS; --variants to
       choose), at the settings' batch size, taking turns as in batch; texts/s, cosine to the fp32 file's vectors,
       and how far a text's vector moves with its batch mates: the least and mean cosine between the first 200
       texts' vectors in the run (batches of 16 sorted by length) and each text's vector encoded alone.
rss    a fresh process per setup loads what a web process loads (torch and get_model() with the torch
       backend only; the text encoder with one 64-text store, the query encoder), then embeds
       --searches questions through the search path's thread pool (apps/memories/services/retrieval/dense.py), 4 at a time; RSS after each
       step, then after malloc_trim(0) (what is in use), and the peak (VmHWM). Today's setup is the
       torch backend with main's batch size of 64.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import load_average, percentiles, write_json  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.bench")
    import django

    django.setup()


def corpus(size: int, queries: int) -> tuple[list[str], list[str]]:
    from bench.corpus import LOCOMO, locomo_pieces, memory_item
    from bench.perf import questions

    speakers, sentences = locomo_pieces(LOCOMO)
    texts = [memory_item(i, seed=7, speakers=speakers, sentences=sentences)["content"] for i in range(size)]
    return texts, questions(queries, 11)


def machine_line() -> str:
    import onnxruntime
    import torch

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")
    return (f"{os.cpu_count()} cores ({cpu}), torch {torch.__version__}, onnxruntime {onnxruntime.__version__}; "
            f"load average {load_average()}")


# --- the variants -------------------------------------------------------------------------------

def torch_encoder(model, *, batch_size: int, threads: int, sort: bool = True):
    import torch

    def encode(texts):
        torch.set_num_threads(threads)
        pieces = [texts] if sort else [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
        return np.concatenate([model.encode(piece, batch_size=batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False) for piece in pieces])
    return encode


def torch_int8(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8)


def onnx_encoder(model, *, variant: str, batch_size: int = 64, threads: int = 1):
    from django.conf import settings

    from apps.memories import embeddings, onnx_encoder as onnx

    path = onnx.model_file(embeddings._model_path(), settings.ENGRAM_EMBEDDING_CACHE_DIR, variant=variant)
    # per-tensor weights fail the probe check (cosine < 0.95 on a one-token text): measured, never shipped
    return onnx.encoder(embeddings.get_tokenizer(), path, variant=variant, threads=threads, batch_size=batch_size,
                        check=variant != "int8-per-tensor")


def traced_query_encoder(query_model, threads: int):
    import torch

    from apps.memories import embeddings

    traced = embeddings._traced_encoder(query_model)

    def encode(texts):
        torch.set_num_threads(threads)
        return np.array([traced(text) for text in texts], dtype=np.float32)
    return encode


def batch_variants(model, int8_model) -> dict:
    variants = {"torch fp32, batch 64 (today)": torch_encoder(model, batch_size=64, threads=1)}
    for size in (16, 32, 128):
        variants[f"torch fp32, batch {size}"] = torch_encoder(model, batch_size=size, threads=1)
    variants["torch fp32, batch 64, unsorted"] = torch_encoder(model, batch_size=64, threads=1, sort=False)
    variants["torch fp32, batch 64, 2 threads"] = torch_encoder(model, batch_size=64, threads=2)
    variants["torch int8 (per-tensor), batch 64"] = torch_encoder(int8_model, batch_size=64, threads=1)
    variants["onnx fp32, batch 64"] = onnx_encoder(model, variant="fp32")
    variants["onnx int8 per-tensor, batch 64"] = onnx_encoder(model, variant="int8-per-tensor")
    for size in (16, 32, 64, 128):
        variants[f"onnx int8 per-channel, batch {size}"] = onnx_encoder(model, variant="int8", batch_size=size)
    variants["onnx int8 per-channel, batch 64, 2 threads"] = onnx_encoder(model, variant="int8", threads=2)
    return variants


def query_variants(model, int8_model) -> dict:
    return {
        "torch fp32 encode()": torch_encoder(model, batch_size=1, threads=1),
        "torch int8 encode()": torch_encoder(int8_model, batch_size=1, threads=1),
        "torch int8 traced (today)": traced_query_encoder(int8_model, 1),
        "torch int8 traced, 2 threads": traced_query_encoder(int8_model, 2),
        "onnx fp32": onnx_encoder(model, variant="fp32"),
        "onnx int8 per-tensor": onnx_encoder(model, variant="int8-per-tensor"),
        "onnx int8 per-channel": onnx_encoder(model, variant="int8"),
        "onnx int8 per-channel, 2 threads": onnx_encoder(model, variant="int8", threads=2),
    }


# --- measuring ----------------------------------------------------------------------------------

def run_batch(variants: dict, texts: list[str], chunk: int, rounds: int) -> tuple[dict, dict]:
    names = list(variants)
    seconds = dict.fromkeys(names, 0.0)
    vectors = {}
    for name in names:  # warm up: first calls allocate
        variants[name](texts[:chunk // 4])
    turn = 0
    for round_ in range(rounds):
        for start in range(0, len(texts), chunk):
            piece = texts[start:start + chunk]
            order = names[turn % len(names):] + names[:turn % len(names)]
            turn += 1
            for name in order:
                began = time.perf_counter()
                out = variants[name](piece)
                seconds[name] += time.perf_counter() - began
                if round_ == 0:
                    vectors.setdefault(name, []).append(out)
        print(f"  batch round {round_ + 1}/{rounds} done, load {load_average()}", flush=True)
    rates = {name: round(rounds * len(texts) / seconds[name], 1) for name in names}
    return rates, {name: np.concatenate(parts) for name, parts in vectors.items()}


def run_query(variants: dict, questions: list[str], rounds: int) -> tuple[dict, dict]:
    names = list(variants)
    samples = {name: [] for name in names}
    vectors = {name: [] for name in names}
    for name in names:
        for question in questions[:20]:
            variants[name]([question])
    for round_ in range(rounds):
        for index, question in enumerate(questions):
            order = names[index % len(names):] + names[:index % len(names)]
            for name in order:
                began = time.perf_counter()
                out = variants[name]([question])
                samples[name].append(1000 * (time.perf_counter() - began))
                if round_ == 0:
                    vectors[name].append(out[0])
    return ({name: percentiles(values) for name, values in samples.items()},
            {name: np.array(values, dtype=np.float32) for name, values in vectors.items()})


def cosines(vectors: np.ndarray, reference: np.ndarray) -> dict:
    values = (vectors * reference).sum(1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1))
    return {"mean": round(float(values.mean()), 4), "min": round(float(values.min()), 4)}


def overlap(stored: np.ndarray, queries: np.ndarray, stored_ref: np.ndarray, queries_ref: np.ndarray, k: int = 10):
    def nearest(s, q):
        return np.argsort(-(q @ s.T), axis=1)[:, :k]
    ours, theirs = nearest(stored, queries), nearest(stored_ref, queries_ref)
    return round(float(np.mean([len(set(a) & set(b)) / k for a, b in zip(ours, theirs)])), 3)


def run_variants(names: list[str], texts: list[str], chunk: int, rounds: int) -> dict:
    from django.conf import settings

    variants = {name: onnx_encoder(None, variant=name, batch_size=settings.ENGRAM_EMBEDDING_BATCH_SIZE)
                for name in names}
    rates, vectors = run_batch(variants, texts, chunk, rounds)
    reference = vectors["fp32"] if "fp32" in vectors else onnx_encoder(None, variant="fp32")(texts)
    figures = {}
    for name in names:
        alone = np.concatenate([variants[name]([text]) for text in texts[:200]])
        figures[name] = {"texts_per_s": rates[name], **cosines(vectors[name], reference),
                         "alone": cosines(alone, vectors[name][:200])}
    return figures


# --- web process memory -------------------------------------------------------------------------

def rss_child(backend: str, searches: int, trim: bool) -> None:
    """Runs in a fresh process: what a web process loads and does, with RSS after each step."""
    import ctypes

    import psutil

    process = psutil.Process()
    steps = []

    def note(step):
        steps.append((step, round(process.memory_info().rss / 2**20)))

    os.environ["ENGRAM_EMBEDDING_BACKEND"] = backend
    note("python")
    setup()
    note("django.setup()")
    if backend == "torch":  # the onnx backend's process never imports them
        import sentence_transformers  # noqa: F401
        import torch  # noqa: F401
        note("+ import torch, sentence_transformers")
    from apps.memories import embeddings, onnx_encoder
    from apps.memories.services.retrieval.dense import start_embedding

    if not trim:
        onnx_encoder.release_freed_memory = lambda: None
    texts, questions = corpus(64, 200)
    if backend == "torch":
        embeddings.get_model()
        note("+ get_model()")
    embeddings.embed_texts(texts)
    note("+ text encoder, one 64-text store")
    embeddings.embed_query(questions[0])
    note("+ query encoder, one query")
    began = time.perf_counter()
    for start in range(0, searches, 4):
        for future in [start_embedding(questions[(start + i) % len(questions)]) for i in range(4)]:
            future.result()
    elapsed = time.perf_counter() - began
    note(f"+ {searches} searches' query embeddings")
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # what is in use, without what glibc keeps for reuse
    note("malloc_trim(0)")
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec
    peak = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith("VmHWM"))
    print(json.dumps({"steps": steps, "peak": round(peak / 1024),
                      "ms_per_query": round(1000 * elapsed / searches, 2),
                      "text_encoder": repr(embeddings.get_text_encoder()),
                      "query_encoder": repr(embeddings.get_query_encoder()),
                      "torch_imported": "torch" in sys.modules}))


def run_rss(searches: int) -> dict:
    figures = {}
    for label, backend, trim, batch in (("torch (today: batch 64, int8 traced queries)", "torch", True, "64"),
                                        ("onnx int8 (batch 16)", "onnx", True, "16"),
                                        ("onnx int8 (batch 16), no malloc_trim", "onnx", False, "16")):
        command = [sys.executable, __file__, "--rss-child", backend, "--searches", str(searches)]
        if not trim:
            command.append("--no-trim")
        out = subprocess.run(command, check=True, capture_output=True, text=True,
                             env={**os.environ, "ENGRAM_EMBEDDING_BATCH_SIZE": batch}).stdout
        figures[label] = json.loads(out.strip().splitlines()[-1])
        print(f"  {label}: {figures[label]}", flush=True)
    return figures


# --- output -------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "batch", "query", "rss", "variants"), default="all")
    parser.add_argument("--variants", default="fp32,int8,int8-partial,int8-ffn,int8-inner,int8-no-ffn2,int8-equal",
                        help="the variants the variants part compares, comma-separated")
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--chunk", type=int, default=500, help="texts per encode call in the batch part")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--searches", type=int, default=10000)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--rss-child", choices=("torch", "onnx"), help=argparse.SUPPRESS)
    parser.add_argument("--no-trim", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args.rss_child, args.searches, not args.no_trim)
        return
    setup()
    from apps.memories import embeddings

    print(machine_line(), flush=True)
    figures = {"machine": machine_line()}
    if args.part == "variants":
        texts, _ = corpus(args.texts, 1)
        figures["variants"] = run_variants(args.variants.split(","), texts, args.chunk, args.rounds)
        print(f"\n{'variant, ' + str(len(texts)) + ' texts':24} {'texts/s':>8} {'cos mean':>9} {'cos min':>8} "
              f"{'alone mean':>11} {'alone min':>10}")
        for name, row in figures["variants"].items():
            print(f"{name:24} {row['texts_per_s']:>8} {row['mean']:>9} {row['min']:>8} {row['alone']['mean']:>11} "
                  f"{row['alone']['min']:>10}")
        print(f"load average now {load_average()}", flush=True)
        write_json(args.json, figures)
        return
    if args.part in ("all", "batch", "query"):
        import torch

        torch.set_num_threads(1)
        model = embeddings.get_model()
        int8_model = torch_int8(model)
        texts, questions = corpus(args.texts, args.queries)
        reference = torch_encoder(model, batch_size=64, threads=1)
        stored_ref, queries_ref = reference(texts), reference(questions)
        stored = {"torch fp32": stored_ref,
                  "torch int8": torch_encoder(int8_model, batch_size=64, threads=1)(texts),
                  "onnx fp32": onnx_encoder(model, variant="fp32")(texts),
                  "onnx int8 per-tensor": onnx_encoder(model, variant="int8-per-tensor")(texts),
                  "onnx int8 per-channel": onnx_encoder(model, variant="int8")(texts)}
    if args.part in ("all", "batch"):
        rates, vectors = run_batch(batch_variants(model, int8_model), texts, args.chunk, args.rounds)
        figures["batch"] = {name: {"texts_per_s": rates[name], **cosines(vectors[name], stored_ref)}
                            for name in rates}
        print(f"\n{'batch encoding, ' + str(len(texts)) + ' texts':52} {'texts/s':>8} {'cos mean':>9} {'cos min':>8}")
        for name, row in figures["batch"].items():
            print(f"{name:52} {row['texts_per_s']:>8} {row['mean']:>9} {row['min']:>8}")
        print(f"load average now {load_average()}", flush=True)
    if args.part in ("all", "query"):
        latencies, vectors = run_query(query_variants(model, int8_model), questions, args.rounds)
        figures["query"] = {name: {**latencies[name], **cosines(vectors[name], queries_ref)} for name in latencies}
        print(f"\n{'one query, ' + str(len(questions)) + ' questions':40} {'p50 ms':>7} {'p95 ms':>7} "
              f"{'cos mean':>9} {'cos min':>8}")
        for name, row in figures["query"].items():
            print(f"{name:40} {row['p50']:>7} {row['p95']:>7} {row['mean']:>9} {row['min']:>8}")
        ways = {  # memories stored by / queries embedded by
            "torch fp32 / torch fp32": ("torch fp32", "torch fp32 encode()"),
            "torch fp32 / torch int8 traced (today)": ("torch fp32", "torch int8 traced (today)"),
            "torch int8 / torch int8": ("torch int8", "torch int8 encode()"),
            "onnx fp32 / onnx fp32": ("onnx fp32", "onnx fp32"),
            "onnx int8 per-tensor / same": ("onnx int8 per-tensor", "onnx int8 per-tensor"),
            "onnx int8 per-channel / same": ("onnx int8 per-channel", "onnx int8 per-channel"),
            "torch fp32 / onnx int8 per-channel": ("torch fp32", "onnx int8 per-channel"),
            "onnx fp32 / onnx int8 per-channel": ("onnx fp32", "onnx int8 per-channel"),
        }
        figures["top10_overlap"] = {way: overlap(stored[s], vectors[q], stored_ref, queries_ref)
                                    for way, (s, q) in ways.items()}
        figures["stored_cosine"] = {name: cosines(values, stored_ref) for name, values in stored.items()}
        print(f"\n{'memories stored by / queries embedded by':44} top-10 overlap with fp32")
        for way, value in figures["top10_overlap"].items():
            print(f"{way:44} {value}")
        print(f"load average now {load_average()}", flush=True)
    if args.part in ("all", "rss"):
        figures["rss"] = run_rss(args.searches)
        print("\nRSS, MB (fresh process each)")
        for label, row in figures["rss"].items():
            print(f"{label}: " + ", ".join(f"{step} {mb}" for step, mb in row["steps"])
                  + f"; peak {row['peak']}; {row['ms_per_query']} ms a query")
        print(f"load average now {load_average()}", flush=True)
    write_json(args.json, figures)

if __name__ == "__main__":
    main()
