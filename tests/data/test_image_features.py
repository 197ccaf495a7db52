"""Image feature files: every format, id normalisation, and every error a user can cause."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from benchbox.errors import BenchboxError
from benchbox.data.image_features import load_features, normalise_id, read_features, save_features

IDS = ["1000268201_693b08cb0e.jpg", "1001773457_577c3a7d70.jpg", "1002674143_1b742ab4b8"]
FEATS = np.arange(12, dtype=np.float64).reshape(3, 4) / 7.0


def write_npy(path, ids, matrix):
    np.save(path, matrix)
    path.with_suffix(".ids.txt").write_text("".join(f"{i}\n" for i in ids))


def write_npz(path, ids, matrix):
    np.savez(path, ids=np.asarray(ids), features=matrix)


def write_h5_table(path, ids, matrix):
    with h5py.File(path, "w") as h5:
        h5.create_dataset("ids", data=np.asarray(ids, dtype="S"))
        h5.create_dataset("features", data=matrix)


def write_h5_per_image(path, ids, matrix):
    with h5py.File(path, "w") as h5:
        for i, row in zip(ids, matrix):
            h5.create_dataset(i, data=row)


WRITERS = {
    "npy": ("f.npy", write_npy),
    "npz": ("f.npz", write_npz),
    "h5-table": ("f.h5", write_h5_table),
    "h5-per-image": ("f.hdf5", write_h5_per_image),
}


@pytest.fixture(params=sorted(WRITERS))
def written(request, tmp_path):
    """A writer bound to a fresh path of one format: ``written(ids, matrix) -> path``."""
    name, writer = WRITERS[request.param]

    def write(ids=IDS, matrix=FEATS):
        path = tmp_path / name
        writer(path, ids, matrix)
        return path

    return write


def test_normalise_id():
    assert normalise_id(" 123_abc.jpg ") == "123_abc"
    assert normalise_id("123_abc.JPEG") == "123_abc"
    assert normalise_id("x.png") == "x"
    assert normalise_id("123_abc") == "123_abc"
    assert normalise_id("a.jpg.1") == "a.jpg.1"  # only a trailing image extension is removed
    assert normalise_id(".jpg") == ".jpg"


def test_rows_follow_requested_order_with_or_without_extension(written):
    path = written()
    got = load_features(path, ["1002674143_1b742ab4b8.jpg", "1000268201_693b08cb0e", IDS[1], IDS[2]])
    assert got.dtype == np.float32 and got.shape == (4, 4)
    np.testing.assert_array_equal(got, FEATS[[2, 0, 1, 2]].astype(np.float32))
    assert load_features(path, []).shape == (0, 4)


def test_expected_dim(written):
    path = written()
    assert load_features(path, IDS[:1], expected_dim=4).shape == (1, 4)
    with pytest.raises(BenchboxError, match="dimension 4, expected 2048"):
        load_features(path, IDS[:1], expected_dim=2048)


def test_missing_ids_counted_and_shown(written):
    path = written()
    wanted = [IDS[0]] + [f"{n}_absent.jpg" for n in range(8)]
    with pytest.raises(BenchboxError, match=r"8 of the 9 requested images have no features, e\.g\. \['0_absent'") as exc:
        load_features(path, wanted)
    assert "7_absent" not in str(exc.value)  # a few shown, not all


def test_duplicate_ids_after_normalisation(written):
    path = written(["a.jpg", "b", "a"], FEATS)
    with pytest.raises(BenchboxError, match=r"1 duplicate image ids.*\['a'\]"):
        load_features(path, ["b"])


def test_non_finite_rows(written):
    bad = FEATS.copy()
    bad[1, 2] = np.nan
    bad[2, 0] = np.inf
    path = written(IDS, bad)
    np.testing.assert_array_equal(load_features(path, IDS[:1]), FEATS[:1].astype(np.float32))  # clean rows load
    with pytest.raises(BenchboxError, match=r"2 requested images have NaN or infinite features.*1001773457_577c3a7d70"):
        load_features(path, IDS)


def test_non_floating_dtype(written):
    path = written(IDS, np.arange(12, dtype=np.int32).reshape(3, 4))
    with pytest.raises(BenchboxError, match="floating point.*int32"):
        load_features(path, IDS)


def test_missing_and_unknown_format(tmp_path):
    with pytest.raises(BenchboxError, match="not found.*benchbox features extract"):
        load_features(tmp_path / "nope.npz", IDS)
    (tmp_path / "f.pkl").write_bytes(b"x")
    with pytest.raises(BenchboxError, match=r"unknown image-features format '\.pkl'.*\.npy, \.npz, \.h5, \.hdf5"):
        load_features(tmp_path / "f.pkl", IDS)


@pytest.mark.parametrize("fmt", ["npy", "npz", "h5-table"])
def test_not_two_dimensional(tmp_path, fmt):
    name, writer = WRITERS[fmt]
    writer(tmp_path / name, IDS, np.zeros((3, 2, 2), dtype=np.float32))
    with pytest.raises(BenchboxError, match=r"2-D array \[images, dim\], found shape \(3, 2, 2\)"):
        load_features(tmp_path / name, IDS)


def test_per_image_h5_shape_and_dimension_errors(tmp_path):
    with h5py.File(tmp_path / "a.h5", "w") as h5:
        h5.create_dataset("x.jpg", data=np.zeros((2, 3), np.float32))
    with pytest.raises(BenchboxError, match=r"vector \[dim\].*'x\.jpg' with shape \(2, 3\)"):
        load_features(tmp_path / "a.h5", ["x"])
    with h5py.File(tmp_path / "b.h5", "w") as h5:
        h5.create_dataset("x", data=np.zeros((1, 3), np.float32))  # [1, D] is accepted
        h5.create_dataset("y", data=np.zeros(4, np.float32))
    with pytest.raises(BenchboxError, match=r"different dimensions \[3, 4\]"):
        load_features(tmp_path / "b.h5", ["x"])
    with h5py.File(tmp_path / "c.h5", "w") as h5:
        h5.create_group("empty")
    with pytest.raises(BenchboxError, match="no image features found"):
        load_features(tmp_path / "c.h5", ["x"])


def test_npy_needs_its_id_sidecar_of_matching_length(tmp_path):
    np.save(tmp_path / "f.npy", FEATS)
    with pytest.raises(BenchboxError, match=r"needs its image ids in .*f\.ids\.txt"):
        load_features(tmp_path / "f.npy", IDS)
    (tmp_path / "f.ids.txt").write_text("a\nb\n")
    with pytest.raises(BenchboxError, match="lists 2 image ids but .* has 3 rows"):
        load_features(tmp_path / "f.npy", ["a"])


def test_pickled_content_is_refused(tmp_path):
    np.save(tmp_path / "f.npy", np.asarray([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "f.ids.txt").write_text("a\n")
    with pytest.raises(BenchboxError, match="pickle"):
        load_features(tmp_path / "f.npy", ["a"])
    np.savez(tmp_path / "g.npz", ids=np.asarray(IDS, dtype=object), features=FEATS)
    with pytest.raises(BenchboxError, match="pickle"):
        load_features(tmp_path / "g.npz", IDS)


def test_npz_and_h5_structure_errors(tmp_path):
    np.savez(tmp_path / "f.npz", features=FEATS)
    with pytest.raises(BenchboxError, match=r"needs arrays 'ids' and 'features'; missing \['ids'\]"):
        load_features(tmp_path / "f.npz", IDS)
    np.savez(tmp_path / "g.npz", ids=np.asarray(IDS[:2]), features=FEATS)
    with pytest.raises(BenchboxError, match="'ids' has 2 entries but 'features' has 3 rows"):
        load_features(tmp_path / "g.npz", IDS)
    with h5py.File(tmp_path / "f.h5", "w") as h5:
        h5.create_dataset("features", data=FEATS)
    with pytest.raises(BenchboxError, match="no 'ids' dataset"):
        load_features(tmp_path / "f.h5", IDS)
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(BenchboxError, match="not a readable HDF5 file"):
        load_features(tmp_path / "junk.h5", IDS)


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".h5"])
def test_save_round_trip_with_metadata(tmp_path, suffix):
    path = tmp_path / "sub" / f"feats{suffix}"
    meta = {"weights": "random (seed 0)", "crops": 10}
    save_features(path, IDS, FEATS, metadata=meta)
    ids, matrix, got_meta = read_features(path)
    assert ids == IDS and got_meta == meta
    np.testing.assert_array_equal(matrix, FEATS.astype(np.float32))
    save_features(path, IDS[:1], FEATS[:1])  # overwrite in place
    assert read_features(path)[0] == IDS[:1]
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []  # no temp files left


def test_save_is_atomic_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "feats.npz"
    save_features(path, IDS, FEATS)

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(OSError, match="disk full"):
        save_features(path, IDS[:1], FEATS[:1])
    assert read_features(path)[0] == IDS  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["feats.npz"]


def test_save_checks_shape(tmp_path):
    with pytest.raises(BenchboxError, match=r"shape \(3, 4\) with 2 ids"):
        save_features(tmp_path / "f.npz", IDS[:2], FEATS)
