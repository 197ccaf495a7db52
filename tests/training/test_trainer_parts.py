"""The pieces the char-RNN trainer is built from: a Trainer assembled from in-memory parts (its constructor
only assigns, so no data root is needed), the ensemble rule, the run manifest and the rank shares."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from benchbox.encoders.char_rnn import best_snapshots
from benchbox.errors import BenchboxError
from benchbox.training.config import TrainConfig
from benchbox.training.data import SplitData, TrainingData, random_anchors
from benchbox.training.distributed import Distributed
from benchbox.training.run_manifest import RunManifest
from benchbox.training.trainer import Trainer, build_net

WORDS = ["dog", "cat", "runs", "sits", "red", "ball", "grass", "snow", "child", "plays", "a", "the"]


def _split(n_images: int, seed: int) -> SplitData:
    rng = np.random.default_rng(seed)
    ids = [f"img{seed}-{i}" for i in range(n_images)]
    captions = [" ".join(rng.choice(WORDS, 4)) for _ in range(5 * n_images)]
    return SplitData(image_ids=ids, captions=captions, visual=random_anchors(ids, 0, dim=16), source_files={})


def _trainer(tmp_path, **config) -> Trainer:
    config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", hidden=4, epochs=2, cycle_epochs=1,
                         batch_size=8, checkpoint_every=0, **config)
    data = TrainingData(_split(16, 1), _split(8, 2), root="memory", features_sha256=None)
    torch.manual_seed(config.seed)
    dist = Distributed()
    net = build_net(config, data, None, dist.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.resolved_lr_max)
    return Trainer(config, tmp_path / "run", data, net, optimizer, dist=dist)


@pytest.mark.usefixtures("one_thread")
def test_constructor_only_assigns_and_the_parts_train_a_run(tmp_path):
    trainer = _trainer(tmp_path)
    assert not (tmp_path / "run").exists()  # nothing written or locked before run()
    assert trainer.position.global_step == 0 and not trainer.resumed and trainer.checkpoint_step is None
    run = trainer.run()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["steps_per_epoch"] == 10
    assert [s["epoch"] for s in manifest["snapshots"]] == [1, 2]
    assert manifest["ensemble"] == best_snapshots(manifest["snapshots"])
    assert trainer.position.global_step == 20 and len(trainer.position.history) == 2


@pytest.mark.usefixtures("one_thread")
def test_same_parts_same_weights(tmp_path):
    a = _trainer(tmp_path / "a")
    b = _trainer(tmp_path / "b")
    a.run(), b.run()
    assert all(torch.equal(x, y) for x, y in zip(a.net.state_dict().values(), b.net.state_dict().values()))


def test_ensemble_is_the_two_best_later_first_on_ties():
    snaps = [{"epoch": e, "score": s, "file": f"e{e}"} for e, s in [(1, 10.0), (2, 30.0), (3, 20.0), (4, 30.0)]]
    assert best_snapshots(snaps) == ["e4", "e2"]
    assert best_snapshots(snaps[:1]) == ["e1"] and best_snapshots([]) == []


def test_run_manifest_writes_only_as_writer(tmp_path):
    silent = RunManifest(tmp_path, writer=False)
    silent.start(kind="train")
    silent.save(status="running")
    assert not (tmp_path / "manifest.json").exists() and silent.fields["status"] == "running"
    manifest = RunManifest(tmp_path)
    manifest.start(kind="train", status="running")
    manifest.save()
    manifest.complete(ensemble=["x"])
    written = json.loads((tmp_path / "manifest.json").read_text())
    assert written["run_id"] == tmp_path.name and written["status"] == "complete" and written["ensemble"] == ["x"]
    assert written["finished"] >= written["created"]
    manifest.reopen()
    assert len(manifest.fields["resumed"]) == 1


def test_resuming_a_run_whose_manifest_is_damaged_is_one_line_naming_it(tmp_path):
    """The training manifest is read back as every run manifest is (``Run.manifest``), not as raw JSON, whose
    decoding error ended a resume with a traceback."""
    (tmp_path / "manifest.json").write_text('{"kind": "train", "status": "runn')
    with pytest.raises(BenchboxError, match=r"unreadable run manifest .*manifest.json"):
        RunManifest(tmp_path).reopen()
    (tmp_path / "manifest.json").write_text('["kind", "train"]')
    with pytest.raises(BenchboxError, match="not a JSON object"):
        RunManifest(tmp_path).reopen()


def test_single_process_share_is_every_row():
    dist = Distributed()
    rows = np.arange(10)
    assert dist.world == 1 and np.array_equal(dist.share(rows), rows)
    dist.rank, dist.world = 1, 3
    assert dist.share(rows).tolist() == [1, 4, 7]
