"""A paper's reproduction file (``benchbox/reproduce/papers/<paper>.toml``): its tables, the models benchbox runs
for them and the cells that set a published number beside benchbox's.

A file declares (every key is checked, an unknown one is one line naming the file and the key):

- ``[paper]``: ``title`` and ``citation``;
- ``[[table]]``: a table or figure of the paper (``name``, ``caption``), the equivalence ``margin`` of its
  verdicts in the unit of its values, ``why`` (where docs/protocols.md argues that margin) and
  ``published_intervals`` (true when the paper gives intervals, which then enter the difference's);
- ``[[model]]``: what benchbox runs, as a study's ``[[encoder]]`` (:mod:`benchbox.study.schema`): ``encoder`` (a
  registered encoder), ``options``, ``train`` (then the study trains it: ``benchbox train ENCODER``), ``seed``,
  the ``tasks`` it is evaluated on and their ``flags`` (the task flags of ``benchbox eval``, e.g. ``features``); ``departures`` from the paper's configuration (always true of this model);
  ``gpu_hours`` (the full-size training on one GPU, shown in the plan) and ``weights`` (where to put pretrained
  weights, when the encoder needs some); a ``[model.fallback]`` (``options``, ``train``, ``departure``) that runs
  when the paper's own configuration cannot (e.g. GloVe 6B 50-d, shipped with benchbox, in place of 840B 300-d);
- ``[[cell]]``: a published number beside a benchbox number: ``table``, ``model`` (a ``[[model]]`` label, or none
  with ``not_run`` saying why benchbox has no such model), ``published`` (a ``paper:`` comparator,
  :mod:`benchbox.data.comparators`), and optionally ``tasks`` (the published rows of these tasks only; default:
  every row of the comparator), ``metric`` (benchbox's metric for the published one, e.g. the hypernym task's
  ``closure-accuracy`` for the paper's transitive-closure row). One entry is one cell per published row. A
  cell of a table whose numbers benchbox does not carry has no ``published`` and names its row instead: ``row``
  (the paper's name of it), one task in ``tasks``, ``subset`` and ``metric``, and the paper's ``value`` where
  benchbox carries it in no comparator (without one the cell is run and shown, not judged).

A value ``@data/PATH`` in ``options``, ``train`` or ``flags`` is PATH under the data root the reproduction uses.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Annotated, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from benchbox.errors import BenchboxError
from benchbox.suggest import did_you_mean

Scalar = Union[StrictStr, StrictInt, StrictFloat, StrictBool]
#: the prefix of a path under the data root in a model's options or train table
DATA_PREFIX = "@data/"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PaperHead(_Table):
    title: StrictStr
    citation: StrictStr


class PaperTable(_Table):
    name: StrictStr
    caption: StrictStr
    margin: Annotated[float, Field(gt=0)]
    why: StrictStr
    #: whether the paper publishes intervals for this table (else its numbers count as exact: a comparator's own
    #: interval, such as the Wilson interval benchbox attaches to a published accuracy, is not the paper's)
    published_intervals: StrictBool = False


class Fallback(_Table):
    options: dict[str, Scalar] = {}
    train: dict[str, Scalar] | None = None
    departure: StrictStr


class Model(_Table):
    label: StrictStr
    encoder: StrictStr
    tasks: Annotated[list[StrictStr], Field(min_length=1)]
    options: dict[str, Scalar] = {}
    train: dict[str, Scalar] | None = None
    #: task flags of the model's study (``[study]`` table, e.g. ``features`` for retrieval)
    flags: dict[str, Scalar] = {}
    seed: StrictInt | None = None
    departures: list[StrictStr] = []
    gpu_hours: Annotated[float, Field(ge=0)] = 0.0
    weights: StrictStr | None = None
    fallback: Fallback | None = None


class CellEntry(_Table):
    table: StrictStr
    published: StrictStr | None = None
    model: StrictStr | None = None
    not_run: StrictStr | None = None
    tasks: list[StrictStr] | None = None
    metric: StrictStr | None = None
    #: without ``published``: the one row benchbox reports (its task is ``tasks[0]``) and the paper's number, if
    #: benchbox carries it in no comparator (cited where it is written, e.g. docs/protocols.md#reference-numbers)
    row: StrictStr | None = None
    subset: StrictStr | None = None
    value: StrictFloat | StrictInt | None = None


class Paper(_Table):
    paper: PaperHead
    table: Annotated[list[PaperTable], Field(min_length=1)]
    model: list[Model] = []
    cell: Annotated[list[CellEntry], Field(min_length=1)]

    def model_named(self, label: str) -> Model:
        return next(m for m in self.model if m.label == label)

    def table_named(self, name: str) -> PaperTable:
        return next(t for t in self.table if t.name == name)


def papers_folder() -> Path:
    return Path(str(resources.files("benchbox.reproduce") / "papers"))


def paper_names() -> list[str]:
    """The papers benchbox can reproduce: the files shipped in ``benchbox/reproduce/papers``."""
    return sorted(p.stem for p in papers_folder().glob("*.toml"))


def paper_path(name: str) -> Path:
    """The file of the shipped paper ``name``; an unknown name lists them."""
    names = paper_names()
    if name not in names:
        raise BenchboxError(f"unknown paper {name!r}{did_you_mean(name, names)}; benchbox reproduces: "
                            f"{', '.join(names)}")
    return papers_folder() / f"{name}.toml"


def read_paper(path: Path) -> Paper:
    """The reproduction file ``path``, validated, its cross references checked; any problem is one line."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        paper = Paper.model_validate(raw)
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchboxError(f"cannot read the paper file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchboxError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise BenchboxError(f"{path}: {where}: {error['msg']}") from None
    from benchbox.data.comparators import paper_result

    labels = [m.label for m in paper.model]
    tables = [t.name for t in paper.table]
    for i, cell in enumerate(paper.cell, 1):
        if cell.table not in tables:
            raise BenchboxError(f"{path}: [[cell]] {i} table {cell.table!r} is not a [[table]]{did_you_mean(cell.table, tables)}")
        if (cell.model is None) == (cell.not_run is None):
            raise BenchboxError(f"{path}: [[cell]] {i} needs either model (a [[model]] label) or not_run (why not)")
        if cell.model is not None and cell.model not in labels:
            raise BenchboxError(f"{path}: [[cell]] {i} model {cell.model!r} is not a [[model]]{did_you_mean(cell.model, labels)}")
        if cell.published is None:
            if cell.row is None or not cell.tasks or len(cell.tasks) != 1 or None in (cell.subset, cell.metric):
                raise BenchboxError(f"{path}: [[cell]] {i} has no published comparator: name its row, one task, "
                                    "its subset and its metric")
            continue
        try:
            paper_result(cell.published)
        except BenchboxError as exc:
            raise BenchboxError(f"{path}: [[cell]] {i}: {exc}") from None
    return paper
