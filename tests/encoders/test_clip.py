"""The ``clip`` encoder (transformers vision–language models) and image files as a task input: tiny random CLIP
and SigLIP models saved to folders and loaded by path, real JPEG files, the embedding cache, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from benchbox import load_encoder, run_tasks
from benchbox.storage.cache import EmbeddingCache
from benchbox.storage.identity import cache_key, image_cache_key
from benchbox.cli import app
from benchbox.console import set_quiet
from benchbox.errors import BenchboxError
from benchbox.task_contract.options import TaskOptions
from tests.vl_models import POSITIONS, coco_root, flickr8k_root, save_tiny_clip, save_tiny_siglip, save_tiny_siglip2

SPEC = "benchbox.encoders.clip:CLIPEncoder"  # the class behind the registry name ``clip``
SAVERS = {"clip": save_tiny_clip, "siglip": save_tiny_siglip, "siglip2": save_tiny_siglip2}
#: SigLIP and SigLIP 2 were trained on ids padded to max_length, with no attention mask
UNMASKED = ("siglip", "siglip2")
SENTENCES = ["a dog runs", "two men, one ball.", "", "x"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vl-models")
    return {kind: save(folder / kind) for kind, save in SAVERS.items()} | {"clip-seed1": save_tiny_clip(folder / "c1", 1)}


@pytest.fixture(scope="module")
def flickr(tmp_path_factory):
    return flickr8k_root(tmp_path_factory.mktemp("vl-data") / "root")


def reference_text(folder, sentences, padding, masked=True):
    """The library's own forward pass: tokenizer → get_text_features (with the attention mask, or on the padded
    ids alone as big_vision's SigLIP is called) → L2 normalisation."""
    from transformers import AutoModel, AutoTokenizer

    model, tokenizer = AutoModel.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        tokens = tokenizer(sentences, padding=padding, truncation=True, max_length=POSITIONS, return_tensors="pt")
        mask = {"attention_mask": tokens["attention_mask"]} if masked else {}
        out = model.get_text_features(input_ids=tokens["input_ids"], **mask)
        out = out if isinstance(out, torch.Tensor) else out.pooler_output
    return torch.nn.functional.normalize(out, dim=-1).numpy()


def reference_images(folder, paths):
    """The library's own image pass: image processor → get_image_features → L2 normalisation."""
    from PIL import Image
    from transformers import AutoImageProcessor, AutoModel

    model, processor = AutoModel.from_pretrained(folder).eval(), AutoImageProcessor.from_pretrained(folder)
    images = [Image.open(p).convert("RGB") for p in paths]
    with torch.no_grad():
        out = model.get_image_features(**processor(images=images, return_tensors="pt"))
        out = out if isinstance(out, torch.Tensor) else out.pooler_output
    return torch.nn.functional.normalize(out, dim=-1).numpy()


@pytest.mark.parametrize("kind", ["clip", "siglip", "siglip2"])
def test_text_tower_equals_the_library_forward_pass(models, kind):
    """As trained: CLIP with its mask and padded to the longest sentence; SigLIP and SigLIP 2 padded to max_length
    with no mask (the padded ids alone, as big_vision calls SigLIP's text tower)."""
    encoder = load_encoder(SPEC, model=str(models[kind]))
    out = encoder.encode(SENTENCES, batch_size=2)
    assert out.shape == (len(SENTENCES), encoder.dim) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    padding = "max_length" if kind in UNMASKED else True
    np.testing.assert_allclose(out, reference_text(models[kind], SENTENCES, padding, masked=kind not in UNMASKED),
                               atol=1e-5)
    np.testing.assert_array_equal(out, encoder.encode(SENTENCES, batch_size=2))  # deterministic
    assert encoder.config()["padding"] == ("max_length" if kind in UNMASKED else "longest")
    assert encoder.config()["text_mask"] == ("none" if kind in UNMASKED else "attention")


