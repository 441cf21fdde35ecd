"""The ONNX files that may store memories (onnx_encoder.VARIANTS): each made by the one export path and cached
under its own name, int8-partial (the faster choice for memories) close to fp32 on the probes and hardly moved by its batch
mates, where full int8 moves further; and the setting that chooses names its choices."""
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

from apps.memories import embeddings, onnx_encoder
from tests.memories.test_embeddings import ASKED, MEMORIES, fresh_query_model  # noqa: F401 (a fixture)

# Texts of 8-47 tokens, two batches of 16 when encoded together: a store's or an import's batches.
TEXTS = MEMORIES + ASKED + [a.split(": ")[1] + " " + b for a, b in zip(MEMORIES, MEMORIES[1:] + MEMORIES[:1])]
# docs/benchmarks.md, "Encoder variants" (2026-11-26): int8-partial's least cosine to fp32 on the probes was 0.9916
# and a text's least cosine between encoded alone and among these batch mates 0.9944; full int8's 0.980 and 0.9877.
PARTIAL_PROBE_COSINE = 0.99
BATCH_MATES_COSINE = 0.99


def encoder(settings, variant):
    path = onnx_encoder.model_file(embeddings._model_path(), settings.ENGRAM_EMBEDDING_CACHE_DIR, variant=variant)
    return path, onnx_encoder.encoder(embeddings.get_tokenizer(), path, variant=variant, threads=1, batch_size=16)


def least_cosine_alone_and_among_mates(encode) -> float:
    together = encode(TEXTS)
    alone = np.concatenate([encode([text]) for text in TEXTS])
    return float((together * alone).sum(1).min())


def test_the_partial_file_is_cached_beside_the_export_and_quantises_what_it_says(settings, monkeypatch):
    import onnx

    path, _ = encoder(settings, "int8-partial")
    assert path.name.endswith(".int8-partial.onnx") and onnx_encoder._fp32_of(path, "int8-partial").exists()
    model = onnx.load(str(path))
    quantised = [node.name for node in model.graph.node if node.op_type == "MatMulInteger"]
    kept = [node.name for node in model.graph.node if node.op_type == "MatMul" and "/layer." in node.name
            and any(name.startswith("onnx::MatMul") for name in node.input)]
    # six layers: query, key, attention output and FFN input in int8; value and FFN output in fp32
    assert len(quantised) == 24 and len(kept) == 12
    assert all("self/value" in name or ("/output/dense" in name and "attention" not in name) for name in kept)

    def refuse(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder, "export_in_child", refuse)
    assert onnx_encoder.model_file(embeddings._model_path(), settings.ENGRAM_EMBEDDING_CACHE_DIR,
                                   variant="int8-partial") == path


def test_the_partial_file_embeds_the_probes_within_the_documented_cosine_of_the_torch_model(settings):
    cosines = {}
    for variant in ("int8-partial", "int8"):
        path, encode = encoder(settings, variant)
        reference = json.loads(onnx_encoder._probes_file(onnx_encoder._fp32_of(path, variant)).read_text())
        got = encode(reference["probes"])
        cosines[variant] = (got * np.array(reference["vectors"], dtype=np.float32)).sum(1)
    assert cosines["int8-partial"].min() >= PARTIAL_PROBE_COSINE
    assert cosines["int8-partial"].mean() > cosines["int8"].mean()  # closer than full int8, which stays as it was


def test_a_memorys_partial_vector_hardly_depends_on_its_batch_mates(settings):
    partial = least_cosine_alone_and_among_mates(encoder(settings, "int8-partial")[1])
    assert partial >= BATCH_MATES_COSINE
    # Full int8 quantises every MatMul's activations per batch: its vectors move further (0.988 against partial's
    # 0.994 with 8-bit weights; 0.991 against 0.993 with the 7-bit weights of a CPU without VNNI).
    assert least_cosine_alone_and_among_mates(encoder(settings, "int8")[1]) < partial
    # fp32 does not depend on them at all
    assert least_cosine_alone_and_among_mates(encoder(settings, "fp32")[1]) > 0.99999


