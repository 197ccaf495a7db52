"""A study's ``train`` table, checked against the declarations of the training configuration it sets
(:mod:`benchbox.training.train_options`) and written, for each cell, as the JSON spec its training process reads
(:class:`TrainSpec`, ``<cell>/train.json``; ``benchbox train cell FILE`` runs it).

A ``train`` table holds the options of ``benchbox train NAME`` without ``--``: the declared fields of the
encoder's configuration (:data:`CONFIGS`: a char-RNN's :class:`~benchbox.training.config.TrainConfig`,
InferSent's :class:`~benchbox.training.nli_config.NLIConfig`, order embeddings'
:class:`~benchbox.training.order_wordnet_config.OrderWordNetConfig`) and the command's own ``name`` and ``threads``
(:data:`COMMAND_OPTIONS`); the study sets the seed, the data root and the run folder itself
(:data:`benchbox.study.schema.RESERVED_TRAIN`). Each value is typed and checked as the command line checks it,
the configuration is built (its checks across options), and a char-RNN's data is looked for under the study's
data root (:func:`~benchbox.training.data.require_training_data`): every mistake is one line before any cell runs.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from benchbox.encoders.char_rnn_architectures import ARCHITECTURES
from benchbox.errors import BenchboxError
from benchbox.labels import check_label
from benchbox.storage.jsonio import write_json
from benchbox.study.schema import RESERVED_TRAIN
from benchbox.suggest import did_you_mean
from benchbox.training.config import TrainConfig
from benchbox.training.nli_config import NLIConfig
from benchbox.training.order_wordnet_config import OrderWordNetConfig
from benchbox.training.train_options import Declared, TrainOption, config_from_spec, declared

#: the configuration class of each encoder a ``train`` table can train
CONFIGS: dict[str, type] = {**{name: TrainConfig for name in ARCHITECTURES}, "infersent": NLIConfig,
                             "order-wordnet": OrderWordNetConfig}
#: the options of the ``train`` commands that are not configuration fields (a field of the same flag wins)
COMMAND_OPTIONS = {"name": Declared("label", "name", str | None, None, TrainOption(check_value=check_label)),
                   "threads": Declared("threads", "threads", int | None, None, TrainOption(low=1))}
#: a cell's training spec, in its folder
TRAIN_SPEC = "train.json"


@dataclass(frozen=True)
class TrainSpec:
    """What a cell's training process runs: ``benchbox train ENCODER`` with ``config``, into ``out``, the model
    labelled ``label``, on ``threads`` CPU threads (when the configuration has none of its own)."""

    encoder: str
    config: Any
    out: str | None = None
    label: str | None = None
    threads: int | None = None

    def write(self, path: Path) -> None:
        """Write the spec as JSON, whole or not at all."""
        config = {k: v for k, v in asdict(self.config).items() if k != "encoder"}
        write_json(path, {"encoder": self.encoder, "config": config, "out": self.out, "label": self.label,
                          "threads": self.threads}, sort_keys=True)

    @classmethod
    def read(cls, path: Path) -> TrainSpec:
        """The spec of the file ``path``, its configuration built again (a char-RNN's checks across options run)."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
            encoder = raw["encoder"]
            config = _config_class(encoder)
            values = {**raw["config"], **({"encoder": encoder} if config is TrainConfig else {})}
            return cls(encoder, config_from_spec(config, values), raw["out"], raw["label"], raw["threads"])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise BenchboxError(f"{path}: not a training spec ({type(exc).__name__}: {exc})") from None


def _config_class(encoder: str) -> type:
    if encoder not in CONFIGS:
        raise BenchboxError(f"{encoder} cannot be trained here: `benchbox train` knows {', '.join(sorted(CONFIGS))}")
    return CONFIGS[encoder]


def train_spec(encoder: str, table: dict[str, Any], *, seed: int | None = None, data_dir: str | None = None,
               out: str | None = None) -> TrainSpec:
    """The training spec of a ``train`` table (module docstring), with the study's ``seed``, ``data_dir`` and
    run folder ``out``; one line for an unknown key, a bad value, or options that do not go together."""
    config = _config_class(encoder)
    options = declared(config)
    known = {**COMMAND_OPTIONS, **options}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            settable = sorted(k for k in known if k not in RESERVED_TRAIN)
            raise BenchboxError(f"unknown option {key!r} of `benchbox train {encoder}`{did_you_mean(key, settable)}")
        values[known[key].name] = known[key].from_table(value)
    missing = [flag for flag, item in options.items() if item.default is MISSING and item.name not in values]
    if missing:
        raise BenchboxError(f"Missing option '--{missing[0]}'.")
    names = {f.name for f in fields(config)}
    given = {"seed": seed, "data_dir": data_dir, "encoder": encoder}
    settings = {k: v for k, v in given.items() if k in names and v is not None}
    built = config(**{k: v for k, v in values.items() if k in names}, **settings)
    return TrainSpec(encoder, built, out, values.get("label"), None if "threads" in names else values.get("threads"))


def check_train(encoder: str, table: dict[str, Any], data_dir: str | None = None) -> None:
    """Check a study's ``train`` table (:func:`train_spec`) and, for a char-RNN, what it would read under the data
    root ``data_dir``, before any cell runs."""
    spec = train_spec(encoder, table, data_dir=data_dir)
    if isinstance(spec.config, TrainConfig):
        from benchbox.training.data import require_training_data

        require_training_data(spec.config)
