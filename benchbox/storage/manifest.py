"""The one typed reader of run manifests (``manifest.json``, docs/schema.md): :meth:`Manifest.parse`.

Readers of runs take their facts from a :class:`Manifest` (``Run.record``) instead of chains of
``manifest.get(...)``: what a field means and what a missing or malformed one reads as is written here once.
Runs written before a field existed read it as empty (None, ``{}``); a field of the wrong JSON type reads the
same way, so an old or hand-edited run still opens and is then told apart by its identity
(:mod:`benchbox.storage.identity`), never silently matched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class EncoderIdentity:
    """The encoder a run evaluated, as built (:func:`benchbox.storage.identity.encoder_record`)."""

    name: str | None
    fingerprint: str | None
    dim: int | None
    #: the whole record as written (what reuse and seed grouping compare)
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def options(self) -> dict[str, Any]:
        return _dict(self.record.get("options"))

    @property
    def config(self) -> dict[str, Any]:
        return _dict(self.record.get("config"))

    @property
    def distribution(self) -> str | None:
        return _text(_dict(self.record.get("provider")).get("distribution"))

    @property
    def version(self) -> str | None:
        return _text(_dict(self.record.get("provider")).get("version"))


@dataclass(frozen=True)
class TaskEntry:
    """What a run recorded of one task."""

    name: str
    protocol: dict[str, Any]
    data_checksums: dict[str, str]
    #: the task's option values (None: a run written before they were recorded)
    options: dict[str, Any] | None
    metadata: dict[str, Any] | None
    #: class, provider and declared version of the implementation (:func:`benchbox.storage.identity.task_record`)
    implementation: dict[str, Any]

    @property
    def version(self) -> str | None:
        """The task's declared version, from its implementation record, else its recorded metadata."""
        found = self.implementation.get("version", _dict(self.metadata).get("version"))
        return None if found is None else str(found)


@dataclass(frozen=True)
class Manifest:
    """A run's manifest, typed (module docstring)."""

    run_id: str
    kind: str
    label: str | None
    created: str | None
    encoder: EncoderIdentity
    #: the protocol options (``TaskOptions.recorded()``)
    options: dict[str, Any]
    tasks: dict[str, TaskEntry]
    packages: dict[str, str]
    #: ``sys.argv`` of the command that wrote the run
    command: list[str] = field(default_factory=list)
    #: training runs: the training configuration (a char-RNN run's ``config``, an InferSent run's ``training``)
    #: and the training data (sizes, ``sources`` checksums)
    training: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    #: the settings as the manifest groups them (``options``, ``config`` or ``training``, ``data_root``, and
    #: ``data_mismatch``: the files evaluated under ``--allow-data-mismatch``): what a report lists under each key
    settings: dict[str, Any] = field(default_factory=dict)
    #: training runs: ``running``, ``complete`` or ``stopped``; the error that stopped one, the step a signal
    #: stopped it at, and the steps of an epoch
    status: str | None = None
    error: str | None = None
    stopped_at_step: int | None = None
    steps_per_epoch: int | None = None
    #: char-RNN training runs: one record per snapshot (``epoch``, ``file``, ``dev`` scores, ``score``), the
    #: snapshot files of the final ensemble, and how snapshots were selected
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    ensemble: list[str] = field(default_factory=list)
    selection: str | None = None

    @property
    def benchbox_version(self) -> str | None:
        return _text(self.packages.get("benchbox"))

    def setting(self, key: str) -> Any:
        """A training setting: from the training configuration, else the encoder's configuration (None)."""
        for block in (self.training, self.encoder.config):
            if key in block:
                return block[key]
        return None

    @classmethod
    def parse(cls, raw: dict[str, Any], run_id: str) -> Manifest:
        """The typed view of ``raw`` (a manifest's JSON object); ``run_id``: the folder's name, used when the
        manifest names none."""
        encoder = _dict(raw.get("encoder"))
        dim = encoder.get("dim")
        tasks = {}
        for name, entry in _dict(raw.get("tasks")).items():
            if isinstance(entry, dict):
                tasks[name] = TaskEntry(
                    name, dict(_dict(entry.get("protocol"))), dict(_dict(entry.get("data_checksums"))),
                    entry["options"] if isinstance(entry.get("options"), dict) else None,
                    entry["metadata"] if isinstance(entry.get("metadata"), dict) else None,
                    dict(_dict(entry.get("implementation"))))
        return cls(
            run_id=_text(raw.get("run_id")) or run_id,
            kind=_text(raw.get("kind")) or "eval",
            label=_text(raw.get("label")),
            created=_text(raw.get("created")),
            encoder=EncoderIdentity(_text(encoder.get("name")), _text(encoder.get("fingerprint")),
                                    dim if isinstance(dim, int) and not isinstance(dim, bool) else None,
                                    dict(encoder)),
            options=dict(_dict(raw.get("options"))),
            tasks=tasks,
            packages=dict(_dict(raw.get("packages"))),
            command=[str(a) for a in raw["command"]] if isinstance(raw.get("command"), list) else [],
            training=dict(_dict(raw.get("config")) or _dict(raw.get("training"))),
            data=dict(_dict(raw.get("data"))),
            settings={key: raw[key] for key in ("options", "config", "training", "data_root", "data_mismatch")
                      if key in raw},
            status=_text(raw.get("status")),
            error=_text(raw.get("error")),
            stopped_at_step=_int(raw.get("stopped_at_step")),
            steps_per_epoch=_int(raw.get("steps_per_epoch")),
            snapshots=[s for s in raw["snapshots"] if isinstance(s, dict)] if isinstance(raw.get("snapshots"), list) else [],
            ensemble=[str(s) for s in raw["ensemble"]] if isinstance(raw.get("ensemble"), list) else [],
            selection=_text(raw.get("selection")),
        )
