"""``--seeds NAME=RUN,RUN,...``: runs a user declares to be seeds of one model, for runs whose recorded identities
cannot tell (e.g. a plugin encoder without ``seed_option``, whose seed is an ordinary option). A declaration is
checked before anything is tested; each of these is refused in one line, since each would silently leave the
model without its seed-aware claim or give it a wrong one:

- a name declared twice, or a run (or a copy of its folder: one run id) listed twice in one declaration;
- one run in two declarations (a run is a seed of one model);
- published numbers among the seeds (a seed is a run);
- runs of two configurations: identities (:func:`benchbox.comparison.sources.model_key`) that differ in more
  than what a seed changes — every field that names a seed, and the folder a model was loaded from (``source``:
  one training folder per seed), left out — e.g. in an ``-e`` option or the encoder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchbox.comparison.sources import Source, origin
from benchbox.errors import BenchboxError
from benchbox.storage.identity import describe_difference, differences
from benchbox.storage.runs import MANIFEST, Run


def parse_seed_groups(values: list[str]) -> dict[str, list[str]]:
    """``NAME=RUN,RUN[,...]`` values (at least two runs each, each name once) as name → run specs."""
    groups: dict[str, list[str]] = {}
    for value in values:
        name, _, runs = value.partition("=")
        members = [r for r in runs.split(",") if r]
        if not name or len(members) < 2:
            raise BenchboxError(f"--seeds {value!r}: write NAME=RUN,RUN[,...] with at least two runs")
        if name in groups:
            raise BenchboxError(f"--seeds {name} is declared twice: list all of its runs in one --seeds {name}=...")
        groups[name] = members
    return groups


def declared_seeds(seeds: dict[str, list[str]], resolved: list[Source]) -> dict[str, list[str]]:
    """``seeds`` (model name → specs, each naming a source by what named it, its run folder, a copy of it, or its
    label) as model name → labels, each declaration checked (module docstring)."""
    declared: dict[str, list[str]] = {}
    owner: dict[int, str] = {}
    for model, specs in seeds.items():
        members: list[Source] = []
        for spec in specs:
            found = _source(spec, resolved)
            if found is None:
                raise BenchboxError(f"--seeds {model}: {spec} is not among the compared models")
            if found.run is None:
                raise BenchboxError(f"--seeds {model}: {spec} is published numbers, not a run: only runs are seeds")
            if any(m is found for m in members):
                raise BenchboxError(f"--seeds {model} names the run {found.run.run_id} ({found.label}) twice "
                                    f"(as {spec} too): list each seed once")
            if id(found) in owner:
                raise BenchboxError(f"--seeds: the run {found.run.run_id} ({found.label}) is declared a seed of both "
                                    f"{owner[id(found)]} and {model}: a run is a seed of one model")
            owner[id(found)] = model
            members.append(found)
        _one_configuration(model, members)
        declared[model] = [m.label for m in members]
    return declared


def _source(spec: str, resolved: list[Source]) -> Source | None:
    """The compared source ``spec`` names: by what named it, its run folder or its label, else (a copy of a
    compared run's folder, left out as that run) by the run id in the folder's manifest."""
    named = origin(spec)
    found = next((s for s in resolved if named in (s.origin, str(s.path.resolve()) if s.path else None)
                  or spec == s.label), None)
    if found is None and (Path(named) / MANIFEST).is_file():
        run_id = Run.open(named).run_id
        found = next((s for s in resolved if s.run is not None and s.run.run_id == run_id), None)
    return found


def _without_seeds(value: Any) -> Any:
    """An identity without the fields a seed changes (module docstring)."""
    if isinstance(value, dict):
        return {k: _without_seeds(v) for k, v in value.items() if "seed" not in str(k).lower() and k != "source"}
    return value


def _one_configuration(model: str, members: list[Source]) -> None:
    """The declared runs' identities agree in everything but what names a seed."""
    first = _without_seeds(json.loads(members[0].config_key or "{}"))
    for other in members[1:]:
        found = differences(first, _without_seeds(json.loads(other.config_key or "{}")))
        if found:
            raise BenchboxError(f"--seeds {model}: {members[0].label} and {other.label} are not seeds of one model: "
                                f"{describe_difference(found)} differ(s); runs that differ in more than their seed "
                                "are different models")
