"""Generated video clips for the small F/A/T/R run of docs/protocols.md#video-context.

``python docs/examples/generated_clips.py make DIR`` writes an MSVD-format dataset (``AllVideoDescriptions.txt``,
``train.txt`` with 200 clips, ``dev.txt`` with 100), its clip features ``clips.npz``, the word vectors
``words.txt`` and ``planted.npy``: clip i has 4–8 random 64-d frames, one of which, at a random position, is
its topic word's random 16-d vector mapped into frame space by a fixed random matrix (the other frames are
noise of the same scale); its five captions ``a <topic> <verb>`` name the topic (40 topics, 5 verbs).

``python docs/examples/generated_clips.py analyse DIR RUN...`` prints, for each training run on it, the best
snapshot's dev R@10 both ways, ρ_vis of the dev caption embeddings against the planted frames (what each clip
shows), and for a ``--visual attention`` run the mean attention weight on the planted frame (beside the uniform
weight 1/n).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

TOPICS = ("dog cat horse bird fish car bus train boat plane bike piano guitar drum violin ball kite tree flower "
          "beach snow river road kitchen field child woman man baby girl boy chef singer dancer player crowd robot "
          "tiger lion monkey").split()
VERBS = "runs moves plays waits turns".split()
CLIPS, TRAIN, WORD_DIM, FRAME_DIM, MAX_FRAMES = 300, 200, 16, 64, 8


def make(out: Path) -> None:
    from benchbox.data.clip_features import save_clips

    rng = np.random.default_rng(0)
    words = {w: rng.standard_normal(WORD_DIM) for w in TOPICS}
    into_frames = rng.standard_normal((WORD_DIM, FRAME_DIM)) / np.sqrt(WORD_DIM)
    out.mkdir(parents=True, exist_ok=True)
    (out / "words.txt").write_text("".join(f"{w} {' '.join(f'{x:.6f}' for x in v)}\n" for w, v in words.items()))
    lines, ids, counts, planted = [], [], [], []
    frames = np.zeros((CLIPS, MAX_FRAMES, FRAME_DIM), np.float32)
    for i in range(CLIPS):
        topic, n = TOPICS[i % len(TOPICS)], int(rng.integers(4, MAX_FRAMES + 1))
        ids.append(f"clip{i:03d}_0_{n}")
        counts.append(n)
        planted.append(int(rng.integers(n)))
        frames[i, :n] = rng.standard_normal((n, FRAME_DIM))
        frames[i, planted[-1]] = words[topic] @ into_frames
        lines += [f"{ids[-1]} a {topic} {verb}" for verb in VERBS]
    (out / "AllVideoDescriptions.txt").write_text("# generated clips\n" + "\n".join(lines) + "\n")
    (out / "train.txt").write_text("\n".join(ids[:TRAIN]) + "\n")
    (out / "dev.txt").write_text("\n".join(ids[TRAIN:]) + "\n")
    save_clips(out / "clips.npz", ids, frames, counts)
    np.save(out / "planted.npy", np.asarray(planted))


def analyse(folder: Path, runs: list[str]) -> None:
    import torch

    from benchbox.data.clip_features import load_clips
    from benchbox.evaluation import load_encoder
    from benchbox.tasks.structure_measures import rho_vis
    from benchbox.training.clips import caption_queries, clip_queries, make_query_encoder
    from benchbox.data.video_captions import load_video_captions

    dev = load_video_captions(folder, "dev", max_descriptions=5)  # as training reads dev
    clips = load_clips(folder / "clips.npz", dev.image_ids)
    planted = np.load(folder / "planted.npy")[TRAIN:]
    shown = clips.frames[np.arange(len(planted)), planted]
    words = make_query_encoder(folder / "words.txt")
    for run in runs:
        manifest = json.loads((Path(run) / "manifest.json").read_text())
        queries = clip_queries(caption_queries(dev.captions, words, manifest["config"].get("attention_query", "mean")), 5)
        best = max(manifest["snapshots"], key=lambda s: s["score"])["dev"]
        encoder = load_encoder(run)
        line = (f"{run}: t2i_r10 {best['t2i_r10']:.1f} i2t_r10 {best['i2t_r10']:.1f} "
                f"rho_vis(planted) {rho_vis(encoder.encode(dev.captions), shown, 5):.3f}")
        attention = encoder.members[0].frame_attention
        if attention is not None:
            with torch.no_grad():
                weights = attention.weights(torch.from_numpy(clips.frames), torch.from_numpy(clips.counts),
                                            torch.from_numpy(queries))
            line += (f" attention on planted {float(weights[np.arange(len(planted)), planted].mean()):.2f}"
                     f" (uniform {float(np.mean(1 / clips.counts)):.2f})")
        print(line)


if __name__ == "__main__":
    command, folder, *rest = sys.argv[1:]
    make(Path(folder)) if command == "make" else analyse(Path(folder), rest)
