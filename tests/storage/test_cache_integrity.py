"""Issue #17: the embedding cache never serves a wrong vector.

Bad options and bad encoder output never enter the cache; damaged shards (permuted, NaN, bit-flipped,
truncated, missing their checksum) are quarantined and rebuilt, giving exactly the ``--no-cache`` numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchbox import run_tasks
from benchbox.storage.cache import EmbeddingCache, read_shard, shard_key_files
from benchbox.errors import BenchboxError
from tests.helpers import TableEncoder

REPO = Path(__file__).resolve().parents[2]


def values(evaluation):
    return [(r.subset, r.metric, r.value, r.ci_low, r.ci_high) for r in evaluation.records]


def shard_arrays(folder: Path):
    """(keys file, embeddings file) of the largest shard of one fingerprint folder."""
    keys_file = max(shard_key_files(folder), key=lambda f: f.stat().st_size)
    return keys_file, keys_file.with_name(keys_file.name.replace(".keys.npy", ".emb.npy"))


def _permute(emb_file):
    emb = np.load(emb_file)
    np.save(emb_file, emb[np.random.default_rng(0).permutation(len(emb))])


def _nan(emb_file):
    emb = np.load(emb_file)
    emb[: len(emb) // 2] = np.nan
    np.save(emb_file, emb)


def _bit_flip(emb_file):
    data = bytearray(emb_file.read_bytes())
    data[len(data) // 2] ^= 0x10  # one bit of one float in the middle of the array
    emb_file.write_bytes(bytes(data))


def _truncate(emb_file):
    data = emb_file.read_bytes()
    emb_file.write_bytes(data[: len(data) - 200])


def _no_checksum(emb_file):
    emb_file.with_name(emb_file.name.replace(".emb.npy", ".sha256")).unlink()


@pytest.mark.parametrize("damage", [_permute, _nan, _bit_flip, _truncate, _no_checksum],
                         ids=["permuted", "nan", "bit-flipped", "truncated", "no-checksum"])
def test_damaged_shard_is_quarantined_and_rebuilt_to_the_uncached_numbers(tmp_path, glove, damage):
    expected = run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=False)
    cache_dir = tmp_path / "cache"
    run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=EmbeddingCache(cache_dir))
    folder = next(cache_dir.iterdir())
    keys_file, emb_file = shard_arrays(folder)
    n_rows = len(np.load(keys_file))
    damage(emb_file)
    lines = []
    cache = EmbeddingCache(cache_dir, log=lines.append)
    rebuilt = run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=cache)
    assert values(rebuilt) == values(expected)
    assert cache.quarantined == 1 and len(lines) == 1 and keys_file.name in lines[0]
    assert cache.misses == n_rows  # exactly the damaged shard's sentences were encoded again
    assert (folder / "quarantine" / keys_file.name).is_file() and not keys_file.exists()
    again = EmbeddingCache(cache_dir)  # the rebuilt shard is sound: served whole, nothing encoded
    assert values(run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=again)) == values(expected)
    assert again.misses == 0 and again.quarantined == 0


def test_shard_written_with_its_checksum_reads_back(tmp_path):
    enc = TableEncoder({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    EmbeddingCache(tmp_path).embed("fp", ["a", "b"], enc.encode)
    (keys_file,) = shard_key_files(tmp_path / "fp")
    keys, emb = read_shard(keys_file)
    assert emb.tolist() == [[1.0, 2.0], [3.0, 4.0]] and keys.shape == (2, 16)
    assert sorted(p.suffix for p in (tmp_path / "fp").iterdir()) == [".npy", ".npy", ".sha256"]


class Poisoning(TableEncoder):
    """Returns NaN for one sentence, as a diverged network would."""

    def _encode(self, sentences, batch_size):
        out = super()._encode(sentences, batch_size)
        out[[i for i, s in enumerate(sentences) if s == "bad"]] = np.nan
        return out


def test_non_finite_encoder_output_names_the_sentence_and_caches_nothing(tmp_path):
    from benchbox.evaluation import make_embedder

    enc = Poisoning({"good": [1.0, 0.0], "bad": [0.0, 1.0]})
    embed = make_embedder(enc, EmbeddingCache(tmp_path))
    with pytest.raises(BenchboxError, match=r"encoder 'table' returned NaN or infinite values for 1 of 2 sentences "
                                            r"\(first: 'bad'\); nothing was cached"):
        embed(["good", "bad"])
    assert not list(tmp_path.rglob("*.npy"))


def test_cache_refuses_output_of_the_wrong_width_for_its_fingerprint(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.embed("fp", ["a"], lambda s: np.ones((len(s), 2), np.float32))
    with pytest.raises(BenchboxError, match=r"returned shape \(1, 3\) for 1 sentences, expected \(1, 2\)"):
        EmbeddingCache(tmp_path).embed("fp", ["b"], lambda s: np.ones((len(s), 3), np.float32))


@pytest.mark.usefixtures("one_thread")
def test_bad_batch_size_poisons_nothing_char_gru(tmp_path):
    """The issue's sequence on a char-GRU: a bad batch size fails before encoding; the good run that follows
    gives the uncached numbers (before the fix: constant vectors cached, every later eval 0.0)."""
    from benchbox.encoders.char_rnn import CharGRU
    from benchbox.encoders.char_vocab import CharVocab

    enc = CharGRU.untrained(CharVocab.build(["a man rides a horse .", "two dogs play"]), hidden=8)
    cache = EmbeddingCache(tmp_path / "cache")
    for bad in (-5, 0):
        with pytest.raises(BenchboxError, match=f"batch size must be ≥ 1, got {bad}"):
            run_tasks(enc, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=cache, batch_size=bad)
        with pytest.raises(BenchboxError, match="batch size must be ≥ 1"):
            enc.encode(["a dog"], batch_size=bad)
    assert not (tmp_path / "cache").exists()
    good = run_tasks(enc, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=cache)
    fresh = run_tasks(enc, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=EmbeddingCache(tmp_path / "fresh"))
    assert values(good) == values(fresh) and cache.misses > 0
    # --no-cache batches the padded RNN differently (the cache encodes each distinct text once): float32 noise only.
    # The embeddings then agree to ~1e-6 (float32 through the recurrence, CPU-dependent kernels), the cosines to
    # ~1e-6, and a correlation over 1,379 pairs (near-tied cosines may swap ranks) to well within 1e-5
    uncached = run_tasks(enc, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=False)
    assert [r.value for r in good.records] == pytest.approx([r.value for r in uncached.records], abs=1e-5)


def _cli(*args, env_extra=None, code=None):
    env = {**os.environ, **(env_extra or {})}
    command = [sys.executable, "-m", "benchbox", *args] if code is None else [sys.executable, "-c", code, *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)


@pytest.mark.slow
def test_cli_bad_batch_size_then_good_run_gives_the_uncached_numbers(tmp_path):
    env = {"BENCHBOX_CACHE": str(tmp_path / "cache")}
    (tmp_path / "no-root").mkdir()
    common = ["eval", "glove-bow", "--task", "stsb-cosine", "--data-dir", str(tmp_path / "no-root"), "--no-save",
              "--json", "-", "-q"]
    for bad in ("-5", "0"):
        proc = _cli(*common, "--batch-size", bad, env_extra=env)
        assert proc.returncode == 2 and proc.stderr.strip() == f"error: --batch-size must be ≥ 1, got {bad}"
    assert not (tmp_path / "cache").exists()
    good = _cli(*common, env_extra=env)
    uncached = _cli(*common, "--no-cache", env_extra=env)
    assert good.returncode == 0 and json.loads(good.stdout) == json.loads(uncached.stdout)


WRONG_WIDTH = """
import sys
import numpy as np
from benchbox.cli import main
from benchbox.registry import ENCODERS
from tests.helpers import TableEncoder

