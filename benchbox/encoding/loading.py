"""``load_encoder``: an :class:`Encoder` from whatever names one.

In this order (the first that applies wins):

1. an :class:`Encoder` instance: itself; any other object with ``encode`` or a plain callable: adapted
   (:func:`benchbox.encoding.adapter.as_encoder`);
2. a registry name, plain (``glove-bow``) or qualified by its providing distribution
   (``benchbox-toyplugin:tfidf``), see :mod:`benchbox.registry`;
3. an existing trained-model folder (a training run or checkpoint folder whose manifest names its encoder);
4. ``module:attribute`` (``my_models.encoders:MyEncoder``, the module importable from ``sys.path`` or the current
   folder): a **class** is instantiated with the keyword arguments (``-e KEY=VALUE`` on the command line); an
   **object** with ``encode`` is used as it is; any other **callable** is the encode function itself
   (``fn(list[str]) -> array``). A factory function is therefore not called: expose what it returns as a
   module attribute instead.

A registered entry follows the same class / object / callable rule. Everything that is not an
:class:`Encoder` is adapted (contract and caching policy: :mod:`benchbox.encoding.adapter`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from benchbox.encoding.protocol import Encoder, encoder_call, fingerprint_of
from benchbox.encoding.adapter import as_encoder, describe
from benchbox.encoding.options import typed_options
from benchbox.errors import BenchboxError
from benchbox.storage.identity import attach_build, build_of, built_record
from benchbox.registry import ENCODERS, import_attribute
from benchbox.storage.runs import MANIFEST, Run

#: ``package.module:attribute.path``, all Python identifiers
MODULE_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def load_encoder(spec: Any, **kwargs: Any) -> Encoder:
    """An encoder from an object, a registry name, a trained-model folder or ``module:attribute`` (see the
    module docstring); keyword arguments go to the encoder's class. Anything else raises a one-line
    :class:`BenchboxError`."""
    if not isinstance(spec, (str, os.PathLike)):
        _no_options(spec, kwargs)
        encoder = as_encoder(spec)
        if spec is encoder:
            return encoder  # an Encoder object made by the caller: recorded by its class, no options
        return attach_build(encoder, build_of(spec, None, {}))
    text = os.fspath(spec)
    refuse_shadowing(text)
    if text not in ENCODERS:
        if Path(text).exists():
            return _from_folder(Path(text), kwargs)
        if MODULE_ATTRIBUTE.fullmatch(text):
            return instantiate(_import(text), text, kwargs)
    entry = ENCODERS.resolve(text)  # an unknown name raises the registry's error: close names, available ones
    return instantiate(ENCODERS.load(entry), text, kwargs, default_name=entry.name, source=entry.qualified)


def shadowed_folder(text: str) -> Path | None:
    """The file or folder in the working directory that a bare registered encoder name (``glove-bow``, not
    ``./glove-bow``) also names, else None."""
    bare = not (Path(text).is_absolute() or text.startswith(".") or "/" in text or os.sep in text)
    return Path(text) if bare and text in ENCODERS and Path(text).exists() else None


def refuse_shadowing(text: str, *, runs_too: bool = False) -> None:
    """A bare name that names both a registered encoder and a folder in the working directory that the argument
    could mean — a trained-model or run folder (``manifest.json``), and with ``runs_too`` (compare) a folder of
    runs — is ambiguous: refused in one line saying how to name either. (A folder that holds no run, e.g. a
    plugin's source package, is no candidate: the name is the encoder.)"""
    folder = shadowed_folder(text)
    if folder is None or not folder.is_dir():
        return
    if (folder / MANIFEST).is_file() or (runs_too and any((c / MANIFEST).is_file() for c in folder.iterdir())):
        raise BenchboxError(f"{text!r} names both the registered encoder {_qualified(text)} and the folder ./{text} "
                            f"here, which holds a run: write ./{text} for the folder or {_qualified(text)} for the "
                            "encoder")


def _qualified(name: str) -> str:
    try:
        return ENCODERS.resolve(name).qualified
    except BenchboxError:  # a name two plugins provide: its own error comes when it is loaded
        return name


def record_without_loading(spec: str, **kwargs: Any) -> dict[str, Any] | None:
    """The record a run manifest would hold of ``load_encoder(spec, **kwargs)``
    (:func:`benchbox.storage.identity.encoder_record`), without building the encoder: for a registry name or
    ``module:attribute`` naming an :class:`Encoder` class whose :meth:`~Encoder.identity_unloaded` answers for
    these options; else None (only building it tells). Errors are :func:`load_encoder`'s (an unknown name)."""
    if spec in ENCODERS:
        entry = ENCODERS.resolve(spec)
        target, source = ENCODERS.load(entry), entry.qualified
    elif MODULE_ATTRIBUTE.fullmatch(spec) and not Path(spec).exists():
        target, source = _import(spec), spec
    else:
        return None
    if not (isinstance(target, type) and issubclass(target, Encoder)):
        return None
    with encoder_call(target.name, "identity_unloaded()"):
        known = target.identity_unloaded(**kwargs)
    if known is None:
        return None
    fingerprint = fingerprint_of(target.name, known["config"], known["weights_digest"])
    return built_record(target.name, fingerprint, known["dim"], known["config"], build_of(target, source, kwargs))


def instantiate(obj: Any, spec: str, kwargs: dict[str, Any], default_name: str | None = None,
                source: str | None = None) -> Encoder:
    """An encoder from what ``spec`` refers to: a class is called with ``kwargs``, an object or callable is
    used (and adapted unless it is an :class:`Encoder`); its build (``source``, default ``spec``; class;
    options, typed by the class' signature: :mod:`benchbox.encoding.options`) is attached
    (:mod:`benchbox.storage.identity`)."""
    if isinstance(obj, type):
        kwargs = typed_options(obj, kwargs, spec)
    build = build_of(obj, source or spec, kwargs)
    if isinstance(obj, type):
        if not issubclass(obj, Encoder) and not callable(getattr(obj, "encode", None)):
            raise BenchboxError(f"{spec} is {describe(obj)}, which has no encode(list[str]) method: not an encoder")
        with encoder_call(spec, "construction"):  # any other exception, SystemExit included: one line
            try:
                obj = obj(**kwargs)
            except (TypeError, ValueError) as exc:  # an unknown option, or a value the class refuses
                raise BenchboxError(f"bad options for encoder {spec!r}: {exc}") from exc
    else:
        _no_options(obj, kwargs, spec)
        if not isinstance(obj, Encoder) and not callable(getattr(obj, "encode", None)) and not callable(obj):
            raise BenchboxError(f"{spec} is a {describe(obj)}, which has no encode(list[str]) method and is not "
                                "callable: not an encoder")
    return attach_build(as_encoder(obj, default_name), build)


def _no_options(obj: Any, kwargs: dict[str, Any], spec: str | None = None) -> None:
    if kwargs:
        raise BenchboxError(f"encoder options ({', '.join(sorted(kwargs))}) given, but {spec or describe(obj)} is "
                            "an object, not a class: there is nothing to pass them to")


def _import(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    try:
        return import_attribute(reference, current_folder=True)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise BenchboxError(f"{reference!r} is not a registered encoder (`benchbox list encoders`), and no module "
                                f"{exc.name!r} can be imported: install it, add its folder to PYTHONPATH, or "
                                "use --include FILE.py") from exc
        raise BenchboxError(f"importing {module_name!r} for {reference!r} failed: {exc}") from exc
    except AttributeError as exc:
        raise BenchboxError(f"module {module_name!r} has no attribute {attribute!r}: check the name after ':'") from exc
    except (Exception, SystemExit) as exc:  # the module's own code raised or exited: contain it
        raise BenchboxError(f"importing {module_name!r} for {reference!r} failed: {_what(exc)}") from exc


def _from_folder(path: Path, kwargs: dict[str, Any]) -> Encoder:
    """A trained model from a training run or checkpoint folder whose manifest names its encoder class."""
    if not (path / MANIFEST).is_file():
        raise BenchboxError(
            f"{path} exists but is not a benchbox model folder (no {MANIFEST}); give an encoder name "
            f"({', '.join(ENCODERS.names())}) or a training run folder"
        )
    record = Run.open(path).record
    encoder_name = record.encoder.name
    if not encoder_name:
        raise BenchboxError(f"{path / MANIFEST} names no encoder: is it an evaluation run, not a model?")
    cls = ENCODERS.get(encoder_name)
    if not hasattr(cls, "from_path"):
        raise BenchboxError(f"encoder {encoder_name!r} cannot be loaded from a folder")
    kwargs = typed_options(cls.from_path, kwargs, encoder_name)
    with encoder_call(encoder_name, f"construction from {path}"):
        encoder = cls.from_path(path, **kwargs)
    return attach_build(encoder, build_of(encoder, str(path), kwargs, training=record.training or None))


def _what(exc: BaseException) -> str:
    """An exception raised (or ``sys.exit`` called) by a module being imported, in a few words."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) while being imported"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
