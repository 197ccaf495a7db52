"""``benchbox.storage.atomic``: files and folders land whole or not at all, with the bytes and permissions a plain write
gives, and the module stays free of torch (fast-start modules use it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchbox.storage.atomic import atomic_folder, atomic_path, copy_file, torch_save, write_bytes, write_text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_files_get_their_bytes_and_the_permissions_of_a_plain_write(tmp_path):
    write_bytes(tmp_path / "a.bin", b"\x00\x01binary")
    write_text(tmp_path / "b.txt", "héllo\n")
    copy_file(tmp_path / "a.bin", tmp_path / "c.bin")
    (tmp_path / "plain.txt").write_bytes(b"")
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01binary" == (tmp_path / "c.bin").read_bytes()
    assert (tmp_path / "b.txt").read_bytes() == "héllo\n".encode("utf-8")
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == dict.fromkeys(["a.bin", "b.txt", "c.bin", "plain.txt"], 0o666 & ~_umask())


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.json"
    write_text(target, "old")
    with pytest.raises(RuntimeError, match="interrupted"):
        with atomic_path(target) as tmp:
            tmp.write_text("half a fi")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_folder_appears_whole_or_not_at_all(tmp_path):
    with atomic_folder(tmp_path / "run", tmp_path / ".tmp-run") as tmp:
        (tmp / "manifest.json").write_text("{}")
        assert not (tmp_path / "run").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run"] and (tmp_path / "run" / "manifest.json").is_file()
    with pytest.raises(KeyboardInterrupt):
        with atomic_folder(tmp_path / "second") as tmp:
            (tmp / "metrics.csv").write_text("task\n")
            raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
    with pytest.raises(OSError):  # the target exists (not empty): the rename fails, the temporary goes
        with atomic_folder(tmp_path / "run") as tmp:
            (tmp / "other.csv").write_text("x\n")
    assert [p.name for p in tmp_path.iterdir()] == ["run"] and os.listdir(tmp_path / "run") == ["manifest.json"]


def test_a_writer_that_picks_its_format_by_suffix_writes_the_targets_format(tmp_path):
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"task": ["sts12", "sts13"], "value": [0.5, 0.25]})
    frame.to_csv(tmp_path / "direct.csv.gz", index=False)
    with atomic_path(tmp_path / "atomic.csv.gz") as tmp:
        frame.to_csv(tmp, index=False)
    assert (tmp_path / "atomic.csv.gz").read_bytes()[:2] == b"\x1f\x8b"  # gzip, as the name asks
    assert pandas.read_csv(tmp_path / "atomic.csv.gz").equals(pandas.read_csv(tmp_path / "direct.csv.gz"))


def test_torch_save_writes_a_weights_only_loadable_file(tmp_path):
    torch = pytest.importorskip("torch")
    torch_save({"w": torch.arange(3.0)}, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", weights_only=True)
    assert torch.equal(loaded["w"], torch.tensor([0.0, 1.0, 2.0]))
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt"]


def test_the_writer_and_the_data_root_import_neither_torch_nor_each_other():
    code = ("import sys, benchbox.storage.atomic, benchbox.data.root; "
            "print(sorted(m for m in ('torch', 'benchbox.data.download') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
