"""Video caption datasets in MSVD's format (Chen & Dolan 2011, "Collecting highly parallel data for paraphrase
evaluation", ACL; the Microsoft Research Video Description corpus), for training on clips
(``--dataset msvd --video-captions DIR``; docs/protocols.md#video-context).

``DIR`` holds, all UTF-8 text:

- ``AllVideoDescriptions.txt``: MSVD's English descriptions as its authors distribute them
  (https://www.cs.utexas.edu/users/ml/clamp/videoDescription/): lines starting with ``#`` and blank lines are
  skipped; every other line is ``<video_id> <description>``, the id running to the first space or tab (MSVD's ids are
  ``<YouTube id>_<start>_<end>``, e.g. ``-4wsuPCjDBc_5_15``) and the description the rest of the line.
- ``train.txt``, ``dev.txt``, ``test.txt``: the split lists, one video id per line (blank lines skipped; only
  the splits read must exist). MSVD's customary split (1200 / 100 / 670 videos; Guadarrama et al. 2013,
  Venugopalan et al. 2015) is not part of the corpus file: write it, or any other, as these lists.

The result is a :class:`VideoCaptions`: the split list's clips in its order, each with all its descriptions in
file order (MSVD has about 41 per clip, all of which Bordes et al. 2019 train on;
docs/protocols.md#bordes-models), or its first ``max_descriptions`` (``--max-descriptions N`` for training; the
dev split keeps five per clip, the layout of the retrieval that selects snapshots) — clip i's descriptions are
consecutive rows, ``counts[i]`` of them — with Merkx's `` .`` appended to a description that does not end with a
full stop, as for Flickr8k. A malformed line, a listed clip with fewer than five descriptions, or a missing file
is one line naming it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchbox.data.captions import PER_IMAGE, SPLITS, _check_split, _read_lines, merkx_full_stop, read_image_list
from benchbox.errors import BenchboxError
from benchbox.limits import check_lengths

DATASET = "msvd"
DESCRIPTIONS = "AllVideoDescriptions.txt"


@dataclass(frozen=True)
class VideoCaptions:
    """N clips and their descriptions: clip i's ``counts[i]`` descriptions are consecutive rows of ``captions``,
    in file order (the rows of clip i start at ``counts[:i].sum()``)."""

    dataset: str
    split: str
    image_ids: list[str]
    captions: list[str]
    #: descriptions per clip, [N] int64 (each at least five)
    counts: np.ndarray
    source_files: list[Path]

    def __post_init__(self) -> None:
        clip = np.repeat(np.arange(len(self.image_ids)), self.counts)
        check_lengths(self.captions, lambda i: f"{self.dataset} {self.split} description of {self.image_ids[clip[i]]}")


def read_descriptions(path: Path) -> dict[str, list[str]]:
    """``AllVideoDescriptions.txt`` → video id → its descriptions in file order; malformed lines raise."""
    by_video: dict[str, list[str]] = {}
    for lineno, line in enumerate(_read_lines(path), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        video, *rest = text.split(maxsplit=1)
        description = rest[0] if rest else ""
        if not description:
            raise BenchboxError(f"{path}:{lineno}: expected '<video_id> <description>', found {text[:80]!r} "
                                "(no description after the id)")
        by_video.setdefault(video, []).append(description)
    if not by_video:
        raise BenchboxError(f"{path}: no descriptions ('<video_id> <description>' lines)")
    return by_video


def load_video_captions(folder: str | os.PathLike, split: str, *, full_stop: bool = True,
                        max_descriptions: int | None = None) -> VideoCaptions:
    """The clips of ``split`` (train, dev, test) listed in ``folder``/<split>.txt with all their descriptions
    from ``folder``/AllVideoDescriptions.txt, or their first ``max_descriptions`` (at least five; the module
    docstring)."""
    if max_descriptions is not None and max_descriptions < PER_IMAGE:
        raise BenchboxError(f"--max-descriptions must be at least {PER_IMAGE} (every clip keeps five or more), not "
                            f"{max_descriptions}")
    _check_split(split)
    folder = Path(folder)
    if not folder.is_dir():
        raise BenchboxError(f"--video-captions {folder} is not a folder (it holds {DESCRIPTIONS} and the split "
                            f"lists {', '.join(f'{s}.txt' for s in SPLITS)})")
    paths = [folder / DESCRIPTIONS, folder / f"{split}.txt"]
    for path in paths:
        if not path.is_file():
            raise BenchboxError(f"{path} not found: --video-captions {folder} needs {DESCRIPTIONS} (MSVD's "
                                f"'<video_id> <description>' lines) and a list of the {split} clips ({split}.txt)")
    descriptions, list_path = read_descriptions(paths[0]), paths[1]
    clips = read_image_list(list_path)
    captions: list[str] = []
    counts: list[int] = []
    for clip in clips:
        have = descriptions.get(clip, [])
        if len(have) < PER_IMAGE:
            raise BenchboxError(f"{paths[0]}: clip {clip} of {list_path.name} has {len(have)} descriptions; "
                                f"training needs at least {PER_IMAGE} per clip")
        kept = have[:max_descriptions]
        captions += [merkx_full_stop(c) if full_stop else c for c in kept]
        counts.append(len(kept))
    return VideoCaptions(DATASET, split, clips, captions, np.asarray(counts, dtype=np.int64), paths)