def test_memories_use_the_chosen_file_and_queries_keep_the_int8_one(fresh_query_model, settings):  # noqa: F811
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"
    settings.ENGRAM_EMBEDDING_INT8 = "int8-partial"
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = True
    vectors = np.array(embeddings.embed_texts(MEMORIES))
    assert embeddings.get_text_encoder() is embeddings._onnx_encoders["int8-partial"]
    assert vectors == pytest.approx(encoder(settings, "int8-partial")[1](MEMORIES), abs=1e-6)
    # queries keep the full int8 file (ENGRAM_QUERY_EMBEDDING_INT8), whatever stores memories
    query = embeddings.embed_query(ASKED[0])
    assert query == pytest.approx(embeddings._onnx_encoders["int8"]([ASKED[0]])[0].tolist(), abs=1e-6)
    assert list((np.array([embeddings.embed_query(q) for q in ASKED]) @ vectors.T).argmax(1)) == list(range(len(ASKED)))


def test_a_model_the_partial_file_cannot_be_made_of_stores_by_the_fp32_file(fresh_query_model, settings,  # noqa: F811
                                                                          monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger=embeddings.__name__)
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"
    settings.ENGRAM_EMBEDDING_INT8 = "int8-partial"
    made = onnx_encoder.model_file

    def no_partial(source, cache_dir, *, variant="fp32"):
        if variant == "int8-partial":
            raise onnx_encoder.OnnxUnavailable("the export failed: no BERT-like layers")
        return made(source, cache_dir, variant=variant)

    monkeypatch.setattr(onnx_encoder, "model_file", no_partial)
    embeddings.embed_texts(MEMORIES[:1])
    assert embeddings.get_text_encoder() is embeddings._onnx_encoders["fp32"]  # ONNX Runtime still, not torch
    assert not embeddings.uses_torch() and "no BERT-like layers" in caplog.text


def test_a_matmul_outside_a_bert_like_layer_is_named():
    import onnx
    from onnx import TensorProto, helper

    weight = helper.make_tensor("w", TensorProto.FLOAT, [2, 2], [1.0, 0.0, 0.0, 1.0])
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="/encoder/layer.0/mlp/fc/MatMul")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [weight])
    with pytest.raises(onnx_encoder.OnnxUnavailable, match="/encoder/layer.0/mlp/fc/MatMul is no MatMul of a BERT-like"):
        onnx_encoder._weight_matmuls(helper.make_model(graph))
    with pytest.raises(onnx_encoder.OnnxUnavailable, match="no BERT-like layers"):
        onnx_encoder._weight_matmuls(onnx.ModelProto())


SETTING = "from django.conf import settings; print(settings.ENGRAM_EMBEDDING_INT8)"


@pytest.mark.parametrize(("value", "variant"), [(None, "fp32"), ("partial", "int8-partial"), ("true", "int8"), ("FALSE", "fp32")])
def test_the_memories_setting_reads_its_values(settings, value, variant):
    assert read_setting(settings, value) == (0, variant)


def test_an_unknown_value_of_the_setting_names_the_choices(settings):
    code, out = read_setting(settings, "int4")
    assert code != 0
    assert "ENGRAM_EMBEDDING_INT8='int4' is not one of: false, 0, no, off, true, 1, yes, on, partial" in out


def read_setting(settings, value):
    environment = {key: item for key, item in os.environ.items() if key != "ENGRAM_EMBEDDING_INT8"}
    environment["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    if value is not None:
        environment["ENGRAM_EMBEDDING_INT8"] = value
    done = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {SETTING}"], check=False,
                          cwd=settings.BASE_DIR,
                          env=environment, capture_output=True, text=True, timeout=120)
    return done.returncode, (done.stdout.strip().splitlines() or [""])[-1] if done.returncode == 0 else done.stderr


@pytest.mark.parametrize(("machine", "flags", "seven_bits"), [
    ("x86_64", "fpu sse2 avx2 fma f16c", True),  # no VNNI: 16-bit pair sums saturate with full-range weights
    ("x86_64", "fpu avx2 avx512f avx512_vnni", False),
    ("x86_64", "fpu avx2 avx_vnni", False),
    ("x86_64", None, True),  # features unknown: the range that cannot saturate
    ("aarch64", "fp asimd", False),
])
def test_int8_weights_keep_to_seven_bits_only_on_x86_without_vnni(tmp_path, monkeypatch, machine, flags, seven_bits):
    cpuinfo = tmp_path / "cpuinfo"
    if flags is not None:
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    monkeypatch.setattr(onnx_encoder, "CPUINFO", cpuinfo)
    monkeypatch.setattr(onnx_encoder.platform, "machine", lambda: machine)
    assert onnx_encoder._seven_bit_weights() is seven_bits
