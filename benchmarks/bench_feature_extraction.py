"""Throughput of ResNet-152 10-crop feature extraction (``benchbox features extract``), random weights.

Run: ``python benchmarks/bench_feature_extraction.py [--images 4] [--batch-size 2] [--device auto]``.

Generates ``--images`` random 500×375 JPEGs (Flickr8k's typical size), extracts their features once with the
seeded random ResNet-152 (weights do not change the cost) and prints images/s and crops/s, plus the time of
image decoding + cropping alone, so the model's share is visible. ResNet-152 costs about 11.5 GFLOPs per
224×224 crop (He et al. 2016, Table 1), so 115 GFLOPs per image; the achieved FLOP/s is printed from that.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from benchbox.data.feature_extraction import TenCropImages, extract_features, list_images, load_resnet152

GFLOPS_PER_CROP = 11.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "images"
        folder.mkdir()
        for k in range(args.images):
            Image.fromarray(rng.integers(0, 256, (375, 500, 3), dtype=np.uint8)).save(folder / f"{k:05d}.jpg")
        start = time.perf_counter()
        dataset = TenCropImages(list(list_images(folder).values()))
        for i in range(len(dataset)):
            dataset[i]
        decode_s = time.perf_counter() - start
        model = load_resnet152("random")
        summary = extract_features(folder, Path(tmp) / "out.npz", model, batch_size=args.batch_size,
                                   device=args.device)
    rate = summary.computed / summary.seconds
    print(json.dumps({
        "images": summary.computed, "batch_size": args.batch_size, "device": args.device,
        "torch_threads": torch.get_num_threads(), "seconds": round(summary.seconds, 2),
        "images_per_s": round(rate, 3), "crops_per_s": round(10 * rate, 2),
        "decode_and_crop_s_per_image": round(decode_s / args.images, 4),
        "achieved_gflops_per_s": round(10 * GFLOPS_PER_CROP * rate, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
