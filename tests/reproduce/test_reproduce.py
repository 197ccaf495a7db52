"""``benchbox reproduce PAPER`` at tiny scale on generated data, one test per paper: every kind of cell runs through
the command (trained, evaluated as it is, with a fallback, not run), and each row of ``reproduction.json`` is
checked against the run the model's study wrote, and its verdict against the rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.data.comparators import paper_result
from benchbox.reproduce.verdict import difference, verdict
from benchbox.storage.runs import Run
from tests.tasks.test_hypernym import write_wordnet

runner = CliRunner()


def _reproduce(tmp_path: Path, paper: str, override: str | None = None, *args: str) -> dict:
    argv = ["reproduce", paper, "--out", str(tmp_path / "out"), *args]
    if override is not None:
        (tmp_path / "override.toml").write_text(override)
        argv += ["--override", str(tmp_path / "override.toml")]
    done = runner.invoke(app, argv)
    assert done.exit_code == 0, done.output
    return json.loads((tmp_path / "out" / "reproduction.json").read_text())


def _check_against_runs(cells: list[dict]) -> None:
    """Each cell that ran: benchbox's number is its run's, the published one the comparator's, the difference
    and the verdict are the rule's."""
    for cell in cells:
        if cell["value"] is None:
            assert cell["verdict"] == "not run"
            continue
        metrics = Run.open(cell["run"]).metrics
        record = metrics[(metrics["task"] == cell["task"]) & (metrics["subset"] == cell["subset"])
                         & (metrics["metric"] == cell["benchbox_metric"])].iloc[0]
        assert cell["value"] == record["value"] and cell["low"] == record["ci_low"]
        if cell["published"] is None:
            assert cell["verdict"] == "not compared"
            continue
        low = math.nan if cell["published_low"] is None else cell["published_low"]
        high = math.nan if cell["published_high"] is None else cell["published_high"]
        diff = difference(cell["value"], cell["low"], cell["high"], cell["published"], low, high)
        assert (cell["difference"], cell["difference_low"], cell["difference_high"]) == (diff.value, diff.low, diff.high)
        assert cell["verdict"] == verdict(diff, cell["margin"]).kind


