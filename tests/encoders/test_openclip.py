"""The ``open-clip`` encoder (optional extra ``benchbox[openclip]``): a tiny random OpenCLIP model saved in the
hub layout and loaded by path, equal to OpenCLIP's own ``encode_text``/``encode_image``, retrieval from image
files, and the offline errors. Skipped when open_clip is not installed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchbox import load_encoder, run_tasks
from benchbox.errors import BenchboxError
from tests.vl_models import OPENCLIP_TINY, POSITIONS, flickr8k_root, save_tiny_openclip

open_clip = pytest.importorskip("open_clip")

SPEC = "benchbox.encoders.openclip:OpenCLIPEncoder"  # the class behind the registry name ``open-clip``
SENTENCES = ["a dog runs", "two men, one ball.", "",
             "a sentence that goes on and on and on for far more than the sixteen tokens of the tiny model"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("openclip")
    return save_tiny_openclip(base / "m0"), save_tiny_openclip(base / "m1", seed=1)


def test_towers_equal_open_clip_and_fingerprint_follows_weights(folders, tmp_path):
    from PIL import Image

    encoder = load_encoder(SPEC, model=str(folders[0]))
    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{folders[0]}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{folders[0]}")
    out = encoder.encode(SENTENCES, batch_size=3)
    with torch.no_grad():
        reference = model.eval().encode_text(tokenizer(SENTENCES), normalize=True).numpy()
    np.testing.assert_allclose(out, reference, atol=1e-5)
    assert encoder.run_notes()["truncated_sentences"] == 1 and encoder.context_length == POSITIONS
    root, ids = flickr8k_root(tmp_path / "root", n_images=3)
    images = [Image.open(root / "flickr8k/Flicker8k_Dataset" / i).convert("RGB") for i in ids]
    pixels = np.stack([encoder.preprocess_image(image) for image in images])
    with torch.no_grad():
        reference = model.encode_image(torch.stack([preprocess(image) for image in images]), normalize=True).numpy()
    np.testing.assert_allclose(encoder.encode_images(pixels), reference, atol=1e-5)
    assert load_encoder(SPEC, model=str(folders[1])).fingerprint() != encoder.fingerprint()
    assert load_encoder(SPEC, model=str(folders[0])).fingerprint() == encoder.fingerprint()


def test_retrieval_from_image_files(folders, tmp_path):
    root, _ = flickr8k_root(tmp_path / "root")
    evaluation = run_tasks(load_encoder(SPEC, model=str(folders[0])), ["retrieval"], data_dir=root, cache=False)
    frame = evaluation.metrics_frame()
    assert len(frame) == 11 and frame["value"].notna().all()
    assert evaluation.results[0].protocol["images"].startswith("image files")


def test_architecture_with_a_checkpoint_file(folders, tmp_path):
    open_clip.add_model_config(_config_file(tmp_path))
    encoder = load_encoder(SPEC, model="benchbox-tiny-test", checkpoint=str(folders[0] / "open_clip_model.safetensors"))
    np.testing.assert_allclose(encoder.encode(SENTENCES), load_encoder(SPEC, model=str(folders[0])).encode(SENTENCES),
                               atol=1e-6)


def _config_file(tmp_path):
    import json

    path = tmp_path / "benchbox-tiny-test.json"
    path.write_text(json.dumps(OPENCLIP_TINY))
    return path


def test_offline_errors(folders, tmp_path):
    with pytest.raises(BenchboxError, match=r"not available offline .* pass -e model=FOLDER"):
        load_encoder(SPEC, model="laion/no-such-repo")
    with pytest.raises(BenchboxError, match=r"checkpoint 'laion2b_s34b_b79k' is not a local file: nothing is "
                                            r"downloaded; download its weights \(`hf download laion/CLIP-ViT-B-32"):
        load_encoder(SPEC, model="ViT-B-32", checkpoint="laion2b_s34b_b79k")
    with pytest.raises(BenchboxError, match="ViT-B-32 needs its weights"):
        load_encoder(SPEC, model="ViT-B-32")
    empty = tmp_path / "config-only"
    empty.mkdir()
    (empty / "open_clip_config.json").write_text((folders[0] / "open_clip_config.json").read_text())
    with pytest.raises(BenchboxError, match="has no weights file"):
        load_encoder(SPEC, model=str(empty))
    with pytest.raises(BenchboxError, match="precision must be one of"):
        load_encoder(SPEC, model=str(folders[0]), precision="fp8")
