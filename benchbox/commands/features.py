"""``benchbox features extract``: ResNet-152 10-crop image features (docs/protocols.md#image-features); with
``--clips``, the clip file of frame features that ``--visual frame | average | attention`` reads
(docs/protocols.md#video-context, :mod:`benchbox.data.clip_extraction`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchbox.console import log, progress_bar, set_quiet
from benchbox.storage.outdir import output_file_lock
from benchbox.commands.options import AT_LEAST_1, DEVICE, NON_NEGATIVE, POSITIVE, QUIET, THREADS, out_option
from benchbox.threads import set_threads

features_app = typer.Typer(help="Image features for grounded training and retrieval.", no_args_is_help=True)


@features_app.command("extract")
def extract(
    images: Annotated[Path, typer.Option(help="Folder of images (.jpg/.jpeg/.png, searched recursively); ids = file names. With --clips: one folder per clip, <clip id>/<frame images> (frames in file-name order: frame_000.jpg, frame_001.jpg, ...).")],
    out: out_option("the features file, .npz, .h5/.hdf5 or .npy (+ .ids.txt/.meta.json sidecars); with --clips the clip file, .npz or .h5", required=True),
    clips: Annotated[bool, typer.Option(help="Per-clip frame features for training on video (--visual frame, average or attention): ids = clip folders, [clips, frames, 2048] with each clip's frame count; the frame vectors are kept beside --out as <out stem>.frames.npz (read by --resume).")] = False,
    weights: Annotated[str, typer.Option(help="imagenet (torchvision's cache/download), PATH to a ResNet-152 state dict, or random (seeded random init: FOR TESTING ONLY).")] = "imagenet",
    batch_size: Annotated[int, typer.Option(help="Images per forward pass (each is 10 crops).", callback=AT_LEAST_1)] = 16,
    device: DEVICE = "auto",
    resume: Annotated[bool, typer.Option(help="Continue an existing --out file: keep its rows, compute only the missing images.")] = False,
    workers: Annotated[int, typer.Option(help="Image-decoding worker processes (0: decode in the main process).", callback=NON_NEGATIVE)] = 0,
    skip_unreadable: Annotated[bool, typer.Option(help="Warn about and skip unreadable image files instead of stopping.")] = False,
    save_every: Annotated[float, typer.Option(help="Seconds between saves of partial results.", callback=POSITIVE)] = 60.0,
    threads: THREADS = None,
    quiet: QUIET = False,
) -> None:
    """ResNet-152 penultimate-layer features (2048-d), averaged over 10 crops, for every image in --images."""

    set_quiet(quiet)
    set_threads(threads)
    with output_file_lock(out, "--out"):
        _extract(images, out, weights, batch_size, device, resume, workers, skip_unreadable, save_every, clips)


def _extract(images: Path, out: Path, weights: str, batch_size: int, device: str, resume: bool, workers: int,
             skip_unreadable: bool, save_every: float, clips: bool) -> None:
    from benchbox.data.clip_extraction import extract_clip_features, list_clip_frames
    from benchbox.data.feature_extraction import extract_features, load_resnet152

    if clips:
        list_clip_frames(images)  # a malformed folder is one line before the model loads
    model = load_resnet152(weights)
    log(f"weights: {model.weights}")
    extract = extract_clip_features if clips else extract_features
    with progress_bar("ResNet-152 features") as update:
        summary = extract(images, out, model, batch_size=batch_size, device=device, resume=resume,
                          workers=workers, skip_unreadable=skip_unreadable, save_every_s=save_every, progress=update)
    rate = summary.computed / summary.seconds if summary.seconds else 0.0
    log(f"{out}: {summary.computed} {'frames' if clips else 'images'} computed, {summary.reused} kept from before, "
        f"{len(summary.skipped)} skipped, {summary.seconds:.1f}s ({rate:.2f} images/s)")


def register(app: typer.Typer) -> None:
    app.add_typer(features_app, name="features")
