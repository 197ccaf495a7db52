"""Does an encoder keep benchbox's encoder contract? The checks :func:`benchbox.testing.check_encoder` runs.

The contract (docs/plugins.md, section 2; :mod:`benchbox.encoding.protocol`, :mod:`benchbox.encoding.adapter`) and what
breaking each rule costs:

- **it loads** as ``benchbox eval NAME -e KEY=VALUE`` loads it (:func:`benchbox.encoding.loading.load_encoder`);
- **options typed**: every constructor parameter has an annotation or a default whose type reads ``-e KEY=VALUE``
  (:mod:`benchbox.encoding.options`), and the default written out as text reads back as the default (else two
  runs, one given ``-e dim=32`` and one the default 32, are different models); a declared ``seed_option`` is a
  parameter (else a study's ``seeds`` cannot reach it);
- **shape and dtype**: ``encode`` returns [n, dim] with ``dim`` a positive int, float32 or float64 (float16
  and integers are converted by benchbox but lose or fake precision), finite for every sentence, the empty
  string included; its own ``encode([])`` returns a (0, dim) array (code that calls it directly gets it), as
  benchbox's answer to ``encode([])`` does, which needs ``dim``; an ``encode`` returning None is named as such;
- **determinism**: the same sentences encoded twice, each sentence encoded alone, and a second build with the
  same options (the same seed, under a declared ``seed_option``) give the same vectors (within :data:`RTOL` and
  :data:`ATOL`) and the same fingerprint: the embedding cache stores one vector per sentence under the
  fingerprint and serves it to any later batch;
- **identity recorded**: the encoder has its own fingerprint (else nothing is cached and no run reused), its
  run-manifest record (:func:`benchbox.storage.identity.encoder_record`) is plain JSON, its ``computed_by``
  names distributions (:func:`benchbox.storage.identity.computation`), and under a declared ``seed_option`` a
  seed that changes the vectors changes the fingerprint.

Each failure is one line saying what is wrong and how to fix it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from benchbox.embedding_checks import as_array
from benchbox.encoding.protocol import Encoder
from benchbox.encoding.adapter import describe
from benchbox.encoding.loading import MODULE_ATTRIBUTE, instantiate, load_encoder
from benchbox.encoding.options import option_types, parse_option
from benchbox.errors import BenchboxError
from benchbox.registry import ENCODERS, import_attribute
from benchbox.storage.identity import computation, encoder_record

#: the sentences every check encodes: words, punctuation, non-ASCII text, a repeat and the empty string
SENTENCES = ["A man is playing a guitar.", "A woman slices an onion in the kitchen.", "", "Zwei Hunde rennen über "
             "die Wiese.", "a man is playing a guitar", "Three children are jumping into a swimming pool at noon "
             "while their parents watch from the shade.", "A man is playing a guitar.", "?!"]
#: the tolerance of "the same vector" (relative, and absolute in units of the largest value)
RTOL, ATOL = 1e-4, 1e-5


def encoder_failures(encoder: Any, **options: Any) -> list[str]:
    """Every rule of the module docstring that ``encoder`` (a registry name, ``module:attribute``, a class built
    with ``options``, or an object) breaks, one line each; empty when it conforms."""
    build, target = _builder(encoder, options)
    failures = _option_failures(target, options) if isinstance(target, type) else []
    try:
        built = build(options)
    except BenchboxError as exc:
        return [*failures, f"it cannot be built: {exc}"]
    try:
        dim = built.dim
    except BenchboxError as exc:
        return [*failures, f"its dim cannot be read: {exc}"]
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        return [*failures, f"dim is {dim!r}: declare the output width as a positive int"]
    found = _output_failures(built, dim)
    if found:  # the rest compares outputs that are already wrong
        return [*failures, *found]
    failures += _empty_failures(built, dim)
    failures += _determinism_failures(built, build, options)
    failures += _identity_failures(built)
    return failures + _seed_failures(built, build, options)


def _builder(encoder: Any, options: dict[str, Any]) -> tuple[Callable[[dict[str, Any]], Encoder], Any]:
    """How to build ``encoder`` again with some options, and what it is built from (a class, an object)."""
    if isinstance(encoder, str):
        try:
            target = (ENCODERS.get(encoder) if encoder in ENCODERS
                      else import_attribute(encoder, current_folder=True) if MODULE_ATTRIBUTE.fullmatch(encoder)
                      else None)
        except BenchboxError:
            target = None  # building it says why
        return lambda given: load_encoder(encoder, **given), target
    if isinstance(encoder, type):
        return lambda given: instantiate(encoder, describe(encoder), dict(given)), encoder
    if options:
        raise BenchboxError("options are given to a class or a name; this encoder is an object already built")
    return lambda given: load_encoder(encoder), None


def _option_failures(cls: type, options: dict[str, Any]) -> list[str]:
    """Options typed (module docstring): annotations or defaults, defaults read back, the seed option taken."""
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return []
    keywords = [p for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    types = option_types(cls)
    failures = []
    for p in keywords:
        if p.name not in types:
            failures.append(f"option {p.name} has no annotation and no default, so `-e {p.name}=VALUE` reaches the "
                            f"constructor as text: annotate it (e.g. `{p.name}: int`)")
        elif isinstance(p.default, (bool, int, float, str)):
            text = str(p.default).lower() if isinstance(p.default, bool) else str(p.default)
            try:
                read = parse_option(p.name, text, types[p.name], cls.__name__)
            except BenchboxError as exc:
                read = exc
            if read != p.default or type(read) is not type(p.default):
                failures.append(f"option {p.name}: `-e {p.name}={text}` (its default written out) reads as {read!r}, "
                                f"not the default {p.default!r}, so the two are recorded as different models: "
                                f"annotate {p.name} with the default's type ({type(p.default).__name__})")
    seed = getattr(cls, "seed_option", None)
    if seed and seed not in {p.name for p in keywords} and not any(p.kind is p.VAR_KEYWORD for p in parameters):
        failures.append(f"seed_option is {seed!r}, but the constructor takes no option {seed!r}: a study's seeds "
                        f"cannot reach it; add the parameter `{seed}: int = 0` or correct seed_option")
    return failures


def _raw(encoder: Encoder, sentences: list[str]) -> Any:
    """What the encoder's own code returns for ``sentences``, before benchbox converts and checks it."""
    return encoder._encode(sentences, 128)


