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

Then (issue #30's target: ≥ 1.5× at n = 1024, batch 32, one thread) a training step of benchbox against the
same step of caption2image's model (DannyMerkx/caption2image, the code of Merkx & Frank 2019), re-created here
from its description: character embedding, a packed bidirectional GRU over the length-sorted batch, unmasked
per-dimension attention, L2 norm; the image side a linear layer and L2 norm; the loss the sum of hinge
violations in both directions; Adam (PyTorch's default implementation; benchbox trains with the optimiser
of :mod:`benchbox.training.optimizer`). The same captions and image vectors, steps interleaved (benchbox,
benchbox with the packed layer it used before, caption2image), medians of the per-step times; ratios from
the same run.

Run: ``BENCHBOX_DATA=/work/shared/data python benchmarks/bench_char_rnn.py [--threads 2] [--steps 20]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from benchbox.data.root import DataRoot
from benchbox.encoders.char_rnn import encoder_for
from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig
from benchbox.encoders.char_vocab import CharVocab
from benchbox.training.batching import epoch_plan, padding_waste
from benchbox.training.config import TrainConfig
from benchbox.training.data import load_split
from benchbox.training.distributed import TrainModule
from benchbox.training.losses import weighted_terms
from benchbox.training.optimizer import adam

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
    model, optimizer = TrainModule(net), adam(net.parameters(), lr=1e-4)
    plan = epoch_plan(train.lengths, batch_size=32, seed=0, epoch=0)
    elapsed, captions, flops = 0.0, 0, 0.0
    for i, batch in enumerate(plan[: warmup + steps]):
        chars, lengths = net.vocab.batch([train.captions[r] for r in batch.captions])
        visual = torch.from_numpy(train.visual[batch.images])
        t = time.perf_counter()
        c, v, *_ = model(chars, lengths, visual, None, None)
        loss = sum(weighted_terms(config, c, v, None, None).values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= warmup:
            elapsed += time.perf_counter() - t
            captions += len(batch.captions)
            flops += 3 * forward_flops(lengths.numpy(), n)
    return captions / elapsed, flops / elapsed


class Caption2Image(nn.Module):
    """caption2image's caption and image encoders (module docstring), for timing only."""

    def __init__(self, vocab_size: int, n: int, feature_dim: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 20, padding_idx=0)
        self.gru = nn.GRU(20, n, batch_first=True, bidirectional=True)
        self.att_hidden, self.att_out = nn.Linear(2 * n, 128), nn.Linear(128, 2 * n)
        self.image = nn.Linear(feature_dim, 2 * n)

    def forward(self, chars: torch.Tensor, lengths: torch.Tensor, visual: torch.Tensor) -> torch.Tensor:
        order = torch.argsort(lengths, descending=True)  # its batcher sorts by length
        x = pack_padded_sequence(self.embed(chars[order]), lengths[order], batch_first=True)
        h, _ = pad_packed_sequence(self.gru(x)[0], batch_first=True)
        alpha = torch.softmax(self.att_out(torch.tanh(self.att_hidden(h))), dim=1)
        captions = nn.functional.normalize((alpha * h).sum(dim=1), p=2, dim=1)
        images = nn.functional.normalize(self.image(visual[order]), p=2, dim=1)
        scores = captions @ images.t()
        diagonal = scores.diag()
        off = 1 - torch.eye(len(scores))
        return (((0.2 - diagonal[:, None] + scores).clamp(min=0) + (0.2 - diagonal[None, :] + scores).clamp(min=0))
                * off).sum()


def packed_loss(net: CharRNNNet, config: TrainConfig, chars: torch.Tensor, lengths: torch.Tensor,
                visual: torch.Tensor) -> torch.Tensor:
    """benchbox's step with the packed recurrent layer it trained with before (for the before/after ratio)."""
    caption = net.caption
    captions = caption.pool(caption.recurrent(chars, lengths, packed=True), lengths)
    return sum(weighted_terms(config, captions, net.image(visual), None, None).values())


def bench_against_caption2image(train, n: int, steps: int, warmup: int = 1) -> dict[str, float]:
    """Median seconds per training step of benchbox, benchbox with the packed layer and caption2image."""
    config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", hidden=n)
    torch.manual_seed(0)
    vocab = CharVocab.build(train.captions)
    net = CharRNNNet(vocab, NetConfig(hidden=n, feature_dim=train.visual.shape[1]))
    reference = Caption2Image(len(vocab), n, train.visual.shape[1])
    model = TrainModule(net)
    optimizers = {"benchbox": adam(net.parameters(), lr=1e-4),
                  "benchbox, packed layer": adam(net.parameters(), lr=1e-4),
                  "caption2image": torch.optim.Adam(reference.parameters(), lr=1e-4)}

    def loss_of(name: str, chars, lengths, visual) -> torch.Tensor:
        if name == "benchbox":
            c, v, *_ = model(chars, lengths, visual, None, None)
            return sum(weighted_terms(config, c, v, None, None).values())
        if name == "benchbox, packed layer":
            return packed_loss(net, config, chars, lengths, visual)
        return reference(chars, lengths, visual)

    times: dict[str, list[float]] = {name: [] for name in optimizers}
    plan = epoch_plan(train.lengths, batch_size=32, seed=0, epoch=0)
    for i, batch in enumerate(plan[: warmup + steps]):
        chars, lengths = vocab.batch([train.captions[r] for r in batch.captions])
        visual = torch.from_numpy(train.visual[batch.images])
        for name, optimizer in optimizers.items():
            t = time.perf_counter()
            loss = loss_of(name, chars, lengths, visual)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if i >= warmup:
                times[name].append(time.perf_counter() - t)
    return {name: float(np.median(values)) for name, values in times.items()}


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
    parser.add_argument("--against-steps", type=int, default=8,
                        help="interleaved steps of benchbox vs caption2image (n = 1024, one thread); 0 to skip")
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
    if args.against_steps:
        torch.set_num_threads(1)
        medians = bench_against_caption2image(train, 1024, args.against_steps)
        base = medians["caption2image"]
        print(f"n=1024, batch 32, one thread, median s/step over {args.against_steps} interleaved steps: " + ", ".join(
            f"{name} {seconds:.2f} ({base / seconds:.2f}× caption2image)" for name, seconds in medians.items()))


if __name__ == "__main__":
    main()
