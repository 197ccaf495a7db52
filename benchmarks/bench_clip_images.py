"""Vision–language encoders' image path (issue 29): benchbox against LAION's ``clip-benchmark``, and a cached
rerun of COCO-5k-sized retrieval against one matrix product of its shape.

Run (needs ``benchbox[openclip]`` and ``pip install clip-benchmark``; nothing is downloaded: the models are
randomly initialised, which costs the same compute as trained weights)::

    python benchmarks/bench_clip_images.py [--images 200] [--threads 2] [--workers 2] [--rounds 2] [--coco]

1. Same model, images and captions (a random OpenCLIP ViT-B-32 in the hub layout, ``--images`` generated
   500×375 JPEGs with 5 captions each, as a Flickr8k test split): R@1/5/10 of benchbox's ``retrieval`` task
   (``open-clip`` encoder, image files, no cache) against ``clip_benchmark.metrics.zeroshot_retrieval.evaluate``
   (``amp=False``: full precision like benchbox) — they must be equal.
2. Image throughput, in interleaved rounds (the same machine load for both): benchbox's image path
   (:func:`benchbox.data.image_files.encode_files`: ``--workers`` decoding threads, the next batch decoding while the
   model embeds the current one) against clip-benchmark's loop (a torch ``DataLoader`` with ``--workers``
   processes applying the model's transform, ``encode_image``, normalisation), both at ``--threads`` torch
   threads and batch 64; images per second, median over rounds, and the ratio (goal ≥ 1.0).
3. ``--coco``: a data root with 5,000 generated images and 25,000 captions (Karpathy COCO 5k layout), a tiny
   OpenCLIP model with 512-d embeddings; ``retrieval-coco-5k`` once to fill the embedding cache, then the
   cached rerun (``run_tasks``, ``--bootstrap 0``: no intervals, the cost of the protocol itself; every image
   file is hashed again, the key of its cached embedding) against one 5,000 × 512 × 25,000 product (torch).
   Goal: ≤ 2× the product.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.vl_models: the generated data roots

PER_IMAGE = 5


def save_random_openclip(folder: Path, model_cfg: dict) -> Path:
    """A randomly initialised OpenCLIP model of ``model_cfg`` in the hub layout."""
    import open_clip
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": model_cfg, "preprocess_cfg": {}}))
    torch.manual_seed(0)
    model = open_clip.create_model(f"local-dir:{folder}")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, folder / "open_clip_model.safetensors")
    return folder


def flickr_like_root(root: Path, n: int) -> list[str]:
    """``n`` 500×375 JPEGs (smooth random colour fields, Flickr-sized files) with 5 captions each."""
    from PIL import Image

    folder = root / "flickr8k/Flicker8k_Dataset"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    ids = [f"{i:05d}_bench.jpg" for i in range(n)]
    words = "a dog cat man woman child runs jumps sits on in the grass water street park ball red blue".split()
    lines = []
    for i, image_id in enumerate(ids):
        small = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
        Image.fromarray(small).resize((500, 375), Image.BICUBIC).save(folder / image_id, quality=90)
        for k in range(PER_IMAGE):
            lines.append(f"{image_id}#{k}\t{' '.join(rng.choice(words, 8))} {i}\n")
    (root / "flickr8k/Flickr8k.token.txt").write_text("".join(lines))
    (root / "flickr8k/Flickr_8k.testImages.txt").write_text("".join(f"{i}\n" for i in ids))
    return ids


class CaptionedImages(torch.utils.data.Dataset):
    """clip-benchmark's dataset contract: (transformed image, list of its captions)."""

    def __init__(self, paths, captions, transform):
        self.paths, self.captions, self.transform = paths, captions, transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        from PIL import Image

        with Image.open(self.paths[i]) as image:
            return self.transform(image.convert("RGB")), self.captions[PER_IMAGE * i : PER_IMAGE * (i + 1)]


def loader(paths, captions, transform, workers: int, batch_size: int):
    from clip_benchmark.datasets.builder import image_captions_collate_fn

    return torch.utils.data.DataLoader(CaptionedImages(paths, captions, transform), batch_size=batch_size,
                                       shuffle=False, num_workers=workers, collate_fn=image_captions_collate_fn)


def equal_recalls(encoder, root: Path, ids: list[str], args) -> None:
    from clip_benchmark.metrics import zeroshot_retrieval

    from benchbox import run_tasks
    from benchbox.data.captions import load_flickr8k
    from benchbox.data.root import DataRoot
    from benchbox.task_contract.options import TaskOptions

    ours = run_tasks(encoder, ["retrieval"], data_dir=root, options=TaskOptions(bootstrap=0), cache=False)
    ours = ours.metrics_frame().set_index(["subset", "metric"])["value"]
    captions = load_flickr8k(DataRoot(root), "test").captions  # the captions benchbox embedded
    paths = [root / "flickr8k/Flicker8k_Dataset" / i for i in ids]
    theirs = zeroshot_retrieval.evaluate(encoder.model, loader(paths, captions, encoder.preprocess, args.workers, 64),
                                         encoder.tokenizer, "cpu", amp=False, recall_k_list=[1, 5, 10])
    print("R@K          benchbox  clip-benchmark")
    for k in (1, 5, 10):
        for ours_key, their_key in ((("i2t", f"r{k}"), f"text_retrieval_recall@{k}"),
                                    (("t2i", f"r{k}"), f"image_retrieval_recall@{k}")):
            a, b = ours[ours_key], 100 * theirs[their_key]
            print(f"{ours_key[0]} R@{k:<2d}     {a:8.3f}  {b:8.3f}  {'equal' if abs(a - b) < 1e-3 else 'DIFFERENT'}")