class WrongWidth(TableEncoder):
    name = "wrong-width"
    def __init__(self):
        super().__init__({"x": [0.0, 1.0]})
    def encode(self, sentences, batch_size=128):  # a plugin that bypasses the base class's own check
        return np.ones((len(sentences), self.dim + 1), np.float32)

ENCODERS.register("wrong-width", WrongWidth)
sys.argv[0] = "benchbox"
main()
"""


@pytest.mark.slow
def test_wrong_width_plugin_exits_2_with_one_line(tmp_path):
    (tmp_path / "no-root").mkdir()
    proc = _cli("eval", "wrong-width", "--task", "stsb-cosine", "--data-dir", str(tmp_path / "no-root"), "-q",
                "--runs-dir", str(tmp_path / "runs"), code=WRONG_WIDTH, env_extra={"BENCHBOX_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: encoder 'wrong-width' returned shape (1255, 3) for 1255 sentences, expected (1255, 2); nothing was cached"]  # distinct texts
    assert not list((tmp_path / "c").rglob("*.npy"))


@pytest.mark.slow
def test_cache_command_status_verify_clear(tmp_path, glove):
    cache_dir = tmp_path / "cache"
    run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=EmbeddingCache(cache_dir))
    from benchbox.storage.identity import cache_key

    fingerprint = cache_key(glove)  # the encoder's cache folder
    status = _cli("cache", "status", "--cache-dir", str(cache_dir))
    assert status.returncode == 0 and glove.fingerprint() in status.stdout and " 50 " in status.stdout
    assert _cli("cache", "verify", "--cache-dir", str(cache_dir)).stdout.strip() == "2 shards checked, 0 damaged and quarantined"
    _bit_flip(shard_arrays(cache_dir / fingerprint)[1])
    verify = _cli("cache", "verify", fingerprint, "--cache-dir", str(cache_dir))
    assert verify.returncode == 1 and "2 shards checked, 1 damaged and quarantined" in verify.stdout
    assert "fails its checksum" in verify.stderr and len(shard_key_files(cache_dir / fingerprint)) == 1
    missing = _cli("cache", "clear", "no-such-encoder", "--cache-dir", str(cache_dir))
    assert missing.returncode == 2 and "unknown encoder 'no-such-encoder'" in missing.stderr
    cleared = _cli("cache", "clear", "glove-bow", "--cache-dir", str(cache_dir))
    assert cleared.returncode == 0 and not (cache_dir / fingerprint).exists()
