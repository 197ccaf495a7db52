"""Issue #18: every numeric option is checked before any work, in one place (benchbox/options.py)."""

from __future__ import annotations

import subprocess
import sys
import typing

import click
import pytest
import typer
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.errors import BenchboxError
from benchbox.options import check_number
from benchbox.training.config import TrainConfig

runner = CliRunner()
TRAIN = ["train", "char-gru", "--dataset", "flickr8k", "--visual", "cluster", "--out", "/nonexistent/never-written"]
INFERSENT = ["train", "infersent", "--nli", "/nonexistent"]


def _commands(group, prefix=()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def _is_numeric(param) -> bool:
    """Whether ``param`` takes numbers: newer typer describes a parameter's type by its annotation
    (``type_descriptor``), typer before that by click's parameter type."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:
        return isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))
    annotation = descriptor.annotation
    return annotation in (int, float) or any(a in (int, float) for a in typing.get_args(annotation))


def test_every_numeric_option_of_every_command_declares_its_range():
    root = typer.main.get_command(app)
    numeric = [(" ".join(path), param) for path, command in _commands(root) for param in command.params
               if _is_numeric(param) and not getattr(param, "is_flag", False)]
    assert len(numeric) == 87  # eval 4, compare 5, train char-* 3 x 13, train infersent 14, train order-wordnet 10,
    # features extract 4, neighbours 3, study 2, report 4 (--threads on every command that computes; compare's
    # --test-resamples, --seed and --test-seed), leaderboard 2 (--resamples, --seed)
    assert [f"{path} {param.opts[0]}" for path, param in numeric if param.callback is None] == []


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "glove-bow", "--task", "sts12", "--batch-size", "-5"], "--batch-size must be ≥ 1, got -5"),
    (["eval", "glove-bow", "--task", "sts12", "--batch-size", "0"], "--batch-size must be ≥ 1, got 0"),
    (["eval", "glove-bow", "--task", "sts12", "--bootstrap", "-1"], "--bootstrap must be ≥ 0, got -1"),
    (["eval", "glove-bow", "--task", "sts12", "--seed", "-1"], "--seed must be ≥ 0, got -1"),
    (["compare", "a", "b", "--test-resamples", "1"], "--test-resamples must be ≥ 2, got 1"),
    ([*TRAIN, "--lr-max", "inf"], "--lr-max must be a finite number (> 0), got inf"),
    ([*TRAIN, "--lr-max", "nan"], "--lr-max must be a finite number (> 0), got nan"),
    ([*TRAIN, "--lr-max", "-1"], "--lr-max must be > 0, got -1"),
    ([*TRAIN, "--margin", "nan"], "--margin must be a finite number (≥ 0), got nan"),
    ([*TRAIN, "--margin", "-1"], "--margin must be ≥ 0, got -1"),
    ([*TRAIN, "--checkpoint-every", "0"], "--checkpoint-every must be ≥ 1, got 0"),
    ([*TRAIN, "--checkpoint-every", "-1"], "--checkpoint-every must be ≥ 1, got -1"),
    ([*TRAIN, "--threads", "0"], "--threads must be ≥ 1, got 0"),
    ([*TRAIN, "--threads", "-1"], "--threads must be ≥ 1, got -1"),
    ([*TRAIN, "--seed", "-1"], "--seed must be ≥ 0, got -1"),
    ([*TRAIN, "--hidden", "0"], "--hidden must be ≥ 1, got 0"),
    ([*TRAIN, "--max-captions", "0"], "--max-captions must be ≥ 1, got 0"),
    ([*INFERSENT, "--lr", "0"], "--lr must be > 0, got 0"),
    ([*INFERSENT, "--dropout-fc", "1"], "--dropout-fc must be ≥ 0 and < 1, got 1"),
    ([*INFERSENT, "--decay", "1.5"], "--decay must be > 0 and ≤ 1, got 1.5"),
    ([*INFERSENT, "--lr-shrink", "0.5"], "--lr-shrink must be ≥ 1, got 0.5"),
    (["features", "extract", "--images", "x", "--out", "y.npz", "--workers", "-1"], "--workers must be ≥ 0, got -1"),
    (["features", "extract", "--images", "x", "--out", "y.npz", "--save-every", "inf"],
     "--save-every must be a finite number (> 0), got inf"),
])
def test_out_of_range_option_stops_before_any_work(args, message):
    result = runner.invoke(app, args)
    assert isinstance(result.exception, BenchboxError), result.output
    assert str(result.exception) == message


def test_cross_option_check_and_the_python_api_share_the_rules():
    with pytest.raises(BenchboxError, match=r"--lr-min \(0.01\) must not exceed --lr-max \(0.001\)"):
        TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", lr_min=1e-2)  # lr_max: flickr8k 1e-3
    with pytest.raises(BenchboxError, match="--lr-max must be a finite number"):
        TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", lr_max=float("inf"))
    TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", checkpoint_every=0)  # API: never


def test_check_number_edges():
    check_number("x", 0, low=0)
    check_number("x", None, low=1)
    with pytest.raises(BenchboxError, match="x must be > 0, got 0"):
        check_number("x", 0.0, low=0, low_open=True)
    with pytest.raises(BenchboxError, match="x must be a number, got True"):
        check_number("x", True, low=0)


def test_cli_prints_one_line_and_exits_2():
    proc = subprocess.run([sys.executable, "-m", "benchbox", *TRAIN, "--lr-min", "1", "--lr-max", "0.1"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --lr-min (1) must not exceed --lr-max (0.1)"


def test_help_text_is_printed_literally():
    """Square brackets in help text are text, not console markup (issue #27: `study --help` lost `[study]`,
    `[[encoder]]` and `benchbox[ray]`): every bracketed word of every option's help reaches the screen."""
    import re

    from typer.testing import CliRunner

    root = typer.main.get_command(app)
    checked = 0
    for path, command in _commands(root):
        shown = " ".join(CliRunner().invoke(app, [*path, "--help"], terminal_width=200).output.split())
        for param in command.params:
            for token in re.findall(r"\S*\[[^\]\s]*\]+\S*", " ".join((getattr(param, "help", "") or "").split())):
                assert token in shown, (path, token)
                checked += 1
    assert checked >= 3
