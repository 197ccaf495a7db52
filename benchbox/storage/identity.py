"""A run's identity: exactly which encoder, as built, and which task implementations produced its numbers.

An evaluation run records (``manifest.json``, docs/schema.md):

- ``encoder``: the :func:`encoder_record` — the name, the registry name or ``module:attribute`` it was built
  from, the class and the distribution (with its version) that provides it, every option it was built with
  (given on the command line with ``-e`` and defaulted by the class' signature), its own configuration,
  output width, fingerprint and seed (the value of its declared ``seed_option``, or, for a trained model, the
  training seed, beside the rest of the training configuration);
- per task, the :func:`task_record` — the class, the providing distribution and its version, and the task's
  declared ``version`` — beside its option values, protocol and data checksums.

Three joints follow from it, each here so that they cannot disagree:

- **reuse** (:mod:`benchbox.reuse`): a run is reused only when :func:`differences` between its identity and
  the one asked for is empty;
- **seeds**: runs are seeds of one model only when their identities differ in the seed alone
  (:func:`seed_free`; the fingerprint differs with the weights a seed gives);
- **the embedding cache** (:func:`cache_key`): the fingerprint with the output width and a digest of what
  computes the vectors (:func:`computation`: the providing distribution's version and those of the libraries
  the encoder's class declares in ``computed_by``), so a plugin that changes width or code under one
  fingerprint, or an upgraded library (transformers' image processor moved CLIP image embeddings by up to
  8.6e-5), is never served the vectors of the old one.

The build of an encoder (where it came from, the options it got) is attached by
:func:`benchbox.encoding.loading.load_encoder` (:func:`attach_build`); an encoder made some other way records
its class and provider, and no options.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import to_jsonable
from benchbox.storage.provenance import component

#: the attribute of an :class:`~benchbox.encoding.protocol.Encoder` that holds its :class:`Build`
BUILD_ATTRIBUTE = "_benchbox_build"
#: training-configuration fields that do not change what a trained model computes (or are its seed)
TRAINING_NOT_IDENTITY = ("seed", "threads", "checkpoint_every", "data_dir")


@dataclass(frozen=True)
class Build:
    """How an encoder was built: what named it, its class' provider, and every option it got."""

    #: the registry name (qualified ``PROVIDER:NAME``), ``module:attribute`` or model folder it was built from
    source: str | None
    #: ``module.QualName`` of the class (the plugin's own class for an adapted encoder)
    cls: str
    distribution: str | None
    version: str | None
    #: the options given and defaulted (JSON values; given ``-e`` values are text)
    options: dict[str, Any] = field(default_factory=dict)
    #: the option that seeds the encoder (its class' ``seed_option``), if any
    seed_option: str | None = None
    #: a trained model: the training run's configuration (``TrainConfig``) as its manifest records it
    training: dict[str, Any] | None = None


def build_of(target: Any, source: str | None, given: dict[str, Any], *,
             training: dict[str, Any] | None = None) -> Build:
    """The :class:`Build` of an encoder made from ``target`` (a class called with ``given``, or an object),
    named by ``source``. The options are ``given`` over the defaults of the class' constructor."""
    cls = target if isinstance(target, type) else type(target)
    options: dict[str, Any] = {}
    if not isinstance(target, type) and callable(target) and not hasattr(target, "encode"):
        cls, options = _encode_function(target)
    if isinstance(target, type):
        try:
            parameters = inspect.signature(target).parameters.values()
        except (TypeError, ValueError):  # a builtin or C class without a signature
            parameters = ()
        options = {p.name: p.default for p in parameters
                   if p.default is not inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD}
    options.update(given)
    where = component(cls)
    return Build(source, where["class"], where["distribution"], where["version"], to_jsonable(options),
                 getattr(cls, "seed_option", None), to_jsonable(training) if training is not None else None)


def _encode_function(target: Any) -> tuple[Any, dict[str, Any]]:
    """What an encoder that is a callable (``f(sentences)``) records as its class, and the options it was bound
    with: a function or method itself; a ``functools.partial`` the function it wraps (its bound arguments as the
    options: ``args`` and the keywords); any other callable object (an ``nn.Module``, an object with
    ``__call__``) its class. Bound values that are not plain JSON are recorded by their class (``<module.Class>``),
    never by their ``repr``, which holds a memory address."""
    options: dict[str, Any] = {}
    while isinstance(target, functools.partial):
        options = {**({"args": [_bound(a) for a in target.args]} if target.args else {}),
                   **{k: _bound(v) for k, v in target.keywords.items()}, **options}
        target = target.func
    if not (isinstance(getattr(target, "__qualname__", None), str) and isinstance(getattr(target, "__module__", None), str)):
        target = type(target)  # a callable instance: recorded by its class
    return target, options