def _output_failures(encoder: Encoder, dim: int) -> list[str]:
    """Shape, dtype and finite values of what the encoder returns; benchbox's answer to ``encode([])``."""
    n = len(SENTENCES)
    try:
        raw = _raw(encoder, SENTENCES)
        if raw is None:
            return [f"encode returned None for {n} sentences: return the [n, dim] array of their vectors (a "
                    "missing return statement?)"]
        array = as_array(raw, n, encoder.name)
    except BenchboxError as exc:
        return [f"encode failed: {exc}"]
    failures = []
    if array.shape != (n, dim):
        failures.append(f"encode returned shape {array.shape} for {n} sentences, expected ({n}, {dim}) (dim is "
                        f"{dim}): return one row of width dim per sentence")
    if array.dtype not in (np.float32, np.float64):
        failures.append(f"encode returned dtype {array.dtype}: return float32 (or float64)")
    if array.dtype.kind == "f" and array.ndim == 2 and array.shape[0] == n:
        bad = [s for s, ok in zip(SENTENCES, np.isfinite(array).all(axis=1)) if not ok]
        if bad:
            failures.append(f"encode returned NaN or infinite values for {len(bad)} of {n} sentences, first "
                            f"{bad[0]!r}: every sentence, the empty string too, must get a finite vector")
    return failures


