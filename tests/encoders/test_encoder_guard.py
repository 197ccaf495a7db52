"""Issues #26 and #24: every call into an encoder's code runs behind one guard, and what it returns is
converted or refused in one line.

On the old code: a tuple, a torch tensor that requires grad or is bfloat16, ``dim`` / ``fingerprint()`` / a
constructor raising, and an image branch returning a list ended in tracebacks; ``sys.exit(0)`` in an encoder,
its module or an ``--include`` file ended with exit 0, no run and no message; an image branch returning 999
rows was blamed on ``caption_emb``; a NaN image embedding did not name the encoder; and an image branch
returning zeros scored R@1 = 100.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from benchbox.encoding.protocol import Encoder
from tests.core.test_hostile_inputs import (
    DIM, ToyGrounded, _plugin, _retrieval, features_file, files_under, registered_meanwhile, run_cli,
)

TEXT_TASK = ["--task", "sickr-cosine", "--no-cache", "--no-save"]


@pytest.fixture(autouse=True)
def _registry_restored():
    with registered_meanwhile():
        yield


def _eval(capsys, tmp_path: Path, encoder: str, *extra: str):
    return run_cli(["eval", encoder, *TEXT_TASK, *extra], tmp_path, lambda: capsys.readouterr().err)


def _one_line(outcome, *names: str) -> str:
    assert outcome.code == 2 and not outcome.traceback, outcome
    errors = outcome.error_lines()
    assert len(errors) == 1 and outcome.stderr.strip().splitlines()[-1] == errors[0], outcome.stderr
    for name in names:
        assert name in errors[0], errors[0]
    return errors[0]


def _register(name: str, obj) -> str:
    from benchbox.registry import ENCODERS

    ENCODERS.register(name, obj)
    return name


def _letters(sentences) -> np.ndarray:
    out = np.zeros((len(sentences), DIM), np.float32)
    for i, s in enumerate(sentences):
        for j, ch in enumerate(s[: 4 * DIM]):
            out[i, j % DIM] += ord(ch) % 7
    return out


# --- outputs converted or refused ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["subclass", "duck"])
def test_a_tuple_output_is_refused_in_one_line(tmp_path, capsys, kind):
    returns = lambda s: (_letters(s), {"extra": 1})  # noqa: E731
    if kind == "subclass":
        encoder = _register("guard-tuple", _plugin("guard-tuple", returns))
    else:
        encoder = _register("guard-tuple-duck", type("Duck", (), {"encode": lambda self, s: returns(s),
                                                                  "fingerprint": "t"})())
    _one_line(_eval(capsys, tmp_path, encoder), repr(encoder), "tuple of 2 items")


@pytest.mark.parametrize("convert", [lambda a: torch.tensor(a, requires_grad=True),
                                     lambda a: torch.tensor(a).to(torch.bfloat16),
                                     lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=True)],
                         ids=["requires-grad", "bfloat16", "float64-grad"])
def test_torch_tensor_outputs_are_converted(tmp_path, capsys, convert):
    """The same numbers as the numpy encoder (bfloat16: as its values, rounded to bfloat16)."""
    from benchbox import run_tasks

    tensor = _register("guard-tensor", _plugin("guard-tensor", lambda s: convert(_letters(s))))
    expected = lambda s: convert(_letters(s)).detach().float().numpy()  # noqa: E731
    plain = _register("guard-plain", _plugin("guard-plain", expected))
    assert _eval(capsys, tmp_path, tensor).code == 0
    got = [r.value for r in run_tasks(tensor, ["sickr-cosine"], cache=False).records]
    want = [r.value for r in run_tasks(plain, ["sickr-cosine"], cache=False).records]
    assert got == want and np.isfinite(got).all()


# --- exceptions and exits become one line naming the encoder and the call ----------------------------------------

class Raising(Encoder):
    """An encoder whose call ``fails`` raises (or exits)."""

    name = "guard-raising"
    fails = ""
    exc: BaseException = RuntimeError("boom")

    def __init__(self) -> None:
        if self.fails == "construction":
            raise self.exc

    def _maybe(self, call: str) -> None:
        if self.fails == call:
            raise self.exc

    @property
    def dim(self) -> int:
        self._maybe("dim")
        return DIM

    def config(self):
        self._maybe("config()")
        return {}

    def weights_digest(self) -> str:
        return "w"

    def _encode(self, sentences, batch_size):
        self._maybe("encode()")
        return _letters(sentences)


@pytest.mark.parametrize("exc", [RuntimeError("boom"), SystemExit(0)], ids=["raises", "sys.exit(0)"])
@pytest.mark.parametrize("call", ["construction", "dim", "config()", "encode()"])
def test_an_encoder_call_that_raises_or_exits_is_one_line(tmp_path, capsys, call, exc):
    encoder = _register("guard-raising", type("R", (Raising,), {"fails": call, "exc": exc}))
    message = _one_line(_eval(capsys, tmp_path, encoder), "'guard-raising'", call)
    assert ("sys.exit(0)" in message) if isinstance(exc, SystemExit) else ("RuntimeError: boom" in message)


@pytest.mark.parametrize("attribute", ["dim", "fingerprint", "name"])
def test_a_duck_typed_encoder_whose_attribute_raises_is_one_line(tmp_path, capsys, attribute):
    def broken(self):
        raise ValueError("broken " + attribute)

    members = {"encode": lambda self, s: _letters(s), "fingerprint": lambda self: "f",
               attribute: property(broken) if attribute != "fingerprint" else broken}
    encoder = _register(f"guard-duck-{attribute}", type("Duck", (), members)())
    _one_line(_eval(capsys, tmp_path, encoder), f"broken {attribute}", encoder)


def test_sys_exit_in_an_encoder_module_is_an_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "exiting_encoders.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    outcome = _eval(capsys, tmp_path, "exiting_encoders:Model")
    _one_line(outcome, "exiting_encoders", "sys.exit(0)")
    sys.modules.pop("exiting_encoders", None)


def test_sys_exit_in_an_include_file_is_an_error(tmp_path, capsys):
    (tmp_path / "exiting_include.py").write_text("import sys\nsys.exit(0)\n")
    outcome = run_cli(["--include", str(tmp_path / "exiting_include.py"), "list", "encoders"], tmp_path,
                      lambda: capsys.readouterr().err)
    _one_line(outcome, "exiting_include.py", "sys.exit(0)")


# --- the image branch gets the caption checks --------------------------------------------------------------------

def _image_branch(name: str, returns):
    class Branch(ToyGrounded):
        def encode_images(self, features):
            return returns(np.asarray(features, dtype=np.float32)[:, :DIM])

    Branch.name = name
    return _register(name, Branch)


@pytest.mark.parametrize("name,returns,says", [
    ("list", lambda f: [1.0, 2.0], "a list of 2 items for 6 images"),
    ("rows", lambda f: f[:-1], "shape (5, 4) for 6 images"),
    ("nan", lambda f: np.where(np.arange(len(f))[:, None] == 2, np.nan, f), "NaN or infinite values for 1 of 6 images"),
    ("zeros", lambda f: np.zeros_like(f), "the same vector for all 6 images"),
    ("ints", lambda f: np.ones(f.shape, np.int64) * np.arange(len(f))[:, None], "dtype int64"),
    ("raises", lambda f: 1 / 0, "ZeroDivisionError"),
])
def test_image_branch_output_is_checked_and_blamed(tmp_path, capsys, name, returns, says):
    encoder = _image_branch(f"guard-images-{name}", returns)
    argv = _retrieval(tmp_path, features_file(tmp_path))
    argv[1] = encoder
    before = files_under(tmp_path)
    message = _one_line(run_cli(argv, tmp_path, lambda: capsys.readouterr().err), repr(encoder), "encode_images()",
                        says)
    assert "caption_emb" not in message and files_under(tmp_path) == before


def test_constant_image_features_are_refused(tmp_path, capsys):
    from benchbox.data.image_features import save_features
    from tests.core.test_hostile_inputs import IDS, N_IMAGES
    from benchbox.registry import ENCODERS

    ENCODERS.register(ToyGrounded.name, ToyGrounded)
    features = tmp_path / "constant.npz"
    save_features(features, IDS, np.ones((N_IMAGES, DIM)))
    _one_line(run_cli(_retrieval(tmp_path, features), tmp_path, lambda: capsys.readouterr().err),
              "'hostile-toy'", "the same vector for all 6 images")


def test_a_good_image_branch_still_scores(tmp_path, capsys):
    encoder = _image_branch("guard-images-tensor", lambda f: torch.tensor(f, requires_grad=True))
    argv = _retrieval(tmp_path, features_file(tmp_path))
    argv[1] = encoder
    assert run_cli(argv, tmp_path, lambda: capsys.readouterr().err).code == 0
