"""Bordes et al.'s M_b between M_c and M_p: the three presets trained from one seed on the same data, with the
cluster loss L_C summed over its hinge terms (``--cluster-reduction sum``, benchbox before issue 55) and averaged
(``mean``, the default).

Run: ``python benchmarks/bench_bordes_balance.py [--data generated|root] [--hidden 16] [--epochs 1]``
(``root``: Flickr8k's captions from ``BENCHBOX_DATA`` or ``--data-dir``).

Their Table 2 trains M_c = L_C, M_p = L_P and M_b = L_C + 0.1 L_P and finds M_b clearly between the other two
(ρ_vis 46 against 38 and 53): the weight 0.1 of L_P has an effect. For each reduction the script prints, for M_b
at the seed's initial weights, medians over the first epoch's minibatches (:mod:`tests.training.bordes_balance`):

1. the gradient ratio at the caption embeddings, ‖∂L_C/∂c‖ / ‖∂(0.1 L_P)/∂c‖;
2. the first-step share: of the caption encoder's parameters on which L_C and L_P pull opposite ways, the share
   on which M_b's first Adam step follows L_P (0: M_b is M_c);

and after training,

3. the pairwise L2 distances between the three caption encoders (every parameter, flattened): M_b lies between
   M_c and M_p when d(b, c) and d(b, p) are both under d(c, p) and d(b, c) is not near 0;
4. Bordes et al.'s structure measures of each model's dev captions (its final weights, not the snapshot
   ensemble): E_intra − E_inter and ρ_vis against the visual vectors (:mod:`benchbox.tasks.structure_measures`).

Data. ``generated`` (default): 300 training and 100 dev items of five captions
(:func:`tests.training.bordes_balance.generated_root`: topics of pseudo-words, visual vectors from the words).
``root``: the data root's Flickr8k captions (``--max-captions`` of the training split, and the dev split) with
visual vectors made from the captions (per image, the mean over its captions of the mean of fixed random 64-d
word vectors, seeded by the word's sha256): the data root has no image features. char-GRU, batch 32, one
thread, one seed (``--seed``); ``bordes-p`` has no L_C and is trained once.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.training.bordes_balance import (  # noqa: E402
    DIM,
    caption_weights,
    embed,
    first_step_share,
    generated_root,
    gradient_ratio,
)

PRESETS = ("bordes-c", "bordes-p", "bordes-b")


def word_vector(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(DIM)


def root_features(data_dir: str, out: Path, max_captions: int) -> Path:
    """Visual vectors for the data root's Flickr8k training subset and dev split, made from their captions."""
    from benchbox.data.image_features import save_features
    from benchbox.training.config import TrainConfig
    from benchbox.training.data import load_training_data

    data = load_training_data(TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", loss="bordes-c",
                                          data_dir=data_dir, max_captions=max_captions))
    ids, rows = [], []
    for split in (data.train, data.dev):
        for i, image in enumerate(split.image_ids):
            rows.append(np.mean([np.mean([word_vector(w) for w in c.lower().split()], axis=0)
                                 for c in split.captions[5 * i:5 * i + 5]], axis=0))
            ids.append(image)
    save_features(out / "features.npz", ids, np.stack(rows).astype(np.float32))
    return out / "features.npz"


def train_config(preset: str, reduction: str, args: argparse.Namespace, data_dir: str, features: Path):
    from benchbox.training.config import TrainConfig

    reduced = {} if preset == "bordes-p" else {"cluster_reduction": reduction}  # M_p has no L_C
    return TrainConfig(encoder="char-gru", dataset="flickr8k", data_dir=data_dir, visual="features",
                       features=str(features), loss=preset, **reduced, hidden=args.hidden, epochs=args.epochs,
                       cycle_epochs=args.epochs, batch_size=32, seed=args.seed, threads=1, checkpoint_every=0,
                       max_captions=args.max_captions if args.data == "root" else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=("generated", "root"), default="generated")
    parser.add_argument("--data-dir", default=os.environ.get("BENCHBOX_DATA"))
    parser.add_argument("--max-captions", type=int, default=2000, help="--data root: training captions")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from benchbox.tasks.structure_measures import structure
    from benchbox.threads import set_threads
    from benchbox.training.batching import epoch_plan
    from benchbox.training.trainer import Trainer

    set_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.data == "generated":
            root, features = generated_root(tmp / "root")
            data_dir = str(root)
        else:
            if not args.data_dir:
                raise SystemExit("--data root needs BENCHBOX_DATA or --data-dir")
            data_dir, features = args.data_dir, root_features(args.data_dir, tmp, args.max_captions)
        print(f"data: {args.data}; char-gru, hidden {args.hidden}, {args.epochs} epoch(s), batch 32, seed {args.seed}, "
              "1 thread")
        trained, measures = {}, {}
        for reduction in ("sum", "mean"):
            for preset in PRESETS:
                if preset == "bordes-p" and preset in trained:
                    continue
                trainer = Trainer.from_config(train_config(preset, reduction, args, data_dir, features),
                                              tmp / f"{reduction}-{preset}")
                if preset == "bordes-b":
                    config = trainer.config
                    batches = epoch_plan(trainer.lengths, batch_size=config.batch_size, seed=config.seed, epoch=0,
                                         counts=trainer.data.train.counts)
                    ratio = statistics.median(gradient_ratio(trainer, b) for b in batches)
                    share = statistics.median(first_step_share(trainer, b) for b in batches)
                steps = trainer.steps_per_epoch * args.epochs
                trainer.run()
                key = preset if preset == "bordes-p" else (preset, reduction)
                trained[key] = caption_weights(trainer.net)
                dev = trainer.data.dev
                found = structure(embed(trainer.net, dev.captions).numpy(), 5, dev.visual, n_boot=0).values
                measures[key] = (found["e_intra_minus_inter"], found["rho_vis"])
            print(f"\n--cluster-reduction {reduction} ({steps} steps per model)")
            print(f"  bordes-b at the initial weights: gradient ratio |dL_C/dc| / |d(0.1 L_P)/dc| = {ratio:,.3g}; "
                  f"first-step share following L_P = {share:.3f}")
            models = {p: p if p == "bordes-p" else (p, reduction) for p in PRESETS}
            distance = {(a, b): (trained[models[a]] - trained[models[b]]).norm().item()
                        for a, b in itertools.combinations(PRESETS, 2)}
            cp, cb, pb = distance.values()
            print(f"  weights L2: d(c, p) = {cp:.4f}, d(b, c) = {cb:.4f}, d(b, p) = {pb:.4f}; "
                  f"d(b, c) / d(c, p) = {cb / cp:.3f}, d(b, p) / d(c, p) = {pb / cp:.3f}")
            for preset, model in models.items():
                gap, rho = measures[model]
                print(f"  {preset}: dev E_intra - E_inter = {gap:.4f}, rho_vis = {rho:.4f}")


if __name__ == "__main__":
    main()