def _empty_failures(encoder: Encoder, dim: int) -> list[str]:
    """A plugin object's own ``encode([])`` (code that calls it directly gets it; an
    :class:`~benchbox.encoding.protocol.Encoder` subclass's ``_encode`` only ever gets sentences) and benchbox's
    answer to it: each a (0, dim) array."""
    try:
        own = _raw(encoder, []) if getattr(encoder, "wrapped", None) is not None else np.zeros((0, dim))
        shape = None if own is None else as_array(own, 0, encoder.name).shape
    except BenchboxError as exc:
        return [f"encode([]) failed: {exc}: return an empty (0, {dim}) array for no sentences"]
    if shape != (0, dim):
        return [f"encode([]) returned {'None' if own is None else f'shape {shape}'}, not (0, {dim}): return an "
                f"empty (0, {dim}) array for no sentences"]
    try:
        empty = encoder.encode([])
    except BenchboxError as exc:
        empty = exc
    if not isinstance(empty, np.ndarray) or empty.shape != (0, dim) or empty.dtype != np.float32:
        return [f"encode([]) gives {empty!r}, not a (0, {dim}) float32 array: keep dim fixed"]
    return []


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.allclose(a, b, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(a).max(initial=0))))


def _determinism_failures(encoder: Encoder, build: Callable[[dict[str, Any]], Encoder],
                          options: dict[str, Any]) -> list[str]:
    """The same vectors twice, alone or in a batch, and from a second build with the same options."""
    first = encoder.encode(SENTENCES)
    failures = []
    if not _same(first, encoder.encode(SENTENCES)):
        failures.append("encoding the same sentences twice gave different vectors: seed every random choice "
                        "(and declare the seed as seed_option), or drop the randomness (dropout left on?)")
    alone = next((s for i, s in enumerate(SENTENCES) if not _same(first[i:i + 1], encoder.encode([s]))), None)
    if alone is not None:
        failures.append(f"the vector of {alone!r} depends on the sentences encoded with it: the embedding cache "
                        "keeps one vector per sentence and serves it to any later batch, so encode each sentence "
                        "independently (mask padding, no batch statistics)")
    try:
        again = build(options)
    except BenchboxError as exc:
        return [*failures, f"a second build with the same options failed: {exc}"]
    if again is encoder:
        return failures
    if encoder.cacheable and again.fingerprint() != encoder.fingerprint():
        failures.append("two builds with the same options have different fingerprints, so nothing it embeds is "
                        "ever found in the cache again: derive the fingerprint from the weights and options only")
    if not _same(first, again.encode(SENTENCES)):
        failures.append("two builds with the same options give different vectors: seed the initialisation (declare "
                        "seed_option) or load fixed weights")
    return failures


def _identity_failures(encoder: Encoder) -> list[str]:
    """Its own fingerprint, a plain-JSON record and a valid ``computed_by``."""
    failures = []
    if not encoder.cacheable:
        failures.append("it has no fingerprint: its embeddings are never cached and its runs never reused; give it "
                        "fingerprint() -> str, a digest of its weights and options")
    try:
        json.dumps(encoder_record(encoder), allow_nan=False)
    except (BenchboxError, TypeError, ValueError) as exc:
        failures.append(f"its identity cannot be recorded in a run manifest: {exc}")
    try:
        computation(encoder)
    except BenchboxError as exc:
        failures.append(str(exc))
    return failures


def _seed_failures(encoder: Encoder, build: Callable[[dict[str, Any]], Encoder], options: dict[str, Any]) -> list[str]:
    """Under a declared ``seed_option``: a seed that changes the vectors changes the fingerprint."""
    seed = getattr(getattr(encoder, "wrapped", encoder), "seed_option", None)
    record = encoder_record(encoder)
    value = record["options"].get(seed) if seed else None
    if not isinstance(value, int) or isinstance(value, bool):
        return []
    try:
        other = build({**options, seed: value + 1})
    except BenchboxError as exc:
        return [f"it cannot be built with {seed}={value + 1}: {exc}"]
    if other.fingerprint() == encoder.fingerprint() and not _same(encoder.encode(SENTENCES), other.encode(SENTENCES)):
        return [f"{seed}={value} and {seed}={value + 1} give different vectors under one fingerprint, so the cache "
                f"serves one seed's vectors to the other: make the fingerprint depend on {seed}"]
    return []