@pytest.mark.parametrize("kind", UNMASKED)
def test_siglip_with_the_attention_mask_is_a_recorded_variant(models, kind):
    """text_mask=attention passes the tokenizer's mask: SigLIP then ignores its padding (which it never did in
    training), a different embedding and a different fingerprint."""
    trained = load_encoder(SPEC, model=str(models[kind]))
    masked = load_encoder(SPEC, model=str(models[kind]), text_mask="attention")
    out = masked.encode(SENTENCES, batch_size=2)
    np.testing.assert_allclose(out, reference_text(models[kind], SENTENCES, "max_length"), atol=1e-5)
    assert np.abs(out - trained.encode(SENTENCES, batch_size=2)).max() > 0.01
    assert masked.config()["text_mask"] == "attention" and masked.fingerprint() != trained.fingerprint()
    with pytest.raises(BenchboxError, match="text_mask must be one of auto, none, attention"):
        load_encoder(SPEC, model=str(models[kind]), text_mask="sometimes")


def test_float16_on_a_cpu_is_one_warning_line(models, capsys):
    set_quiet(False)  # an earlier command's --quiet is the console's state
    load_encoder(SPEC, model=str(models["clip"]), precision="float16", device="cpu")
    lines = [line for line in capsys.readouterr().err.splitlines() if "float16" in line]
    assert len(lines) == 1 and "10x slower than float32" in lines[0]


@pytest.mark.parametrize("kind", ["clip", "siglip", "siglip2"])
def test_image_tower_equals_the_library_forward_pass(models, flickr, kind):
    from benchbox.data.root import DataRoot
    from benchbox.data.image_files import find_images, image_embedder

    root, ids = flickr
    encoder = load_encoder(SPEC, model=str(models[kind]))
    images = find_images(DataRoot(root), "flickr8k", ids, None)
    out = image_embedder(encoder, DataRoot(root), None, batch_size=5, workers=2)(images)
    np.testing.assert_allclose(out, reference_images(models[kind], images.paths), atol=1e-5)


def test_fingerprint_follows_the_weights(models):
    first = load_encoder(SPEC, model=str(models["clip"]))
    assert load_encoder(SPEC, model=str(models["clip"])).fingerprint() == first.fingerprint()
    other = load_encoder(SPEC, model=str(models["clip-seed1"]))
    assert other.fingerprint() != first.fingerprint()
    assert load_encoder(SPEC, model=str(models["clip"]), max_length="8").fingerprint() != first.fingerprint()


def test_truncation_is_counted_logged_and_recorded(models, flickr, monkeypatch):
    import benchbox.encoders.truncation as module

    logged = []
    monkeypatch.setattr(module, "log", logged.append)
    encoder = load_encoder(SPEC, model=str(models["clip"]), max_length="8")
    encoder.encode(["short", "a sentence of many characters"])
    assert len(logged) == 1 and "1 of 2 sentences are longer than 8 tokens and were truncated" in logged[0]
    assert encoder.run_notes() == {"truncated_sentences": 1, "encoded_sentences": 2, "max_length": 8}
    evaluation = run_tasks(encoder, ["retrieval"], data_dir=flickr[0], cache=False)
    # one token per character, plus start and end: only the captions "im 10 v K ." and "im 11 v K ." exceed 8
    assert evaluation.encoder_notes["truncated_sentences"] == 1 + 10 and len(logged) == 1  # logged once


def test_bad_options_and_offline_hub_name(models):
    with pytest.raises(BenchboxError, match=r"not available offline .* pass -e model=FOLDER"):
        load_encoder(SPEC, model="no-such-org/no-such-clip")
    with pytest.raises(BenchboxError, match="clip needs a model"):
        load_encoder(SPEC)
    with pytest.raises(BenchboxError, match="precision must be one of float32, float16, bfloat16"):
        load_encoder(SPEC, model=str(models["clip"]), precision="int8")
    with pytest.raises(BenchboxError, match=f"max_length must be between 2 and {POSITIONS}"):
        load_encoder(SPEC, model=str(models["clip"]), max_length="500")


