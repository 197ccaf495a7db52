"""An encoder's options, typed once by its signature: the one place ``-e KEY=VALUE``, a study's ``options`` table
and the Python API's keyword arguments become the values an encoder is built with and a run records.

:func:`typed_options` reads the annotations (else the default's type) of the parameters the encoder is built
through — its class' constructor, or ``from_path`` for a trained-model folder, whose ``**kwargs`` go on to the
constructor — and parses each value by them:

- text (``-e dim=256``) becomes the first type of the annotation it reads as, in the order ``int``, ``float``,
  ``bool``, ``None`` (``""`` or ``none``, where text is not accepted), then ``str`` / ``os.PathLike`` (kept
  as text); so ``'256'`` and a default ``256`` are one value, and two runs differing only in how a number was
  written are reused for each other and grouped as seeds (:mod:`benchbox.storage.identity`);
- a boolean is one of ``true/false``, ``yes/no``, ``1/0``, ``on/off`` (any case); anything else (``ture``,
  ``maybe``) is refused;
- a TOML or Python value that already has a type is checked against the annotation (an ``int`` is a ``float``
  where one is wanted, a number is its text where only text is);
- a parameter without annotation or default, and an option caught by ``**kwargs``, is kept as given.

A value the annotation cannot read is one line naming the option, the value and what it accepts
(:class:`BenchboxError`, exit 2 on the command line). An option the signature does not take is left to the
constructor, which refuses it with its own message.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import types
import typing
from typing import Any

from benchbox.errors import BenchboxError

#: the words a boolean option accepts (compared case-insensitively), true first
TRUE_WORDS = ("true", "yes", "1", "on")
FALSE_WORDS = ("false", "no", "0", "off")
#: a whole number as text
INTEGER = re.compile(r"[+-]?\d+")
#: the order in which text is tried against the types of an annotation
_ORDER = (int, float, bool, type(None), str, os.PathLike)


def typed_options(target: Any, raw: dict[str, Any], where: str = "encoder") -> dict[str, Any]:
    """``raw`` (option name → text or value) parsed by the types of the parameters ``target`` (an encoder class,
    or its ``from_path``) declares (module docstring); ``where`` names the encoder in the error line."""
    declared = option_types(target)
    return {name: parse_option(name, value, declared[name], where) if name in declared else value
            for name, value in raw.items()}


def option_types(target: Any) -> dict[str, tuple[type, ...]]:
    """The types each keyword parameter of ``target`` takes (its annotation's members, else its default's type);
    a bound ``from_path`` leaves out its folder, and its ``**kwargs`` add those of the class' constructor.
    Parameters of unknown type are left out (their values are kept as given)."""
    if not callable(target):
        return {}
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return {}
    init = target.__init__ if isinstance(target, type) else target
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: fall back to the defaults
        hints = {}
    found: dict[str, tuple[type, ...]] = {}
    if inspect.ismethod(target) and target.__name__ == "from_path":
        parameters = parameters[1:]  # the folder
        if any(p.kind is p.VAR_KEYWORD for p in parameters):
            found.update(option_types(target.__self__))
    for param in parameters:
        if param.kind not in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
            continue
        kinds = _members(hints[param.name]) if param.name in hints else ()
        if not kinds and param.default is not inspect.Parameter.empty and param.default is not None:
            kinds = (type(param.default),)
        if kinds:
            found[param.name] = kinds
    return found


def _members(annotation: Any) -> tuple[type, ...]:
    """The plain types of an annotation (``int | str | None`` → int, str, NoneType; ``os.PathLike[str]`` →
    ``os.PathLike``);
    any other type (``Any``, ``list[...]``, a class) is ``object``: a value none of the others reads is kept."""
    if annotation is None or annotation is type(None):
        return (type(None),)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return tuple(kind for arg in typing.get_args(annotation) for kind in _members(arg))
    if origin is os.PathLike:
        return (os.PathLike,)
    if origin is typing.Literal:
        return tuple({type(arg) for arg in typing.get_args(annotation)})
    return (annotation,) if annotation in _ORDER else (object,)


def parse_option(name: str, value: Any, kinds: tuple[type, ...], where: str = "encoder") -> Any:
    """``value`` as the first of ``kinds`` it reads as (module docstring), else a one-line :class:`BenchboxError`."""
    if isinstance(value, str):
        for kind in sorted((k for k in kinds if k in _ORDER), key=_ORDER.index):
            if kind is type(None) and (str in kinds or os.PathLike in kinds):
                continue  # text that may be text stays text ("none" is a word)
            parsed = _from_text(value, kind)
            if parsed is not _NO:
                return parsed
    elif isinstance(value, bool) or value is None:
        if type(value) in kinds:
            return value
    elif any(isinstance(value, kind) for kind in kinds if kind not in (object, bool, type(None))):
        return value
    elif float in kinds and isinstance(value, int):
        return float(value)
    elif str in kinds and isinstance(value, (int, float)):
        return str(value)
    if object in kinds:
        return value  # a type benchbox does not parse (a list, a class): the constructor checks it
    raise BenchboxError(f"{where} option {name} = {value!r}: {_accepted(kinds)}")


_NO = object()


def _from_text(text: str, kind: type) -> Any:
    stripped = text.strip()
    if kind is int:
        return int(stripped) if INTEGER.fullmatch(stripped) else _NO
    if kind is float:
        try:
            number = float(stripped)
        except ValueError:
            return _NO
        return number if math.isfinite(number) else _NO
    if kind is bool:
        word = stripped.lower()
        return True if word in TRUE_WORDS else False if word in FALSE_WORDS else _NO
    if kind is type(None):
        return None if stripped.lower() in ("", "none") else _NO
    return text


def _accepted(kinds: tuple[type, ...]) -> str:
    """What an option of ``kinds`` accepts, in words."""
    words = {int: "a whole number", float: "a finite number", type(None): "none", str: "text", os.PathLike: "a path",
             bool: f"a boolean ({'/'.join(a + '/' + b for a, b in zip(TRUE_WORDS, FALSE_WORDS))}, any case)"}
    return "expected " + " or ".join(dict.fromkeys(words[k] for k in sorted(set(kinds) & set(words), key=_ORDER.index)))
