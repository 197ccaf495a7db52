"""Issue #40: options that name a machine are checked against it, in one line before any work. On the old code
``--device cuda`` without a GPU was accepted for ``glove-bow`` (no task of it computes on a device) and recorded
as ``cuda``; ``--ray ''`` ran the study on the local pool without a word."""

from __future__ import annotations

import json

import pytest
import torch

from benchbox.errors import BenchboxError
from tests.core.test_hostile_inputs import files_under, run_cli

no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA GPU")


def _one_line(outcome, text: str) -> None:
    lines = outcome.stderr.strip().splitlines()
    assert outcome.code == 2 and not outcome.traceback and len(lines) == 1, outcome
    assert lines[0] == f"error: {text}", lines[0]


@no_gpu
@pytest.mark.parametrize("argv", [
    ["eval", "glove-bow", "-t", "stsb-cosine", "--no-cache", "--runs-dir", "runs"],
    ["features", "extract", "--images", ".", "--out", "f.npz", "--weights", "random"],
    ["train", "infersent", "--nli", "nli"],
], ids=["eval", "features-extract", "train-infersent"])
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1"])
def test_a_cuda_device_on_a_machine_without_one_is_one_line(argv, device, tmp_path, capsys):
    outcome = run_cli([*argv, "--device", device], tmp_path, lambda: capsys.readouterr().err)
    _one_line(outcome, f"--device {device}: no CUDA device here; use --device cpu or auto")
    assert not files_under(tmp_path)


def test_cpu_and_auto_are_recorded_as_given(tmp_path, capsys):
    outcome = run_cli(["eval", "glove-bow", "-t", "stsb-cosine", "--no-cache", "--bootstrap", "0", "--device", "cpu",
                       "--runs-dir", "runs", "-q"], tmp_path, lambda: capsys.readouterr().err)
    assert outcome.code == 0, outcome
    manifest = json.loads(next((tmp_path / "runs").glob("*/manifest.json")).read_text())
    assert manifest["options"]["device"] == "cpu"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_cuda_index_past_the_machines_gpus_is_one_line():
    from benchbox.device import check_device

    count = torch.cuda.device_count()
    assert check_device(f"cuda:{count - 1}") == f"cuda:{count - 1}" and check_device("cuda") == "cuda"
    with pytest.raises(BenchboxError, match=f"this machine has {count} CUDA device"):
        check_device(f"cuda:{count}")


STUDY = '[study]\ntasks = ["stsb-cosine"]\n\n[[encoder]]\nname = "glove-bow"\n\n[[encoder]]\nname = "tests.helpers:LetterCounts"\n'


@pytest.mark.parametrize("address", ["", " ", "host", "host:", ":6379", "host:port", "host:0", "host:99999",
                                     "two words:6379", "ray://", "http://host"])
def test_an_empty_or_malformed_ray_address_is_one_line(address, tmp_path, capsys):
    (tmp_path / "s.toml").write_text(STUDY)
    before = files_under(tmp_path)
    outcome = run_cli(["study", "s.toml", "--ray", address], tmp_path, lambda: capsys.readouterr().err)
    _one_line(outcome, f"--ray {address!r} is not the address of a Ray cluster: give HOST:PORT of its head (or "
                       "ray://HOST:PORT, or auto for the cluster started on this machine)")
    assert files_under(tmp_path) == before and not (tmp_path / "s").exists()


@pytest.mark.parametrize("address", [None, "auto", "10.0.0.5:6379", "ray://head.example:10001", "[::1]:6379"])
def test_well_formed_ray_addresses_pass_the_check(address):
    from benchbox.study.run import check_ray_address

    assert check_ray_address(address) == address