def test_bfloat16_close_to_float32(models):
    full = load_encoder(SPEC, model=str(models["clip"])).encode(SENTENCES)
    half = load_encoder(SPEC, model=str(models["clip"]), precision="bfloat16").encode(SENTENCES)
    assert half.dtype == np.float32 and np.abs(half - full).max() < 0.05


def zero_shot_recalls(images, captions):
    """R@1/5/10 of both directions, computed here from the embeddings (caption k of image i at row 5i + k)."""
    sims = images @ captions.T
    n = len(images)
    i2t = np.array([(sims[i] > sims[i, 5 * i : 5 * i + 5].max()).sum() + 1 for i in range(n)])
    t2i = np.array([(sims[:, c] > sims[c // 5, c]).sum() + 1 for c in range(5 * n)])
    return {(d, f"r{k}"): 100.0 * (ranks <= k).mean() for d, ranks in (("i2t", i2t), ("t2i", t2i)) for k in (1, 5, 10)}


def test_zero_shot_retrieval_from_image_files_and_the_cache(models, flickr, tmp_path, monkeypatch):
    root, ids = flickr
    encoder = load_encoder(SPEC, model=str(models["clip"]))
    cache = EmbeddingCache(tmp_path / "cache")
    evaluation = run_tasks(encoder, ["retrieval"], data_dir=root, cache=cache)
    frame = evaluation.metrics_frame().set_index(["subset", "metric"])["value"]
    captions = [line.split("\t")[1] for line in (root / "flickr8k/Flickr8k.token.txt").read_text().splitlines()]
    images = reference_images(models["clip"], [root / "flickr8k/Flicker8k_Dataset" / i for i in ids])
    expected = zero_shot_recalls(images, reference_text(models["clip"], [c + " ." for c in captions], True))
    for key, value in expected.items():
        assert frame[key] == pytest.approx(value)
    result = evaluation.results[0]
    assert result.protocol["images"].startswith("image files")
    assert {f"flickr8k/Flicker8k_Dataset/{i}" for i in ids} <= set(result.data_checksums)
    assert cache.misses == 60 + len(ids)
    calls = []
    monkeypatch.setattr(type(encoder), "preprocess_image", lambda self, image: calls.append(image))
    again = run_tasks(encoder, ["retrieval", "structure-flickr8k"], data_dir=root, cache=cache)
    assert not calls and cache.misses == 60 + len(ids)  # second run: images and captions from the cache
    np.testing.assert_array_equal(again.metrics_frame().query("task == 'retrieval'")["value"],
                                  evaluation.metrics_frame()["value"])
    assert "rho_vis_image_side" in set(again.metrics_frame()["metric"])
    folders = {p.name for p in (tmp_path / "cache").iterdir() if p.is_dir()}
    assert folders == {cache_key(encoder), image_cache_key(encoder)}
    cleared = CliRunner().invoke(app, ["cache", "clear", SPEC, "-e", f"model={models['clip']}",
                                       "--cache-dir", str(tmp_path / "cache")])
    assert cleared.exit_code == 0, cleared.output  # the text and the image embeddings of the encoder
    assert not {p.name for p in (tmp_path / "cache").iterdir() if p.is_dir()}


def test_missing_and_unreadable_images_are_one_line(models, tmp_path):
    root, ids = flickr8k_root(tmp_path / "root", n_images=4)
    encoder = load_encoder(SPEC, model=str(models["clip"]))
    folder = root / "flickr8k/Flicker8k_Dataset"
    (folder / ids[2]).write_bytes(b"not a jpeg")
    with pytest.raises(BenchboxError, match=rf"cannot read image {folder / ids[2]} \("):
        run_tasks(encoder, ["retrieval"], data_dir=root, cache=False)
    (folder / ids[2]).unlink()
    with pytest.raises(BenchboxError, match=rf"image {ids[2]} \(1 of 4 flickr8k images\) not found under {folder}"):
        run_tasks(encoder, ["retrieval"], data_dir=root, cache=False)
    options = TaskOptions(task_options={"retrieval": {"images": str(tmp_path / "nowhere")}})
    with pytest.raises(BenchboxError, match="image folder .*nowhere not found"):
        run_tasks(encoder, ["retrieval"], data_dir=root, options=options, cache=False)
    with pytest.raises(BenchboxError, match="embeds the image files itself and reads no --features"):
        run_tasks(encoder, ["retrieval"], data_dir=root, options=TaskOptions(flags={"features": "f.npy"}), cache=False)


@pytest.mark.slow
def test_cli_eval_with_an_image_folder(models, flickr, tmp_path):
    root, ids = flickr
    moved = tmp_path / "elsewhere"
    (root / "flickr8k/Flicker8k_Dataset").rename(moved)
    try:
        result = CliRunner().invoke(app, [
            "eval", SPEC, "-e", f"model={models['clip']}", "--task", "retrieval", "--task", "stsb-cosine",
            "--images", str(moved), "--data-dir", str(root), "--runs-dir", str(tmp_path / "runs"), "--json", "-",
            "--quiet"])
        refused = CliRunner().invoke(app, ["eval", SPEC, "-e", f"model={models['clip']}", "--task", "stsb-cosine",
                                           "--images", str(moved), "--data-dir", str(root), "--no-save"])
    finally:
        moved.rename(root / "flickr8k/Flicker8k_Dataset")
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)["records"]
    assert {r["task"] for r in records} == {"retrieval", "stsb-cosine"}
    manifest = json.loads(next((tmp_path / "runs").glob("*/manifest.json")).read_text())
    assert manifest["tasks"]["retrieval"]["options"]["images"] == str(moved)
    assert manifest["encoder"]["config"]["model_type"] == "clip"
    notes = manifest["encoder_notes"]  # beside the encoder's identity, not in it (reuse compares the identity)
    assert notes["max_length"] == POSITIONS and 0 < notes["truncated_sentences"] < notes["encoded_sentences"]
    assert isinstance(refused.exception, BenchboxError)
    assert "none of the tasks evaluated (stsb-cosine) reads it (retrieval, " in str(refused.exception)


def test_coco_images_from_the_default_folder_against_the_clip_paper(models, tmp_path):
    from benchbox.comparison.compare import compare
    from benchbox.comparison.sources import paper_source

    root = coco_root(tmp_path / "root")
    evaluation = run_tasks(load_encoder(SPEC, model=str(models["clip"])), ["retrieval-coco-5k"], data_dir=root,
                           cache=False)
    assert "coco/val2014/COCO_val2014_000000000000.jpg" in evaluation.results[0].data_checksums
    paper = paper_source("paper:radford2021/clip-vit-l14-336px")
    assert "Table 13" in paper.citation
    assert set(paper.metrics.query("metric == 'r1'")["value"]) == {58.4, 37.8}
    # recalls are tested on per-query ranks, which published numbers lack: a comparison of nothing says so
    with pytest.raises(BenchboxError, match="nothing to compare.*without per-item scores"):
        compare([str(evaluation.save(tmp_path / "runs")), "paper:radford2021/clip-vit-l14-336px"])


def test_registered_under_entry_points():
    import tomllib
    from pathlib import Path

    from benchbox.registry import import_attribute

    declared = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    encoders = declared["project"]["entry-points"]["benchbox.encoders"]
    assert encoders["clip"] == SPEC
    assert import_attribute(encoders["clip"]).name == "clip"
    assert encoders["open-clip"] == "benchbox.encoders.openclip:OpenCLIPEncoder"
    assert declared["project"]["optional-dependencies"]["openclip"] == ["open_clip_torch>=3.3"]
