"""Help text a newcomer reads (issue 41): options show what to type, not internal types (``--include
<list[Path]>``), and ``--seed`` says its default once and, on ``train``, what a training seed does."""

from __future__ import annotations

import typer
from typer.core import TyperOption

from benchbox.cli import app
from benchbox.options import DEFAULT_SEED


def _commands(command, path: tuple[str, ...] = ()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _options(path: tuple[str, ...] = ()):
    """(command path, option, its help record) of every option of every command."""
    root = typer.main.get_command(app)
    for where, command in _commands(root):
        if path and where != path:
            continue
        ctx = typer.Context(command, info_name=" ".join(("benchbox", *where)))
        for param in command.get_params(ctx):
            if isinstance(param, TyperOption) and not param.hidden:
                yield where, param, param.get_help_record(ctx)


def test_no_option_shows_an_internal_type():
    leaking = [f"benchbox {' '.join(where)} {record[0]}" for where, _, record in _options()
               if "list[" in record[0] or "Path]" in record[0]]
    assert not leaking
    includes = [record[0] for where, option, record in _options() if option.name == "include"]
    assert includes == ["--include FILE.py"]


def test_seed_says_its_default_once_and_what_it_seeds_in_each_command():
    for path in (("eval",), ("compare",), ("train", "char-gru"), ("train", "infersent")):
        (help_text,) = [record[1] for _, option, record in _options(path) if option.name == "seed"]
        assert help_text.count(str(DEFAULT_SEED)) == 1, help_text  # typer's [default: 1111]
        training = path[0] == "train"
        assert ("initialisation" in help_text) == training and ("bootstrap" in help_text) == (not training)
