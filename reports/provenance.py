"""The provenance section's tables: what each run is (encoder, fingerprint, command, creation time), its
encoder configuration and options, the checksums of the data it read, and the package versions it ran with.
This is the only part of a report that shows timestamps."""

from __future__ import annotations

from typing import Any

from benchbox import formatting as fmt
from benchbox.reports import training
from benchbox.reports.document import Table
from benchbox.comparison.sources import Source


def _flat(value: Any, prefix: str = "") -> dict[str, str]:
    """Nested dicts as dotted keys → text."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key in sorted(value, key=str):
            out.update(_flat(value[key], f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: fmt.plain(value)} if prefix else {}


def runs_table(sources: list[Source]) -> Table:
    rows = []
    for s in sources:
        record = s.run.record
        kind = record.kind
        if kind == "train" and training.status(s.run) != "complete":
            kind += f", {training.status(s.run)}"
        rows.append([s.label, record.run_id, kind, fmt.plain(record.encoder.name or ""),
                     fmt.plain(record.encoder.fingerprint or fmt.MISSING), fmt.plain(record.created or fmt.MISSING),
                     " ".join(fmt.plain(a) for a in record.command)])
    return Table(caption="Runs", header=["Run", "Run ID", "Kind", "Encoder", "Fingerprint", "Created", "Command"],
                 rows=rows)


def _wide(sources: list[Source], caption: str, first: str, values: list[dict[str, str]]) -> Table | None:
    keys = sorted(set().union(*values))
    if not keys:
        return None
    rows = [[key] + [v.get(key, fmt.MISSING) for v in values] for key in keys]
    return Table(caption=caption, header=[first, *[s.label for s in sources]], rows=rows)


def encoder_table(sources: list[Source]) -> Table | None:
    values = []
    for s in sources:
        encoder = dict(s.run.record.encoder.record)
        encoder.pop("name", None)
        encoder.pop("fingerprint", None)
        values.append(_flat(encoder))
    return _wide(sources, "Encoder configuration", "Setting", values)


def options_table(sources: list[Source]) -> Table | None:
    """Evaluation options (``options``) and training settings (``config``/``training``, training data other than
    its checksums), with the data root."""
    values = []
    for s in sources:
        record = s.run.record
        flat = _flat(record.settings)
        data = {k: v for k, v in record.data.items() if k != "sources"}
        if data:
            flat.update(_flat({"data": data}))
        flat.update(_flat({f"task.{task}.protocol": entry.protocol for task, entry in sorted(record.tasks.items())}))
        values.append(flat)
    return _wide(sources, "Options, protocols and training settings", "Setting", values)


def checksums_table(sources: list[Source]) -> Table | None:
    """One row per (task, file, sha256); the runs that read it. Differing checksums of one file show as two rows."""
    used: dict[tuple[str, str, str], list[str]] = {}
    for s in sources:
        record = s.run.record
        files = [(task, path, digest) for task, entry in record.tasks.items()
                 for path, digest in entry.data_checksums.items()]
        sources_read = record.data.get("sources")
        files += [("training", path, digest) for path, digest in (sources_read or {}).items()]
        for key in files:
            used.setdefault(tuple(map(str, key)), []).append(s.label)
    if not used:
        return None
    rows = [[*key, ", ".join(labels)] for key, labels in sorted(used.items())]
    return Table(caption="Data files read (sha256)", header=["Task", "File", "sha256", "Runs"], rows=rows, row_headers=2)


def packages_table(sources: list[Source]) -> Table | None:
    return _wide(sources, "Package versions", "Package",
                 [{str(k): fmt.plain(v) for k, v in s.run.record.packages.items()} for s in sources])
