"""A plugin kit: conformance checks a plugin author runs in their own tests, as scikit-learn's ``check_estimator``.

::

    from benchbox.testing import check_encoder, check_task

    def test_my_encoder_conforms():
        check_encoder("my-encoder")            # a registered name, module:attribute, a class or an object

    def test_my_task_conforms():
        check_task("my-task")                  # a registered name, a Task class or object

Each raises one :class:`ConformanceError` (an ``AssertionError``, so pytest shows it as a failed assertion)
listing every rule broken, one line each, saying what is wrong and how to fix it; :func:`encoder_failures` and
:func:`task_failures` return those lines instead. The rules: :mod:`benchbox.testing.encoder_conformance` and
:mod:`benchbox.testing.task_conformance` (docs/plugins.md, "Testing a plugin").
"""

from __future__ import annotations

from typing import Any

from benchbox.testing.encoder_conformance import encoder_failures
from benchbox.testing.hashing import HashingEncoder
from benchbox.testing.task_conformance import task_failures


class ConformanceError(AssertionError):
    """A plugin that breaks benchbox's contract; the message lists each rule broken."""


def _raise(what: str, failures: list[str]) -> None:
    if failures:
        raise ConformanceError(f"{what} does not conform ({len(failures)} problem{'s' * (len(failures) > 1)}):\n"
                               + "\n".join(f"- {line}" for line in failures))


def _named(thing: Any) -> str:
    return repr(thing) if isinstance(thing, str) else getattr(thing, "__qualname__", type(thing).__qualname__)


def check_encoder(encoder: Any, **options: Any) -> None:
    """Raise :class:`ConformanceError` unless ``encoder`` (built with ``options``) keeps the encoder contract."""
    _raise(f"encoder {_named(encoder)}", encoder_failures(encoder, **options))


def check_task(task: Any, encoder: Any = None, *, data_dir: Any = None) -> None:
    """Raise :class:`ConformanceError` unless ``task`` keeps the task contract, evaluated with ``encoder``
    (default: :class:`HashingEncoder`) on the data root ``data_dir`` (default: ``$BENCHBOX_DATA``)."""
    _raise(f"task {_named(task)}", task_failures(task, encoder, data_dir=data_dir))


__all__ = ["ConformanceError", "HashingEncoder", "check_encoder", "check_task", "encoder_failures", "task_failures"]
