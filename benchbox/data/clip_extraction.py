"""Clip features from frame images (``benchbox features extract --clips``): the clip file that ``--visual frame |
average | attention`` reads (:mod:`benchbox.data.clip_features`; docs/protocols.md#video-context).

Layout of ``--images FOLDER``: one folder per clip, named by the clip id (e.g. MSVD's ``-4wsuPCjDBc_5_15``),
holding the clip's frames as images (.jpg/.jpeg/.png); a clip's frames are its images in file-name order, so
number them with zero padding (``frame_000.jpg``, ``frame_001.jpg``, ...): F takes the first, i_1. Every frame is
made a vector by the image protocol (:mod:`benchbox.data.feature_extraction`: ResNet-152, ten crops). The frame
vectors go first to an image-features file beside the output, ``<out stem>.frames.npz``, keyed
``<clip id>/<file name>`` (written as it goes and read back by ``--resume``, so an interrupted extraction
continues), then into the clip file ``--out`` (``.npz`` or ``.h5``: ids = clip ids, features [N, F, D] with F the
most frames of a clip, and each clip's frame count).

Clips with different numbers of frames are kept as they are: the clip file stores every clip's own frames and
count (padding past it is never read; A averages and T attends over the clip's n frames). Bordes et al. (2019,
§2.3) define F, A and T over a clip's frames i_1 ... i_n for any n, so nothing is cut or repeated to equalise
them. Refused, with one line naming it: a missing or empty folder, an image directly in ``FOLDER`` or more than
one folder below it (not a frame of a clip), a clip folder without frame images, two frames of one clip that
differ only by their image suffix, and an unreadable frame (with ``--skip-unreadable`` the frame is left out,
and a clip left without frames is refused).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchbox.data.clip_features import save_clips
from benchbox.data.feature_extraction import ExtractionSummary, FeatureModel, extract_features
from benchbox.data.image_features import IMAGE_EXTENSIONS, SHOWN, normalise_id, read_features
from benchbox.errors import BenchboxError

LAYOUT = "--images FOLDER with --clips holds one folder per clip, FOLDER/<clip id>/<frame images>"


def frames_file(out: Path) -> Path:
    """The per-frame features kept beside the clip file ``out``."""
    return out.with_name(f"{out.stem}.frames.npz")


def list_clip_frames(folder: Path) -> dict[str, list[Path]]:
    """Clip id → its frame images in file-name order, for the layout of the module docstring; one line on a
    malformed folder."""
    if not folder.is_dir():
        raise BenchboxError(f"frame folder {folder} not found ({LAYOUT})")
    clips: dict[str, list[Path]] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in IMAGE_EXTENSIONS:
            continue
        parts = path.relative_to(folder).parts
        if len(parts) != 2:
            where = "directly in" if len(parts) == 1 else "more than one folder below"
            raise BenchboxError(f"{path} is {where} {folder}: {LAYOUT}")
        clips.setdefault(parts[0], []).append(path)
    empty = sorted(d.name for d in folder.iterdir() if d.is_dir() and d.name not in clips)
    if empty:
        raise BenchboxError(f"{folder}: {len(empty)} clip folders hold no frame image (.jpg/.jpeg/.png), e.g. "
                            f"{empty[:SHOWN]}")
    if not clips:
        raise BenchboxError(f"no clip folders with frame images under {folder} ({LAYOUT})")
    for clip, frames in clips.items():
        frames.sort(key=lambda p: p.name)
        stems = [normalise_id(p.name) for p in frames]
        twice = sorted({s for s in stems if stems.count(s) > 1})
        if twice:
            raise BenchboxError(f"{folder / clip}: frames {twice[:SHOWN]} exist with two image suffixes; keep one")
    return clips


def extract_clip_features(folder: Path, out: Path, model: FeatureModel, *, resume: bool = False,
                          **options: object) -> ExtractionSummary:
    """The clip file ``out`` from the frame images under ``folder`` (module docstring); ``options`` are
    :func:`benchbox.data.feature_extraction.extract_features`'s."""
    clips = list_clip_frames(folder)
    if out.exists() and not resume:
        raise BenchboxError(f"{out} already exists: pass --resume to continue it, or remove it to start afresh")
    named = {f"{clip}/{path.name}": path for clip, frames in clips.items() for path in frames}
    summary = extract_features(folder, frames_file(out), model, resume=resume, named=named, **options)
    ids, matrix, _ = read_features(frames_file(out))
    row = {normalise_id(i): k for k, i in enumerate(ids)}
    rows = {clip: [row[key] for p in frames if (key := normalise_id(f"{clip}/{p.name}")) in row]
            for clip, frames in clips.items()}
    lost = [clip for clip, found in rows.items() if not found]
    if lost:
        raise BenchboxError(f"{len(lost)} clips have no readable frame, e.g. {lost[:SHOWN]}: fix or remove their "
                            "folders")
    counts = np.array([len(r) for r in rows.values()], dtype=np.int64)
    frames = np.zeros((len(rows), int(counts.max()), matrix.shape[1]), dtype=np.float32)
    for i, found in enumerate(rows.values()):
        frames[i, : len(found)] = matrix[found]
    save_clips(out, list(rows), frames, counts)
    return summary
