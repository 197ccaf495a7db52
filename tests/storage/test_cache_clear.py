"""Issue #26: ``benchbox cache clear`` deletes only what the embedding cache wrote.

On the old code ``cache clear MODEL_FOLDER`` deleted the trained model, ``cache clear ..`` emptied the cache's
parent folder and ``cache clear /`` reached ``rmtree("/")``. Each refused argument here must leave every file
under the test folder as it was (names and modification times), and one bad argument among good ones must stop
the command before anything is removed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchbox.storage.cache import MARKER, EmbeddingCache, is_encoder_folder
from tests.core.test_hostile_inputs import _char_run, files_under, run_cli


def _fill(cache_dir: Path, fingerprint: str, n: int = 3) -> Path:
    """One encoder folder in ``cache_dir`` holding a shard of ``n`` sentences."""
    EmbeddingCache(cache_dir).embed(fingerprint, [f"s{i}" for i in range(n)],
                                    lambda s: np.ones((len(s), 2), np.float32))
    return cache_dir / fingerprint


def _clear(capsys, cwd: Path, *argv: str):
    return run_cli(["cache", "clear", *argv], cwd, lambda: capsys.readouterr().err)


def _refused(outcome) -> str:
    assert outcome.code == 2 and not outcome.traceback, outcome
    errors = outcome.error_lines()
    assert len(errors) == 1 and outcome.stderr.strip().splitlines()[-1] == errors[0]
    assert "nothing was removed" in errors[0], errors[0]
    return errors[0]


def test_the_cache_marks_its_root_and_knows_its_encoder_folders(tmp_path):
    folder = _fill(tmp_path / "cache", "a" * 20)
    assert (tmp_path / "cache" / MARKER).is_file() and is_encoder_folder(folder)
    (folder / "notes.txt").write_text("mine")
    assert not is_encoder_folder(folder)


def test_model_folder_is_refused_and_kept(tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    _fill(cache_dir, "a" * 20)
    model, _ = _char_run(tmp_path)
    before = files_under(tmp_path)
    message = _refused(_clear(capsys, tmp_path, str(model), "--cache-dir", str(cache_dir)))
    assert str(model) in message and "holds nothing for" in message
    assert files_under(tmp_path) == before


def test_model_folder_clears_only_its_embeddings(tmp_path, capsys):
    from benchbox.encoding.loading import load_encoder
    from benchbox.storage.identity import cache_key

    cache_dir = tmp_path / "cache"
    model, _ = _char_run(tmp_path)
    other = _fill(cache_dir, "a" * 20)
    mine = _fill(cache_dir, cache_key(load_encoder(str(model))))
    model_files = {p: t for p, t in files_under(tmp_path).items() if p.startswith(str(model))}
    outcome = _clear(capsys, tmp_path, str(model), "--cache-dir", str(cache_dir))
    assert outcome.code == 0, outcome
    assert not mine.exists() and other.exists()
    assert {p: t for p, t in files_under(tmp_path).items() if p.startswith(str(model))} == model_files


def test_dot_dot_and_root_are_refused_and_nothing_is_touched(tmp_path, capsys):
    parent = tmp_path / "parent"
    cache_dir = parent / "cache"
    kept = _fill(cache_dir, "a" * 20)
    (parent / "precious.txt").write_text("keep me")
    before = files_under(tmp_path)
    for argument in ("..", "/", str(parent), str(kept)):  # the last: a path, never taken as the folder itself
        _refused(_clear(capsys, cache_dir, argument, "--cache-dir", str(cache_dir)))
        assert files_under(tmp_path) == before, argument


def test_one_bad_argument_stops_the_whole_list(tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    first, second = _fill(cache_dir, "a" * 20), _fill(cache_dir, "b" * 20)
    before = files_under(tmp_path)
    _refused(_clear(capsys, tmp_path, first.name, "..", second.name, "--cache-dir", str(cache_dir)))
    assert files_under(tmp_path) == before
    assert _clear(capsys, tmp_path, first.name, second.name, "--cache-dir", str(cache_dir)).code == 0
    assert not first.exists() and not second.exists() and (cache_dir / MARKER).is_file()


def test_a_folder_holding_other_files_is_refused(tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    folder = _fill(cache_dir, "a" * 20)
    (folder / "notes.txt").write_text("mine")
    (cache_dir / "photos").mkdir()
    (cache_dir / "photos" / "cat.jpg").write_bytes(b"jpg")
    before = files_under(tmp_path)
    message = _refused(_clear(capsys, tmp_path, folder.name, "--cache-dir", str(cache_dir)))
    assert "did not write" in message
    _refused(_clear(capsys, tmp_path, "photos", "--cache-dir", str(cache_dir)))
    assert files_under(tmp_path) == before
    clean = _fill(cache_dir, "b" * 20)
    assert _clear(capsys, tmp_path, "--cache-dir", str(cache_dir)).code == 0  # all: only the cache's own folders
    assert not clean.exists() and folder.exists() and (cache_dir / "photos" / "cat.jpg").exists()


def test_clear_all_in_a_folder_that_is_not_a_cache_is_refused(tmp_path, capsys):
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "project" / "a.emb.npy").write_bytes(b"x")
    (home / "empty").mkdir()
    before = files_under(tmp_path)
    message = _refused(_clear(capsys, tmp_path, "--cache-dir", str(home)))
    assert MARKER in message and files_under(tmp_path) == before and (home / "empty").is_dir()


def test_a_cache_written_before_the_marker_is_marked_on_its_next_write(tmp_path):
    cache_dir = tmp_path / "cache"
    old = _fill(cache_dir, "a" * 20)
    (cache_dir / MARKER).unlink()
    _fill(cache_dir, "b" * 20)
    assert (cache_dir / MARKER).is_file() and old.exists()
    foreign = tmp_path / "foreign"
    (foreign / "stuff").mkdir(parents=True)
    (foreign / "stuff" / "letter.txt").write_text("mine")
    _fill(foreign, "c" * 20)
    assert not (foreign / MARKER).exists()  # a folder holding other things never becomes a cache root