def throughput(encoder, paths: list[Path], args) -> None:
    from benchbox.data.image_files import encode_files

    def benchbox_path():
        encode_files(encoder, paths, batch_size=64, workers=args.workers)

    def clip_benchmark_loop():
        with torch.no_grad():
            for images, _ in loader(paths, [""] * (PER_IMAGE * len(paths)), encoder.preprocess, args.workers, 64):
                torch.nn.functional.normalize(encoder.model.encode_image(images), dim=-1)

    rates: dict[str, list[float]] = {"benchbox": [], "clip-benchmark": []}
    for _ in range(args.rounds):
        for name, run in (("benchbox", benchbox_path), ("clip-benchmark", clip_benchmark_loop)):
            start = time.perf_counter()
            run()
            rates[name].append(len(paths) / (time.perf_counter() - start))
    ratio = statistics.median(a / b for a, b in zip(rates["benchbox"], rates["clip-benchmark"]))
    for name, values in rates.items():
        print(f"{name:15s} {statistics.median(values):7.2f} images/s (median of {args.rounds} rounds: "
              f"{', '.join(f'{v:.2f}' for v in values)})")
    print(f"benchbox / clip-benchmark = {ratio:.2f}x (median over rounds of the per-round ratio)")


def coco_rerun(tmp: Path, args) -> None:
    from PIL import Image

    from benchbox import load_encoder, run_tasks
    from benchbox.storage.cache import EmbeddingCache
    from benchbox.task_contract.options import TaskOptions
    from tests.vl_models import OPENCLIP_TINY

    root, n = tmp / "coco-root", 5000
    folder = root / "coco/val2014"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    ids = [f"COCO_val2014_{i:012d}.jpg" for i in range(n)]
    for image_id in ids:
        Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).resize((64, 48)).save(folder / image_id)
    images = [{"filename": i, "split": "test", "sentences": [{"tokens": f"photo {j} view {k}".split()}
                                                              for k in range(PER_IMAGE)]} for j, i in enumerate(ids)]
    (root / "coco/dataset_coco.json").write_text(json.dumps({"images": images, "dataset": "coco"}))
    (root / "coco/karpathy_test_images.txt").write_text("".join(f"val2014/{i} {j}\n" for j, i in enumerate(ids)))
    model = save_random_openclip(tmp / "coco-model", {**OPENCLIP_TINY, "embed_dim": 512})
    encoder = load_encoder("benchbox.encoders.openclip:OpenCLIPEncoder", model=str(model))
    cache = tmp / "cache"
    options = TaskOptions(bootstrap=0)
    start = time.perf_counter()
    run_tasks(encoder, ["retrieval-coco-5k"], data_dir=root, options=options, cache=EmbeddingCache(cache))
    print(f"COCO 5k first run (embeds 5000 images and 25000 captions): {time.perf_counter() - start:.2f} s")
    a = torch.randn(n, 512)
    b = torch.randn(512, PER_IMAGE * n)
    ratios, reruns, products = [], [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        a @ b
        products.append(time.perf_counter() - start)
        start = time.perf_counter()
        stats = EmbeddingCache(cache)
        run_tasks(encoder, ["retrieval-coco-5k"], data_dir=root, options=options, cache=stats)
        reruns.append(time.perf_counter() - start)
        assert stats.misses == 0, "the rerun encoded something"
        ratios.append(reruns[-1] / products[-1])
    print(f"cached rerun {statistics.median(reruns):.2f} s, one 5000x512x25000 product {statistics.median(products):.2f} s:"
          f" {statistics.median(ratios):.2f}x (median over rounds of the per-round ratio)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--coco", action="store_true", help="also the COCO-5k cached rerun against one product")
    args = parser.parse_args()
    os.environ["BENCHBOX_ALLOW_DATA_MISMATCH"] = "1"  # its generated data roots are not the published files
    torch.set_num_threads(args.threads)
    import open_clip

    from benchbox import load_encoder

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.workers} decoding workers, "
          f"open_clip {open_clip.__version__}")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        model = save_random_openclip(tmp / "vit-b-32", open_clip.get_model_config("ViT-B-32"))
        encoder = load_encoder("benchbox.encoders.openclip:OpenCLIPEncoder", model=str(model))
        ids = flickr_like_root(tmp / "root", args.images)
        equal_recalls(encoder, tmp / "root", ids, args)
        throughput(encoder, [tmp / "root/flickr8k/Flicker8k_Dataset" / i for i in ids], args)
        if args.coco:
            coco_rerun(tmp, args)


if __name__ == "__main__":
    main()
