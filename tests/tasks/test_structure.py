"""Structure measures (E_intra, E_inter, ρ_vis), the structure tasks, their paired comparison and report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchbox.comparison.compare import compare
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.stats.resampling import bootstrap_counts
from benchbox.tasks.structure_measures import per_image_means, rho_vis, rho_vis_bootstrap, structure
from tests.helpers import TableEncoder


def direct(x: np.ndarray, v: np.ndarray | None, c: int) -> dict[str, float]:
    """The definitions, over the full caption × caption cosine matrix (float64)."""
    x = np.asarray(x, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    cos = x @ x.T
    image = np.repeat(np.arange(len(x) // c), c)
    same = image[:, None] == image[None, :]
    out = {"e_intra": cos[same & ~np.eye(len(x), dtype=bool)].mean(), "e_inter": cos[~same].mean()}
    if v is not None:
        v = np.asarray(v, dtype=np.float64)
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        vis = (v @ v.T)[image][:, image]
        out["rho_vis"] = np.corrcoef(cos[~same], vis[~same])[0, 1]
    return out


def test_hand_computed_two_images():
    s = 1 / math.sqrt(2)
    # image 0: two identical captions; image 1: captions at 45 degrees
    x = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    intra, inter = per_image_means(x, 2)
    np.testing.assert_allclose(intra, [1.0, s])
    # image 0's captions vs image 1's: cos 0 and s, twice -> s / 2; the same pairs from image 1's side
    np.testing.assert_allclose(inter, [s / 2, s / 2])
    result = structure(x, 2, n_boot=0)
    assert result.values["e_intra"] == pytest.approx((1 + s) / 2)
    assert result.values["e_inter"] == pytest.approx(s / 2)
    assert result.values["e_intra_minus_inter"] == pytest.approx(0.5)
    assert all(math.isnan(low) for low, _ in result.intervals.values())


def test_rho_vis_hand_computed_three_images():
    # one caption direction per image (two identical captions each); visual vectors chosen so that the
    # three pairs of images have visual cosines 1/√2, 0, 1/√2 and caption cosines 1/√2, 0, 1/√2
    x = np.repeat(np.array([[1, 0], [1, 1], [0, 1]], dtype=float), 2, axis=0)
    v = np.array([[1, 0], [1, 1], [0, 1]], dtype=float)
    assert rho_vis(x, v, 2) == pytest.approx(1.0)
    w = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)  # visual cosines 0, 1/√2, 1/√2
    assert rho_vis(x, w, 2) == pytest.approx(-0.5)


@pytest.mark.parametrize("c", [2, 5])
def test_measures_equal_the_direct_computation_over_all_pairs(c):
    rng = np.random.default_rng(3)
    n_images, d, dim_v = 120, 24, 40
    v = rng.standard_normal((n_images, dim_v)) + 0.5
    x = np.repeat(v[:, :d], c, axis=0) + 1.5 * rng.standard_normal((n_images * c, d)) + 0.3
    result = structure(x.astype(np.float32), c, v, n_boot=0)
    expected = direct(x.astype(np.float32).astype(np.float64), v, c)
    for name, value in expected.items():
        assert result.values[name] == pytest.approx(value, abs=1e-9), name
    assert result.values["e_intra_minus_inter"] == pytest.approx(expected["e_intra"] - expected["e_inter"], abs=1e-9)
    assert 0.2 < result.values["rho_vis"] < 0.9


def test_bootstrap_replicates_are_the_measure_on_the_resampled_images():
    rng = np.random.default_rng(5)
    n_images, c = 40, 5
    v = rng.standard_normal((n_images, 16))
    x = np.repeat(v[:, :8], c, axis=0) + rng.standard_normal((n_images * c, 8))
    counts = bootstrap_counts(np.random.default_rng(9), n_images, 4)
    # small blocks: several passes over the caption x caption cosines
    boot = rho_vis_bootstrap(x, v, c, counts, block_bytes=4 * c * n_images * c * 3)
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    vn = v / np.linalg.norm(v, axis=1, keepdims=True)
    for b in range(4):
        images = np.repeat(np.arange(n_images), counts[b].astype(int))
        rows = (images[:, None] * c + np.arange(c)).ravel()
        owner = np.repeat(images, c)
        different = owner[:, None] != owner[None, :]  # copies of one image are the same image
        cos, vis = xn[rows] @ xn[rows].T, vn[owner] @ vn[owner].T
        assert boot[b] == pytest.approx(np.corrcoef(cos[different], vis[different])[0, 1], abs=2e-6)
    result = structure(x, c, v, n_boot=300, seed=1)
    for name, (low, high) in result.intervals.items():
        assert low < result.values[name] < high, name


def test_bad_shapes_give_clear_errors():
    with pytest.raises(BenchboxError, match="5 captions each"):
        structure(np.ones((7, 3)), 5)
    with pytest.raises(BenchboxError, match="visual vectors"):
        structure(np.ones((10, 3)), 5, np.ones((3, 4)))


# ---------------------------------------------------------------- the tasks, on a small Flickr8k-like root

IDS = [f"{i:04d}_img.jpg" for i in range(30)]
ANIMALS = ("dog", "cat", "horse", "bird", "cow", "goat")
COLOURS = ("red", "blue", "green", "black", "white")


def caption(i: int, k: int) -> str:
    return f"A {COLOURS[i % 5]} {ANIMALS[i % 6]} number {k}"


@pytest.fixture
def root(tmp_path):
    flickr = tmp_path / "root/flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{image}#{k}\t{caption(i, k)}\n" for i, image in enumerate(IDS) for k in range(5)))
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{image}\n" for image in IDS))
    return tmp_path / "root"


def word_encoder(seed: int, noise: float) -> TableEncoder:
    """Captions of one image share their colour and animal vectors, plus per-caption noise."""
    rng = np.random.default_rng(seed)
    words = {w: rng.standard_normal(12) for w in ANIMALS + COLOURS}
    table = {}
    for i in range(len(IDS)):
        for k in range(5):
            text = caption(i, k) + " ."  # the loader adds Merkx's final full stop
            table[text] = words[ANIMALS[i % 6]] + words[COLOURS[i % 5]] + noise * rng.standard_normal(12)
    return TableEncoder(table)


def test_structure_task_records_metrics_items_and_rho_vis(root, tmp_path):
    encoder = word_encoder(0, 0.5)
    rng = np.random.default_rng(1)
    features = rng.standard_normal((len(IDS), 20)).astype(np.float32)
    np.save(tmp_path / "f.npy", features)
    (tmp_path / "f.ids.txt").write_text("".join(f"{i}\n" for i in IDS))
    from benchbox.task_contract.options import TaskOptions

    evaluation = run_tasks(encoder, ["structure"], data_dir=root, cache=False,
                           options=TaskOptions(bootstrap=200, flags={"features": str(tmp_path / "f.npy")}))
    result = evaluation.results[0]
    values = {r.metric: r for r in result.metrics}
    assert set(values) == {"e_intra", "e_inter", "e_intra_minus_inter", "rho_vis"}
    x = encoder.encode([caption(i, k) + " ." for i in range(len(IDS)) for k in range(5)])
    expected = direct(x.astype(np.float64), features, 5)
    for name in ("e_intra", "e_inter", "rho_vis"):
        assert values[name].value == pytest.approx(expected[name], abs=1e-9)
        assert values[name].ci_low < values[name].value < values[name].ci_high
        assert values[name].n == len(IDS)
    items = result.items
    assert len(items) == 3 * len(IDS) and set(items["metric"]) == {"e_intra", "e_inter", "e_intra_minus_inter"}
    intra = items[items["metric"] == "e_intra"].sort_values("item")
    assert list(intra["image_id"]) == IDS
    assert intra["value"].mean() == pytest.approx(values["e_intra"].value)
    assert len(result.data_checksums) == 4  # captions, split list, features and their id list
    assert {"flickr8k/Flickr8k.token.txt", "flickr8k/Flickr_8k.testImages.txt"} <= set(result.data_checksums)


def test_compare_pairs_the_per_image_items(root, tmp_path):
    tight, loose = word_encoder(0, 0.2), word_encoder(0, 2.0)
    tight.name, loose.name = "tight", "loose"
    paths = [run_tasks(e, ["structure-flickr8k"], data_dir=root, cache=False).save(tmp_path / "runs")
             for e in (tight, loose)]
    table = compare([str(p) for p in paths], ["structure"]).table
    assert set(table["metric"]) == {"e_intra", "e_inter", "e_intra_minus_inter"}
    assert set(table["test"]) == {"bootstrap"} and not table["summary"].any()
    row = table[table["metric"] == "e_intra_minus_inter"].iloc[0]
    assert row["diff"] == pytest.approx(row["value_a"] - row["value_b"])
    assert row["diff_ci_low"] < row["diff"] < row["diff_ci_high"]
    assert row["verdict"] == "better"  # the less noisy captions form tighter clusters
    inter = table[table["metric"] == "e_inter"].iloc[0]
    assert inter["p_holm"] < 0.05
    # a lower E_inter (better separated clusters) counts as better
    assert inter["verdict"] == ("better" if inter["diff"] < 0 else "worse")


def test_report_has_the_structure_table_figure_and_neighbours(root, tmp_path):
    import json

    from benchbox.reports import write_report

    encoder = word_encoder(0, 0.5)
    evaluation = run_tasks(encoder, ["structure-flickr8k"], data_dir=root, cache=False)
    e_intra = next(r.value for r in evaluation.records if r.metric == "e_intra")
    path = evaluation.save(tmp_path / "runs")
    neighbours = tmp_path / "nb.json"
    neighbours.write_text(json.dumps({
        "corpus": "flickr8k:test", "corpus_size": 150, "k": 1, "encoders": ["table"],
        "queries": [{"query": "A <b>dog</b>", "neighbours": {"table": [
            {"rank": 1, "sentence": "A red dog number 0.", "cosine": 0.91234, "index": 0}]}}]}))
    out = write_report([path], tmp_path / "r.html", neighbours=[neighbours])
    html = out.read_text()
    assert "Structure of the caption space" in html and "E_intra − E_inter" in html
    assert "<svg" in html and "A &lt;b&gt;dog&lt;/b&gt;" in html and "0.912" in html
    md = write_report([path], tmp_path / "r.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| structure-flickr8k"))
    assert "| table |" in row and f"| {e_intra:.4g} [" in row.replace("\\[", "[")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(BenchboxError, match="benchbox neighbours --json"):
        write_report([path], tmp_path / "r2.md", neighbours=[bad])


@pytest.mark.realdata
def test_flickr8k_test_measures_equal_numpy_over_all_pairs(data_root, glove):
    """The issue's check: E_intra, E_inter and ρ_vis on the real Flickr8k test captions (GloVe-BOW, and
    image features generated from the captions plus noise) equal the direct computation to 1e-6."""
    from benchbox.data.captions import load_flickr8k

    test = load_flickr8k(data_root, "test")
    x = glove.encode(test.captions)
    rng = np.random.default_rng(0)
    image_mean = x.reshape(len(test.image_ids), 5, -1).mean(axis=1)
    features = image_mean @ rng.standard_normal((x.shape[1], 256)) + 0.5 * rng.standard_normal((len(test.image_ids), 256))
    result = structure(x, 5, features, n_boot=0)
    expected = direct(x.astype(np.float64), features, 5)
    for name, value in expected.items():
        assert abs(result.values[name] - value) < 1e-6, name


def test_structure_coco_follows_the_karpathy_list_order(root):
    import json

    from benchbox.data.root import DataRoot
    from benchbox.task_contract.protocol import EvalContext
    from benchbox.tasks.structure import StructureCoco

    coco = root / "coco"
    coco.mkdir()
    images = [{"filename": image, "split": "test",
               "sentences": [{"tokens": caption(i, k).lower().split(), "raw": "x"} for k in range(5)]}
              for i, image in enumerate(IDS)]
    (coco / "dataset_coco.json").write_text(json.dumps({"images": images, "dataset": "coco"}))
    order = np.random.default_rng(2).permutation(len(IDS))
    (coco / "karpathy_test_images.txt").write_text("".join(f"val2014/{IDS[i]} {i}\n" for i in order))
    rng = np.random.default_rng(0)
    words: dict[str, np.ndarray] = {}

    def embed(sentences: list[str]) -> np.ndarray:  # a bag of seeded word vectors
        return np.stack([sum(words.setdefault(w, rng.standard_normal(8)) for w in s.split()) for s in sentences])

    ctx = EvalContext(data=DataRoot(root), embed=embed)
    task = StructureCoco()
    result = task.evaluate(TableEncoder({"x": [0.0]}), ctx)
    assert [r.n for r in result.metrics] == [len(IDS)] * 3
    items = result.items[result.items["metric"] == "e_intra"]
    assert list(items["image_id"]) == [IDS[i] for i in order]
    captions = task.load_captions(ctx).captions
    assert captions[0] == caption(order[0], 0).lower() + " ."
    expected = direct(embed(captions), None, 5)
    values = {r.metric: r.value for r in result.metrics}
    assert values["e_intra"] == pytest.approx(expected["e_intra"], abs=1e-9)
    assert values["e_inter"] == pytest.approx(expected["e_inter"], abs=1e-9)


def test_grounded_encoder_also_gets_rho_vis_of_its_own_image_side(root, tmp_path):
    from benchbox.encoding.protocol import ImageTextEncoder
    from benchbox.task_contract.options import TaskOptions

    words = word_encoder(0, 0.5)
    projection = np.random.default_rng(4).standard_normal((20, 12)).astype(np.float32)

    class Grounded(ImageTextEncoder):
        name = "grounded"
        dim = 12

        def config(self):
            return {}

        def weights_digest(self) -> str:
            return "g"

        def _encode(self, sentences, batch_size):
            return words.encode(sentences)

        def encode_images(self, features):
            return np.tanh(np.asarray(features) @ projection).astype(np.float32)

    features = np.random.default_rng(1).standard_normal((len(IDS), 20)).astype(np.float32)
    np.save(tmp_path / "f.npy", features)
    (tmp_path / "f.ids.txt").write_text("".join(f"{i}\n" for i in IDS))
    encoder = Grounded()
    result = run_tasks(encoder, ["structure-flickr8k"], data_dir=root, cache=False,
                       options=TaskOptions(bootstrap=100, flags={"features": str(tmp_path / "f.npy")})).results[0]
    values = {r.metric: r.value for r in result.metrics}
    x = words.encode([caption(i, k) + " ." for i in range(len(IDS)) for k in range(5)])
    assert values["rho_vis"] == pytest.approx(direct(x, features, 5)["rho_vis"], abs=1e-9)
    own = direct(x, encoder.encode_images(features), 5)["rho_vis"]
    assert values["rho_vis_image_side"] == pytest.approx(own, abs=1e-9)
    assert abs(own - values["rho_vis"]) > 1e-3  # a different quantity