def test_vendrov2016_trains_order_embeddings_and_judges_table_1(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHBOX_DATA", raising=False)
    wordnet = write_wordnet(tmp_path / "wordnet")
    override = (f'[order-embeddings]\ntrain = {{ wordnet = "{wordnet}", held-out = 2, dim = 4, epochs = 2, '
                f'batch-size = 4, eval-every = 1 }}\ntasks = ["hypernym:wordnet={wordnet}", "hypernym:held_out=2"]\n')
    cells = _reproduce(tmp_path, "vendrov2016", override)["cells"]
    assert [c["row"] for c in cells] == ["order-embeddings", "transitive closure", "word2gauss"]
    assert [c["published"] for c in cells] == [90.6, 88.2, 86.6]
    assert all(c["published_low"] is None for c in cells)  # the paper gives no interval (the Wilson one is benchbox's)
    assert cells[1]["benchbox_metric"] == "closure-accuracy" and cells[1]["run"] == cells[0]["run"]
    assert cells[2]["verdict"] == "not run" and "word2gauss" in cells[2]["words"]
    assert any("epochs = 2 (override)" in d for d in cells[0]["departures"])
    _check_against_runs(cells)
    # the figure and the reports are written; running again resumes (the trained cell is not redone)
    out = tmp_path / "out"
    assert (out / "reproduction.svg").read_text().count("<svg") == 1
    assert "Reproduction: Order-Embeddings" in (out / "reproduction.md").read_text()
    again = runner.invoke(app, ["reproduce", "vendrov2016", "--out", str(out), "--override", str(tmp_path / "override.toml")])
    assert again.exit_code == 0
    assert json.loads((out / "reproduction.json").read_text())["cells"] == cells  # the same run: not trained again


def test_conneau2017_falls_back_to_glove_6b_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOX_DATA", str(tmp_path / "empty-root"))
    (tmp_path / "empty-root").mkdir()
    plan = runner.invoke(app, ["reproduce", "conneau2017", "--out", str(tmp_path / "out"), "--plan"])
    assert plan.exit_code == 0 and "runs here with a departure" in plan.output
    assert not (tmp_path / "out" / "models").exists()  # the plan runs nothing
    cells = _reproduce(tmp_path, "conneau2017")["cells"]
    assert len(cells) == 1 and cells[0]["published"] == 78.6 and cells[0]["published_low"] is None
    assert "GloVe 6B 50-d" in cells[0]["departures"][0]
    _check_against_runs(cells)


def test_merkx2019_plans_each_model_and_runs_a_trained_char_gru(tmp_path, monkeypatch):
    from tests.vl_models import flickr8k_root

    root, ids = flickr8k_root(tmp_path / "data", n_images=12)
    flickr = root / "flickr8k"
    (flickr / "Flickr_8k.trainImages.txt").write_text("".join(f"{i}\n" for i in ids[:8]))
    (flickr / "Flickr_8k.devImages.txt").write_text("".join(f"{i}\n" for i in ids[8:10]))
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{i}\n" for i in ids[10:]))
    import numpy as np
    from benchbox.data.image_features import save_features

    save_features(flickr / "flickr8k-resnet152.npz", ids, np.random.default_rng(0).standard_normal((12, 8)).astype(np.float32))
    monkeypatch.setenv("BENCHBOX_DATA", str(root))
    override = ('[glove-bow]\ntasks = ["sickr-cosine"]\n'
                '[char-gru-flickr8k]\ntrain = { hidden = 4, epochs = 1, cycle-epochs = 1, batch-size = 4, threads = 1 }\n'
                'tasks = ["sickr-cosine", "retrieval"]\n')
    result = _reproduce(tmp_path, "merkx2019", override)
    cells = result["cells"]
    published = paper_result("paper:merkx2019/char-gru-flickr8k").metrics
    assert sum(c["model"] == "char-gru-flickr8k" and c["table"] == "Figure 3" for c in cells) == len(published)
    sickr = next(c for c in cells if c["model"] == "char-gru-flickr8k" and c["task"] == "sickr")
    assert sickr["published_low"] == published[published["task"] == "sickr"]["ci_low"].iloc[0]  # the supplement's
    infersent = [c for c in cells if c["model"] == "infersent"]
    assert infersent and all(c["verdict"] == "not run" and "infersent1.pkl" in c["words"] for c in infersent)
    coco = [c for c in cells if c["model"] == "char-gru-coco"]
    assert all("coco" in c["words"] and "GPU-hours" in c["words"] for c in coco)
    retrieval = [c for c in cells if c["table"] == "Table 2" and c["model"] == "char-gru-flickr8k"]
    assert [c["published"] for c in retrieval] == [27.5, 58.2, 70.5, 38.5, 68.9, 79.3]
    coco_retrieval = [c for c in coco if c["table"] == "Table 2"]  # the paper's Table 2: MSCOCO 1k, then 5k
    assert [(c["task"], c["subset"], c["published"]) for c in coco_retrieval] == [
        *(("retrieval-coco-1k", d, v) for d, vs in (("t2i", (41.4, 76.8, 88.0)), ("i2t", (51.2, 83.5, 92.1))) for v in vs),
        *(("retrieval-coco-5k", d, v) for d, vs in (("t2i", (20.2, 46.9, 60.9)), ("i2t", (25.7, 54.3, 68.8))) for v in vs)]
    assert all(c["verdict"] == "not run" for c in coco_retrieval)
    assert all(c["verdict"] in ("reproduced", "differs", "inconclusive") for c in retrieval)
    # the STS rows of this tiny run's tasks were not evaluated: said so, not left blank
    assert all("not among the tasks run" in c["words"] for c in cells if c["model"] == "glove-bow")
    _check_against_runs(cells)


def _coco_root(root: Path) -> Path:
    """Karpathy's COCO file with 8 training, 2 validation and 10 test images (tests/vl_models.coco_root's test part)."""
    from tests.vl_models import caption, coco_root

    coco_root(root, n_images=10)
    path = root / "coco" / "dataset_coco.json"
    data = json.loads(path.read_text())
    for i, split in enumerate(["train"] * 8 + ["val"] * 2):
        data["images"].append({"filename": f"COCO_train2014_{i:012d}.jpg", "split": split,
                               "sentences": [{"tokens": caption(100 + i, k).split(), "raw": caption(100 + i, k)}
                                             for k in range(5)]})
    path.write_text(json.dumps(data))
    return root


def test_radford2021_scores_clip_zero_shot_where_its_weights_are_put(tmp_path, monkeypatch):
    from tests.vl_models import save_tiny_clip

    root = _coco_root(tmp_path / "data")
    monkeypatch.setenv("BENCHBOX_DATA", str(root))
    plan = runner.invoke(app, ["reproduce", "radford2021", "--out", str(tmp_path / "out"), "--plan"])
    assert plan.exit_code == 0 and "cannot run here" in plan.output and "hf download" in plan.output
    save_tiny_clip(root / "models" / "clip-vit-large-patch14-336")  # where the plan says to put the weights
    cells = _reproduce(tmp_path, "radford2021")["cells"]
    assert [(c["subset"], c["metric"]) for c in cells] == [(s, m) for s in ("i2t", "t2i") for m in ("r1", "r5", "r10")]
    assert all(c["run"] for c in cells)
    _check_against_runs(cells)


def test_bordes2019_trains_m_c_and_says_what_m_p_and_m_b_need(tmp_path, monkeypatch):
    root = _coco_root(tmp_path / "data")
    monkeypatch.setenv("BENCHBOX_DATA", str(root))
    override = ('[M_c]\ntrain = { hidden = 4, epochs = 1, cycle-epochs = 1, batch-size = 4, threads = 1 }\n'
                'tasks = ["sickr-cosine", "sicke"]\n')
    cells = _reproduce(tmp_path, "bordes2019", override)["cells"]
    m_c = {c["row"]: c for c in cells if c["model"] == "M_c"}
    assert m_c["M_c SICK-E"]["verdict"] == "not compared" and m_c["M_c SICK-E"]["value"] is not None
    assert "not among the tasks run" in m_c["M_c SICK-R"]["words"]
    others = [c for c in cells if c["model"] in ("M_p", "M_b")]
    assert len(others) == 6 and all("coco-resnet152.npz" in c["words"] for c in others)
    _check_against_runs(cells)


def test_bad_input_is_one_line(tmp_path, capsys):
    from tests.helpers import cli

    code, _, err = cli(capsys, "reproduce", "vendrov2017", "--out", str(tmp_path / "out"))
    assert code == 2 and "unknown paper 'vendrov2017'" in err and "vendrov2016" in err and len(err.splitlines()) == 1
    override = tmp_path / "o.toml"
    override.write_text('[order-embedings]\ntrain = { epochs = 1 }\n')
    code, _, err = cli(capsys, "reproduce", "vendrov2016", "--plan", "--out", str(tmp_path / "out"),
                       "--override", str(override))
    assert code == 2 and "--override names no model of the paper: order-embedings" in err
    override.write_text('[order-embeddings]\nseed = 1\n')
    code, _, err = cli(capsys, "reproduce", "vendrov2016", "--plan", "--out", str(tmp_path / "out"),
                       "--override", str(override))
    assert code == 2 and "may set train, options and tasks, not 'seed'" in err


def test_every_shipped_paper_file_reads():
    from benchbox.reproduce.paper import paper_names, paper_path, read_paper

    assert paper_names() == ["bordes2019", "conneau2017", "merkx2019", "radford2021", "vendrov2016"]
    for name in paper_names():
        read_paper(paper_path(name))


def test_a_cell_shows_published_reproduced_and_difference_at_one_precision():
    """The full vendrov2016 run printed `90.6`, `91.5 [90.87, 92.09]` and `0.9 [0.2688, 1.491]`: three precisions
    in one row. A row's numbers now share the precision of its largest (four significant digits, as every other
    table of benchbox: benchbox.formatting)."""
    from benchbox.reproduce.render import cells

    row = {"table": "Table 1", "row": "order-embeddings", "task": "hypernym", "subset": "test", "metric": "accuracy",
           "benchbox_metric": "accuracy", "published": 90.6, "published_low": None, "published_high": None,
           "value": 91.5, "low": 90.87, "high": 92.09, "difference": 0.9, "difference_low": 0.2688,
           "difference_high": 1.491, "words": "reproduced", "departures": []}
    assert cells(row)[3:6] == ["90.60", "91.50 [90.87, 92.09]", "0.90 [0.27, 1.49]"]
    small = {**row, "published": 0.423, "published_low": 0.362, "published_high": 0.48, "value": 0.4012,
             "low": 0.38, "high": 0.42, "difference": -0.0218, "difference_low": -0.09, "difference_high": 0.05}
    assert cells(small)[3:6] == ["0.4230 [0.3620, 0.4800]", "0.4012 [0.3800, 0.4200]", "-0.0218 [-0.0900, 0.0500]"]