def _bound(value: Any) -> Any:
    """A value bound by a ``functools.partial`` as recorded: plain JSON values as they are, others by class."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def attach_build(encoder: Any, build: Build) -> Any:
    """``encoder`` with its :class:`Build` (read back by :func:`encoder_record`)."""
    setattr(encoder, BUILD_ATTRIBUTE, build)
    return encoder


def _build(encoder: Any) -> Build:
    found = getattr(encoder, BUILD_ATTRIBUTE, None)
    if isinstance(found, Build):
        return found
    return build_of(getattr(encoder, "wrapped", encoder), None, {})


def encoder_record(encoder: Any) -> dict[str, Any]:
    """What a run manifest records of ``encoder`` (an :class:`~benchbox.encoding.protocol.Encoder`; module docstring)."""
    return built_record(encoder.name, encoder.fingerprint(), encoder.dim, encoder.config(), _build(encoder))


def built_record(name: str, fingerprint: str, dim: int, config: dict[str, Any], build: Build) -> dict[str, Any]:
    """:func:`encoder_record` from its parts: those the encoder reports and its :class:`Build` (also for an
    encoder not built yet, :func:`benchbox.encoding.loading.record_without_loading`)."""
    seed = build.options.get(build.seed_option) if build.seed_option else None
    if build.training is not None:
        seed = build.training.get("seed")
    record = {"name": name, "fingerprint": fingerprint, "dim": dim,
              "config": config, "source": build.source, "class": build.cls,
              "provider": {"distribution": build.distribution, "version": build.version},
              "options": build.options, "seed_option": build.seed_option, "seed": seed}
    if build.training is not None:
        record["training"] = build.training
    return to_jsonable(record)


def task_record(task: Any) -> dict[str, Any]:
    """Which implementation of a task ran: its class, providing distribution and version, and the task's
    declared ``version`` (bumped when its numbers change)."""
    where = component(type(task))
    return {"class": where["class"], "provider": {"distribution": where["distribution"], "version": where["version"]},
            "version": getattr(task, "version", None)}


def computation(encoder: Any) -> dict[str, str | None]:
    """What computes ``encoder``'s vectors besides its weights: the distribution that provides it and the libraries
    its class declares in ``computed_by`` (a plugin's own class for an adapted encoder; default
    :attr:`benchbox.encoding.protocol.Encoder.computed_by`, which an adapted encoder has), each with its installed version
    (None: not installed)."""
    declared = getattr(getattr(encoder, "wrapped", encoder), "computed_by", encoder.computed_by)
    if isinstance(declared, str) or not all(isinstance(name, str) for name in declared):
        raise BenchboxError(f"encoder {encoder.name!r}: computed_by must be a tuple of distribution names (e.g. "
                            f"(\"numpy\", \"torch\")), got {declared!r}")
    build = _build(encoder)
    provider = {build.distribution: build.version} if build.distribution else {}
    return {**provider, **{name: installed_version(name) for name in declared}}


@lru_cache(maxsize=None)
def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, None when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def cache_key(encoder: Any, side: str = "") -> str:
    """The embedding-cache folder of ``encoder``: ``<fingerprint>-d<width><side>-<digest of its computation>``
    (module docstring); what precedes the last ``-`` is the encoder's *family* in the cache
    (:mod:`benchbox.storage.cache`), shared by the folders of earlier library versions."""
    digest = hashlib.sha256(json.dumps(computation(encoder), sort_keys=True).encode()).hexdigest()[:8]
    return f"{encoder.fingerprint()}-d{encoder.dim}{side}-{digest}"


def image_cache_key(encoder: Any) -> str:
    """The embedding-cache folder of a vision–language encoder's image side: :func:`cache_key` marked
    ``-images``."""
    return cache_key(encoder, "-images")


def differences(recorded: Any, wanted: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """The dotted paths where two JSON values differ, with both values (a missing key reads as None)."""
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        found = []
        for key in sorted(set(recorded) | set(wanted), key=str):
            found += differences(recorded.get(key), wanted.get(key), f"{path}.{key}" if path else str(key))
        return found
    return [] if recorded == wanted else [(path or "(value)", recorded, wanted)]


def describe_difference(found: list[tuple[str, Any, Any]], limit: int = 3) -> str:
    """``options.dim ('64' vs 32), ...`` for a log line."""
    shown = ", ".join(f"{p} ({a!r} vs {b!r})" for p, a, b in found[:limit])
    return shown + (f" and {len(found) - limit} more" if len(found) > limit else "")


def seed_free(encoder: dict[str, Any]) -> dict[str, Any]:
    """An encoder record without what a seed changes: fingerprint, seed, the seed option's value, the keys of
    its own configuration that name a seed, the training seed (and what does not change a trained model,
    :data:`TRAINING_NOT_IDENTITY`); for a trained model also the folder it was loaded from (``source``, and its
    configuration's ``source``: one training folder per seed). Two runs are seeds of one model when these
    agree."""
    record = {k: v for k, v in encoder.items() if k not in ("fingerprint", "seed")}
    seed_option = record.get("seed_option")
    if isinstance(record.get("options"), dict) and seed_option:
        record["options"] = {k: v for k, v in record["options"].items() if k != seed_option}
    trained = isinstance(record.get("training"), dict)
    if trained:
        record.pop("source", None)
        record["training"] = {k: v for k, v in record["training"].items() if k not in TRAINING_NOT_IDENTITY}
    if isinstance(record.get("config"), dict):
        record["config"] = {k: v for k, v in record["config"].items()
                            if "seed" not in k.lower() and not (trained and k == "source")}
    return record
