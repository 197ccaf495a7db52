"""Throughput of the char-RNN encoder on this machine (issue 4's targets).

Prints, for n = 512 and 1024 units per direction (batch 32, real Flickr8k training captions, length-bucketed
epoch plan):
- training throughput (captions/s) and the estimated achieved FLOP/s, against the peak of a large float32
  GEMM timed in the same process (targets: ≥ 25% of it at n = 1024; one Flickr8k epoch at n = 512 in
  ≤ 15 minutes);
- inference throughput (sentences/s);
- padding waste: the share of the padded [B, T_max] grids that is padding, with length bucketing (target
  < 10%) and without (random batches), over a whole epoch plan.

FLOP model (multiply-adds count 2): a GRU step costs 2·3·(E·n + n·n) per direction and sequence (an LSTM
2·4·(E·n + n·n)), ×2 directions, over the real (packed) steps; attention pooling 2·2·(2n·128) per step;
the image projection 2·2048·2n per image. Training ≈ 3 × forward (backward ≈ 2 × forward). Element-wise
work is ignored, so this under-counts slightly.

Run: ``BENCHBOX_DATA=/work/shared/data python benchmarks/bench_char_rnn.py [--threads 2] [--steps 20]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from benchbox.data import DataRoot
from benchbox.encoders.char_rnn import encoder_for
from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig
from benchbox.encoders.char_vocab import CharVocab
from benchbox.training.batching import epoch_plan, padding_waste
from benchbox.training.config import TrainConfig
from benchbox.training.data import load_split
from benchbox.training.distributed import TrainModule
from benchbox.training.losses import weighted_terms

EPOCH_CAPTIONS = 30_000


def gemm_peak(size: int = 4096, repeats: int = 5) -> float:
    """Best FLOP/s of a size×size float32 matrix product."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    return 2 * size**3 / best


def forward_flops(lengths: np.ndarray, n: int, rnn: str = "gru", char_dim: int = 20, feature_dim: int = 2048) -> float:
    gates = 3 if rnn == "gru" else 4
    steps = float(np.sum(lengths))
    per_step = 2 * (2 * gates * (char_dim * n + n * n)) + 2 * 2 * (2 * n * 128)
    return steps * per_step + len(lengths) * 2 * feature_dim * 2 * n


def bench_training(train, n: int, steps: int, warmup: int = 2) -> tuple[float, float]:
    """(captions/s, FLOP/s) of training steps at n units per direction."""
    config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", hidden=n)
    torch.manual_seed(0)
    net = CharRNNNet(CharVocab.build(train.captions), NetConfig(hidden=n, feature_dim=train.visual.shape[1]))
    model, optimizer = TrainModule(net), torch.optim.Adam(net.parameters(), lr=1e-4)
    plan = epoch_plan(train.lengths, batch_size=32, seed=0, epoch=0)
    elapsed, captions, flops = 0.0, 0, 0.0
    for i, batch in enumerate(plan[: warmup + steps]):
        chars, lengths = net.vocab.batch([train.captions[r] for r in batch.captions])
        visual = torch.from_numpy(train.visual[batch.images])
        t = time.perf_counter()
        c, v, _, _ = model(chars, lengths, visual, None, None)
        loss = sum(weighted_terms(config, c, v, None, None).values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= warmup:
            elapsed += time.perf_counter() - t
            captions += len(batch.captions)
            flops += 3 * forward_flops(lengths.numpy(), n)
    return captions / elapsed, flops / elapsed


def bench_inference(sentences: list[str], vocab: CharVocab, n: int) -> float:
    net = CharRNNNet(vocab, NetConfig(hidden=n, feature_dim=None))
    encoder = encoder_for([net])
    encoder.encode(sentences[:64])
    t = time.perf_counter()
    encoder.encode(sentences, batch_size=128)
    return len(sentences) / (time.perf_counter() - t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20, help="timed training steps per size")
    parser.add_argument("--inference", type=int, default=1000, help="sentences for the inference timing")
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    train = load_split(DataRoot(), "flickr8k", "train", visual="random", features=None, seed=0)
    plan = epoch_plan(train.lengths, batch_size=32, seed=0, epoch=0)
    unbucketed = epoch_plan(train.lengths, batch_size=32, seed=0, epoch=0, bucket_batches=1)
    waste = padding_waste([train.lengths[b.captions] for b in plan])
    waste_random = padding_waste([train.lengths[b.captions] for b in unbucketed])
    print(f"threads {torch.get_num_threads()}, torch {torch.__version__}; {len(train.captions)} training captions, "
          f"mean length {train.lengths.mean():.1f} characters")
    print(f"padding waste per epoch plan: {100 * waste:.2f}% with length bucketing, {100 * waste_random:.2f}% "
          f"without (target < 10%)")
    peak = gemm_peak()
    print(f"GEMM peak (4096² float32): {peak / 1e9:.1f} GFLOP/s")
    dev = load_split(DataRoot(), "flickr8k", "dev", visual="cluster", features=None, seed=0)
    vocab = CharVocab.build(train.captions)
    for n in args.sizes:
        rate, flops = bench_training(train, n, args.steps)
        inference = bench_inference(dev.captions[: args.inference], vocab, n)
        print(f"n={n}: training {rate:.1f} captions/s, {flops / 1e9:.1f} GFLOP/s = {100 * flops / peak:.1f}% of "
              f"GEMM peak; one Flickr8k epoch ({EPOCH_CAPTIONS} captions) ≈ {EPOCH_CAPTIONS / rate / 60:.1f} min; "
              f"inference {inference:.0f} sentences/s")


if __name__ == "__main__":
    main()
