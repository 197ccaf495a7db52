"""GloVe-BOW on the ``semantic`` and ``transfer`` groups, the relatedness regressor against a DataLoader loop,
and agreement with a SentEval-structured reference (issue 3).

Run: ``BENCHBOX_DATA=../shared/data python benchmarks/bench_semantic_transfer.py`` (add ``--agreement mr cr
...`` to compare the transfer tasks with the reference too; ``--skip-eval`` skips the two CLI runs).

1. Wall time of ``benchbox eval glove-bow --task semantic`` and ``--task transfer`` (fresh embedding cache).
2. The relatedness regressor on STS-B GloVe-BOW features: benchbox's (median of ``--repeats``) vs a
   straightforward DataLoader loop of the same protocol (``tests/senteval_reference.py``); prints the ratio
   (target ≥ 3×) and the dev/test Pearson differences (target ≤ 1e-4).
3. Agreement with the reference rewrite of SentEval's code (SentEval itself is not on PyPI and demands a GPU):
   STS-B and SICK-R test Pearson (target within 0.005) and, for ``--agreement`` tasks, accuracy (within 0.5).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from scipy.stats import pearsonr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchbox.data.root import DataRoot  # noqa: E402
from benchbox.encoders.glove_bow import GloveBowEncoder  # noqa: E402
from benchbox.tasks import transfer as fast  # noqa: E402
from benchbox.tasks.relatedness import fit_relatedness  # noqa: E402
from benchbox.tasks.senteval_data import (  # noqa: E402
    load_binary,
    load_mrpc,
    load_sick,
    load_sst2,
    load_stsb,
    load_trec,
    token_counts,
)
from benchbox.tasks.senteval_data import senteval_order as sort_rows  # noqa: E402
from benchbox.tasks.senteval_probe import pair_features  # noqa: E402
from tests import senteval_reference as ref  # noqa: E402


def eval_time(group: str, data_dir: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "benchbox", "eval", "glove-bow", "--task", group, "--data-dir", data_dir,
                        "--cache-dir", tmp, "--no-save", "--quiet", "--json", "--device", "cpu"],
                       check=True, capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        return time.perf_counter() - t0


def regressor_speed(f: dict, repeats: int) -> None:
    times, fit = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit = fit_relatedness(f["train"][0], f["train"][1], f["dev"][0], f["dev"][1], f["test"][0])
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    dev_pr, _, test_pred = ref.run_relatedness(f, dataloader=True)
    t_ref = time.perf_counter() - t0
    fast_test = pearsonr(fit.test_pred, f["test"][1])[0]
    ref_test = pearsonr(test_pred, f["test"][1])[0]
    med = statistics.median(times)
    print(f"regressor (STS-B, {len(f['train'][1])} x {f['train'][0].shape[1]}): benchbox median {med:.2f} s "
          f"over {repeats}, DataLoader loop {t_ref:.2f} s (1 run): {t_ref / med:.1f}x faster (target >= 3x)")
    print(f"  dev Pearson {fit.dev_pearson:.6f} vs {dev_pr:.6f} (|diff| {abs(fit.dev_pearson - dev_pr):.1e}); "
          f"test Pearson {fast_test:.6f} vs {ref_test:.6f} (|diff| {abs(fast_test - ref_test):.1e}); target 1e-4")


def transfer_inputs(enc: GloveBowEncoder, data: DataRoot, task: str):
    def embed(sentences, labels):
        order = sort_rows(token_counts(sentences), labels.tolist())
        return enc.encode([sentences[i] for i in order]), labels[order]

    if task in ("mr", "cr", "subj", "mpqa"):
        d = load_binary(data, task)
        return "inner", embed(d.sentences, d.labels), 2
    if task == "trec":
        return "kfold", (*embed(*_sl(load_trec(data, "train"))), *embed(*_sl(load_trec(data, "test")))), 6
    if task == "sst2":
        return "split", tuple(embed(*_sl(load_sst2(data, s))) for s in ("train", "dev", "test")), 2
    if task == "mrpc":
        parts = []
        for split in ("train", "test"):
            p = load_mrpc(data, split)
            order = sort_rows(token_counts(p.sentences1), token_counts(p.sentences2), p.labels.tolist())
            a = enc.encode([p.sentences1[i] for i in order])
            b = enc.encode([p.sentences2[i] for i in order])
            parts += [pair_features(a, b), p.labels[order]]
        return "kfold", tuple(parts), 2
    raise SystemExit(f"unknown transfer task {task}")


def _sl(d):
    return d.sentences, d.labels


def transfer_agreement(enc: GloveBowEncoder, data: DataRoot, task: str) -> None:
    scheme, args, nclasses = transfer_inputs(enc, data, task)
    t0 = time.perf_counter()
    if scheme == "inner":
        ours = fast.inner_kfold(*args, nclasses).accuracy
        t1 = time.perf_counter()
        theirs = ref.inner_kfold(*args, nclasses)[1]
    elif scheme == "kfold":
        ours = fast.kfold(*args, nclasses).accuracy
        t1 = time.perf_counter()
        theirs = ref.kfold(*args, nclasses)[1]
    else:
        ours = fast.split(*args, nclasses).accuracy
        t1 = time.perf_counter()
        theirs = ref.split(*args, nclasses)[1]
    t2 = time.perf_counter()
    print(f"{task}: accuracy benchbox {ours:.2f} ({t1 - t0:.0f} s) vs reference {theirs:.2f} ({t2 - t1:.0f} s): "
          f"|diff| {abs(ours - theirs):.2f} (target <= 0.5)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("BENCHBOX_DATA"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-eval", action="store_true")
    parser.add_argument("--skip-regressor", action="store_true")
    parser.add_argument("--agreement", nargs="*", default=[], help="transfer tasks to compare with the reference")
    args = parser.parse_args()
    if not args.data_dir:
        raise SystemExit("set BENCHBOX_DATA or pass --data-dir")
    torch.set_num_threads(1)
    if not args.skip_eval:
        for group in ("semantic", "transfer"):
            print(f"benchbox eval glove-bow --task {group}: {eval_time(group, args.data_dir):.1f} s", flush=True)
    enc, data = GloveBowEncoder(), DataRoot(args.data_dir)
    if not args.skip_regressor:
        stsb = ref.relatedness_features(enc, data, load_stsb)
        regressor_speed(stsb, args.repeats)
        for name, loader in (("stsb", load_stsb), ("sickr", load_sick)):
            f = stsb if name == "stsb" else ref.relatedness_features(enc, data, loader)
            fit = fit_relatedness(f["train"][0], f["train"][1], f["dev"][0], f["dev"][1], f["test"][0])
            _, _, test_pred = ref.run_relatedness(f, dataloader=False)
            ours, theirs = pearsonr(fit.test_pred, f["test"][1])[0], pearsonr(test_pred, f["test"][1])[0]
            print(f"{name}: test Pearson benchbox {ours:.6f} vs reference {theirs:.6f}: |diff| "
                  f"{abs(ours - theirs):.1e} (target <= 0.005)", flush=True)
    for task in args.agreement:
        transfer_agreement(enc, data, task)


if __name__ == "__main__":
    main()
