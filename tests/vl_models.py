"""Tiny randomly initialised vision–language models saved to folders (no download), and a Flickr8k-like data
root with real JPEG files, for the ``clip`` encoder and the image-file tasks."""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import numpy as np

REAL_JPEG = Path(__file__).resolve().parents[2] / "shared/data/flickr8k/images/27782020_4dab210360.jpg"
#: text positions of the tiny models (the default max_length)
POSITIONS = 16


def tiny_tokenizer(folder: Path):
    """A CLIP BPE tokenizer over single characters (no merges), written into ``folder``."""
    from transformers import CLIPTokenizer

    chars = list(string.ascii_lowercase + string.digits + ".,")
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab.update({"<|startoftext|>": len(vocab), "<|endoftext|>": len(vocab) + 1})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=POSITIONS), vocab


def _text_config(vocab: dict[str, int]) -> dict:
    return dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                 num_attention_heads=4, max_position_embeddings=POSITIONS)


def _vision_config() -> dict:
    return dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                patch_size=8)


def save_tiny_clip(folder: Path, seed: int = 0) -> Path:
    """A tiny CLIPModel with its tokenizer and image processor, saved to ``folder``."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    tokenizer, vocab = tiny_tokenizer(folder)
    eos, bos = vocab["<|endoftext|>"], vocab["<|startoftext|>"]
    config = CLIPConfig(text_config={**_text_config(vocab), "eos_token_id": eos, "bos_token_id": bos,
                                     "pad_token_id": eos},
                        vision_config=_vision_config(), projection_dim=16)
    torch.manual_seed(seed)
    CLIPModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def save_tiny_siglip(folder: Path, seed: int = 0) -> Path:
    """A tiny SiglipModel (with a character tokenizer standing in for its SentencePiece one), saved."""
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    tokenizer, vocab = tiny_tokenizer(folder)
    config = SiglipConfig(text_config={**_text_config(vocab), "pad_token_id": vocab["<|endoftext|>"]},
                          vision_config=_vision_config())
    torch.manual_seed(seed)
    SiglipModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def save_tiny_siglip2(folder: Path, seed: int = 0) -> Path:
    """A tiny Siglip2Model with its NaFlex image processor (at most 16 patches of 8 × 8 pixels, each image at its
    own aspect ratio) and the character tokenizer, saved."""
    import torch
    from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model

    tokenizer, vocab = tiny_tokenizer(folder)
    vision = {k: v for k, v in _vision_config().items() if k != "image_size"} | {"num_patches": 16}
    config = Siglip2Config(text_config={**_text_config(vocab), "pad_token_id": vocab["<|endoftext|>"]},
                           vision_config=vision)
    torch.manual_seed(seed)
    Siglip2Model(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    Siglip2ImageProcessor(patch_size=8, max_num_patches=16).save_pretrained(folder)
    return folder


def caption(i: int, k: int) -> str:
    return f"im {i} v {k}"


def flickr8k_root(root: Path, n_images: int = 12, seed: int = 0) -> tuple[Path, list[str]]:
    """A data root with Flickr8k's token file and test split list for ``n_images`` images, and their JPEG files
    in ``flickr8k/Flicker8k_Dataset`` (the first a copy of the one real Flickr8k image, the others generated
    with PIL). Returns the root and the image ids in split order."""
    from PIL import Image

    flickr = root / "flickr8k"
    images = flickr / "Flicker8k_Dataset"
    images.mkdir(parents=True)
    ids = [f"{1000 + i}_test.jpg" for i in range(n_images)]
    rng = np.random.default_rng(seed)
    for i, image_id in enumerate(ids):
        if i == 0 and REAL_JPEG.is_file():
            shutil.copy(REAL_JPEG, images / image_id)
            continue
        size = (40 + 8 * (i % 3), 36 + 4 * (i % 4))
        pixels = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        Image.fromarray(pixels).save(images / image_id, quality=90)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{image_id}#{k}\t{caption(i, k)}\n" for i, image_id in enumerate(ids) for k in range(5)))
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{i}\n" for i in ids))
    return root, ids


#: a tiny OpenCLIP architecture (CLIP's BPE tokenizer, shipped with open_clip, needs its 49408-token vocabulary)
OPENCLIP_TINY = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 8},
    "text_cfg": {"context_length": POSITIONS, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def save_tiny_openclip(folder: Path, seed: int = 0) -> Path:
    """A tiny OpenCLIP model in the hub layout (open_clip_config.json + open_clip_model.safetensors)."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": OPENCLIP_TINY, "preprocess_cfg": {}}))
    torch.manual_seed(seed)
    model = open_clip.create_model(f"local-dir:{folder}")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, folder / "open_clip_model.safetensors")
    return folder


def coco_root(root: Path, n_images: int = 10, seed: int = 1) -> Path:
    """A data root with Karpathy's COCO test list and captions for ``n_images`` generated JPEGs in
    ``coco/val2014`` (the official folder name)."""
    from PIL import Image

    coco = root / "coco"
    (coco / "val2014").mkdir(parents=True)
    ids = [f"COCO_val2014_{i:012d}.jpg" for i in range(n_images)]
    rng = np.random.default_rng(seed)
    for image_id in ids:
        Image.fromarray(rng.integers(0, 256, (30, 34, 3), dtype=np.uint8)).save(coco / "val2014" / image_id)
    images = [{"filename": image_id, "split": "test",
               "sentences": [{"tokens": caption(i, k).split(), "raw": caption(i, k)} for k in range(5)]}
              for i, image_id in enumerate(ids)]
    (coco / "dataset_coco.json").write_text(json.dumps({"images": images, "dataset": "coco"}))
    (coco / "karpathy_test_images.txt").write_text("".join(f"val2014/{image_id} {i}\n" for i, image_id in enumerate(ids)))
    return root
