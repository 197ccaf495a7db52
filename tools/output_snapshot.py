"""Byte-for-byte snapshots of benchbox's outputs, for restructuring that must change no output.

A restructuring keeps behaviour identical: the same numbers and the same reports, byte for byte. This script
makes that checkable in two steps.

``python tools/output_snapshot.py runs DIR``
    Trains two tiny caption2image char-GRUs (seeds 1 and 2) on Flickr8k captions with generated image features
    and evaluates them, GloVe-BOW and sbert on relatedness, STS, transfer, entailment and retrieval tasks into
    ``DIR/runs`` (needs ``BENCHBOX_DATA``; a few minutes on 2 cores).

``python tools/output_snapshot.py render DIR/runs OUT``
    Renders every output from those runs into ``OUT``: ``compare`` (terminal text, JSON, CSV and the claims CSV;
    plain, seed-aware and with a baseline), ``report`` (markdown with its figures, and HTML, with ``--compare``),
    ``leaderboard`` (CSV and JSON) and ``describe`` of each task. It also evaluates GloVe-BOW afresh on two tasks
    and keeps its ``metrics.csv`` and items, so the numbers themselves are compared too.

Render with the old code and with the new code on the same runs, then ``diff -r OLD NEW``: no output may differ.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

TASKS = ["stsb-cosine", "sickr-cosine", "sts12", "mr", "trec", "sicke"]
RETRIEVAL = ["retrieval"]
DESCRIBED = TASKS + RETRIEVAL + ["stsb", "sickr", "sts16"]


def benchbox(*args: str, stdout: Path | None = None, env: dict[str, str] | None = None) -> None:
    """Run one benchbox command; its standard output goes to ``stdout`` (a file) when given."""
    command = [sys.executable, "-m", "benchbox", *args]
    print("$ benchbox", " ".join(args), flush=True)
    environment = {**os.environ, "COLUMNS": "160", **(env or {})}
    if stdout is None:
        subprocess.run(command, check=True, env=environment, stdout=subprocess.DEVNULL)
    else:
        with stdout.open("w") as handle:
            subprocess.run(command, check=True, env=environment, stdout=handle)


def features_file(folder: Path) -> Path:
    """Random 32-d features (seed 0) for every Flickr8k image: enough for caption2image training and retrieval."""
    root = Path(os.environ["BENCHBOX_DATA"]) / "flickr8k"
    ids = sorted({line.strip() for name in ("trainImages", "devImages", "testImages")
                  for line in (root / f"Flickr_8k.{name}.txt").read_text().splitlines() if line.strip()})
    path = folder / "features.npz"
    np.savez(path, ids=np.array(ids), features=np.random.default_rng(0).standard_normal((len(ids), 32)).astype("float32"))
    return path


def make_runs(folder: Path) -> None:
    runs, models = folder / "runs", folder / "models"
    features = features_file(folder)
    common = ["--runs-dir", str(runs), "--threads", "1", "-q"]
    for seed in (1, 2):
        benchbox("train", "char-gru", "--dataset", "flickr8k", "--visual", "features", "--features", str(features),
                 "--hidden", "32", "--epochs", "1", "--max-captions", "1500", "--seed", str(seed), "--threads", "1",
                 "--name", "char-gru", "--out", str(models / f"char-gru-{seed}"), "-q")
        benchbox("eval", str(models / f"char-gru-{seed}"), *[a for t in TASKS + RETRIEVAL for a in ("-t", t)], *common,
                 "--features", str(features))
    for encoder in ("glove-bow", "sbert"):
        benchbox("eval", encoder, *[a for t in TASKS for a in ("-t", t)], *common)


def render(runs: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    folders = sorted(p for p in runs.iterdir() if (p / "manifest.json").exists())
    by_label: dict[str, list[str]] = {}
    for folder in folders:
        manifest = json.loads((folder / "manifest.json").read_text())
        label = manifest.get("label") or manifest["encoder"]["name"]
        by_label.setdefault(label, []).append(str(folder))
    glove, sbert = by_label["glove-bow"][0], by_label["sbert"][0]
    seeds = by_label["char-gru"]
    benchbox("compare", glove, sbert, "--json", str(out / "compare.json"), "--csv", str(out / "compare.csv"),
             stdout=out / "compare.txt")
    benchbox("compare", glove, sbert, "--wide", "--correction", "bh", "--test", "steiger",
             "--item-dependence", "independent", stdout=out / "compare-wide.txt")
    benchbox("compare", f"glove={glove}", f"sbert={sbert}", *seeds, "--seeds", "char-gru=" + ",".join(seeds),
             "--baseline", "glove", "--json", str(out / "compare-seeds.json"), "--csv", str(out / "compare-seeds.csv"),
             stdout=out / "compare-seeds.txt")
    benchbox("compare", *seeds, "--json", str(out / "compare-retrieval.json"), "-t", "retrieval",
             stdout=out / "compare-retrieval.txt")
    benchbox("report", *map(str, folders), "--compare", "--out", str(out / "report.md"), "-q")
    benchbox("report", *map(str, folders), "--compare", "--out", str(out / "report.html"), "-q")
    benchbox("report", glove, sbert, "--reference", "paper:merkx2019/glove-bow", "--out", str(out / "reference.md"),
             "-q")
    benchbox("leaderboard", str(runs), "--csv", str(out / "leaderboard.csv"), "--json", str(out / "leaderboard.json"),
             stdout=out / "leaderboard.txt")
    benchbox("runs", str(runs), stdout=out / "runs.txt")
    for task in DESCRIBED:
        benchbox("describe", task, stdout=out / f"describe-{task}.txt")
    fresh = out / "fresh"
    benchbox("eval", "glove-bow", "-t", "stsb-cosine", "-t", "sts12", "--runs-dir", str(fresh), "-q", "--threads", "1",
             "--no-cache")
    (run,) = fresh.iterdir()
    for kept in ("metrics.csv", "items"):
        source = run / kept
        (shutil.copytree if source.is_dir() else shutil.copy)(source, out / f"fresh-{kept}")
    shutil.rmtree(fresh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("runs").add_argument("folder", type=Path)
    rendering = commands.add_parser("render")
    rendering.add_argument("runs", type=Path)
    rendering.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "runs":
        make_runs(args.folder)
    else:
        render(args.runs, args.out)


if __name__ == "__main__":
    main()
