"""The provenance section's tables: what each run is (encoder, fingerprint, command, creation time), its
encoder configuration and options, the checksums of the data it read, and the package versions it ran with.
This is the only part of a report that shows timestamps."""

from __future__ import annotations

from typing import Any

from benchbox import formatting as fmt
from benchbox.reports import training
from benchbox.reports.document import Table
from benchbox.sources import Source


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
        m = s.run.manifest
        encoder = m.get("encoder") or {}
        kind = str(m.get("kind", "eval"))
        if kind == "train" and training.status(s.run) != "complete":
            kind += f", {training.status(s.run)}"
        rows.append([s.label, str(m.get("run_id", s.run.path.name)), kind,
                     fmt.plain(encoder.get("name", "")), fmt.plain(encoder.get("fingerprint", fmt.MISSING)),
                     fmt.plain(m.get("created", fmt.MISSING)), " ".join(fmt.plain(a) for a in m.get("command") or [])])
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
        encoder = dict(s.run.manifest.get("encoder") or {})
        encoder.pop("name", None)
        encoder.pop("fingerprint", None)
        values.append(_flat(encoder))
    return _wide(sources, "Encoder configuration", "Setting", values)


def options_table(sources: list[Source]) -> Table | None:
    """Evaluation options (``options``) and training settings (``config``/``training``, training data other than
    its checksums), with the data root."""
    values = []
    for s in sources:
        m = s.run.manifest
        flat = _flat({key: m[key] for key in ("options", "config", "training", "data_root") if key in m})
        data = {k: v for k, v in (m.get("data") or {}).items() if k != "sources"}
        if data:
            flat.update(_flat({"data": data}))
        flat.update(_flat({f"task.{task}.protocol": entry.get("protocol", {})
                           for task, entry in sorted((m.get("tasks") or {}).items())}))
        values.append(flat)
    return _wide(sources, "Options, protocols and training settings", "Setting", values)


def checksums_table(sources: list[Source]) -> Table | None:
    """One row per (task, file, sha256); the runs that read it. Differing checksums of one file show as two rows."""
    used: dict[tuple[str, str, str], list[str]] = {}
    for s in sources:
        m = s.run.manifest
        files = [(task, path, digest) for task, entry in (m.get("tasks") or {}).items()
                 for path, digest in (entry.get("data_checksums") or {}).items()]
        files += [("training", path, digest) for path, digest in ((m.get("data") or {}).get("sources") or {}).items()]
        for key in files:
            used.setdefault(tuple(map(str, key)), []).append(s.label)
    if not used:
        return None
    rows = [[*key, ", ".join(labels)] for key, labels in sorted(used.items())]
    return Table(caption="Data files read (sha256)", header=["Task", "File", "sha256", "Runs"], rows=rows, row_headers=2)


def packages_table(sources: list[Source]) -> Table | None:
    return _wide(sources, "Package versions", "Package",
                 [{str(k): fmt.plain(v) for k, v in (s.run.manifest.get("packages") or {}).items()} for s in sources])
