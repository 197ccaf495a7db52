"""The study file's schema (pydantic) and every check that can be made before a cell runs.

A study that would fail after hours must fail in the first second instead: :func:`read_study_file` parses the
TOML (a file that is not UTF-8 or not TOML is one line), takes the task flags out of the ``[study]`` table (any
flag of ``benchbox eval`` that a task declares, :func:`benchbox.task_contract.options.task_flags`: ``text = "raw"``), validates
the settings of its comparison out of it (any option of ``benchbox compare`` that
:class:`~benchbox.comparison.settings.CompareSettings` declares: ``correction = "bh"``), validates
the rest against :class:`StudyFile` (unknown keys with a "did you mean", wrong types, missing keys) and then
checks what the schema cannot know alone: that the task flags are of the right type and read by a task studied,
that the tasks and encoders are registered, that ``baseline`` names one of the compared models, that the encoder options
exist (the parameters of the encoder's class, read without building it), that the files named exist, that the
data root (``data-dir``, else ``$BENCHBOX_DATA`` and the embedded copy, as the cells will see it) holds every
task's data, and that ``seeds`` can reach the encoder (its training's ``--seed``, or its declared
:attr:`Encoder.seed_option`). A ``train`` table is checked against its training configuration's declarations,
and its data looked for, by :func:`benchbox.study.train.check_train`.
Every error is a :class:`BenchboxError` of one line naming the file and the key.

The study file reference in ``docs/study.md`` is generated from these models by :func:`reference_markdown`
(``python -m benchbox.study.schema`` rewrites it; a test checks it is current).
"""

from __future__ import annotations

import difflib
import inspect
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from benchbox.comparison.settings import CompareSettings, settings_fields
from benchbox.encoding.options import typed_options
from benchbox.errors import BenchboxError
from benchbox.suggest import close_to, did_you_mean
from benchbox.study.opens import check_opens
from benchbox.task_contract.options import task_flags

#: a scalar TOML value of a ``train`` or ``options`` table
Scalar = Union[StrictStr, StrictInt, StrictFloat, StrictBool]
#: ``train`` keys that the study sets itself, and what to write instead
RESERVED_TRAIN = {"seed": "list the seeds in the [[encoder]] table: seeds = [1, 2, 3]",
                  "out": "the study puts each training run in its cell's folder",
                  "data-dir": "set it once for the study: [study] data-dir = PATH",
                  "resume": "a stopped study resumes by running it again",
                  "quiet": "the cell's output goes to its log"}


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class StudyHead(_Table):
    """The ``[study]`` table: what is evaluated and how the study runs. Besides these keys, any task flag of
    `benchbox eval` (the task options a task declares with a flag, listed below and by `benchbox describe TASK`)
    sets that option in every cell, e.g. `text = "raw"`, and any setting of the comparison (the options of
    `benchbox compare` listed below) sets how the study compares its cells, e.g. `correction = "bh"`."""

    tasks: Annotated[list[StrictStr], Field(min_length=1, description='task or group names (`benchbox list tasks`), '
                                            'e.g. `["semantic"]`')]
    baseline: Annotated[StrictStr | None, Field(description="compare every other model with this one: the `name` "
                                                "of an `[[encoder]]`, or a `run` folder's name (default: every pair)")] = None
    jobs: Annotated[StrictInt | None, Field(ge=1, description="cells at once on the local pool (default: the CPU "
                                            "count; `--jobs` overrides)")] = None
    out: Annotated[StrictStr | None, Field(min_length=1, description="the study folder, relative to the study file "
                                           "(default: the file's name beside it, kept out of git by a "
                                           "`.gitignore`; `--out` overrides)")] = None
    data_dir: Annotated[StrictStr | None, Field(alias="data-dir", min_length=1, description="the data root, relative "
                                                "to the study file (default: `$BENCHBOX_DATA`)")] = None
    comparators: Annotated[StrictStr | None, Field(min_length=1, description="published numbers to compare with, "
                                                   "relative to the study file: a comparators file (`[[comparator]]` "
                                                   "entries, as `benchbox leaderboard --comparators`)")] = None


class EncoderEntry(_Table):
    """One ``[[encoder]]`` table: a model, evaluated as it is or trained first, or an existing run."""

    name: Annotated[StrictStr | None, Field(min_length=1, description="a registered encoder (`benchbox list "
                                            "encoders`) or `module:attribute`")] = None
    run: Annotated[StrictStr | None, Field(min_length=1, description="instead of `name`: an existing evaluation "
                                           "run folder, relative to the study file")] = None
    seeds: Annotated[list[StrictInt] | None, Field(min_length=1, description="one cell per seed, each different "
                                                   "and ≥ 0; the seed goes to the training (`--seed`) or to the "
                                                   "encoder's own seed option (`-e OPTION=SEED`)")] = None
    train: Annotated[dict[str, Scalar] | None, Field(description="train first: the options of `benchbox train "
                                                     "NAME` without `--`, e.g. `{ dataset = \"flickr8k\", epochs = 1 }`")] = None
    options: Annotated[dict[str, Scalar], Field(description="the encoder's options (`-e KEY=VALUE` of `benchbox "
                                                "eval`), e.g. `{ lowercase = false }`")] = {}


class StudyFile(_Table):
    """A whole study file: one ``[study]`` table and two or more ``[[encoder]]`` tables."""

    study: Annotated[StudyHead, Field(description="the `[study]` table")]
    encoder: Annotated[list[EncoderEntry], Field(min_length=1, description="the `[[encoder]]` tables, one per "
                                                 "model (double brackets: each is one entry of a list)")]


#: the models of the file, with the TOML header each is written under
TABLES = {"study": ("[study]", StudyHead), "encoder": ("[[encoder]]", EncoderEntry)}


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _where(loc: tuple[Any, ...]) -> tuple[str, type[BaseModel] | None]:
    """A pydantic error location as the user wrote it (``[[encoder]] 2, train.epochs``) and the model it is in."""
    if not loc:
        return "the file", StudyFile
    head, *rest = loc
    if head not in TABLES:
        return str(head), StudyFile
    header, model = TABLES[head]
    if head == "encoder" and rest and isinstance(rest[0], int):
        header, rest = f"[[encoder]] {rest[0] + 1}", rest[1:]
    key = ".".join(str(p) for p in rest)
    return (f"{header} {key}" if key else header), model


def _one_line(path: Path, error: dict[str, Any]) -> str:
    """The first validation error, as one line naming the file and the key."""
    loc = tuple(error["loc"])
    where, model = _where(loc)
    kind, value = error["type"], error.get("input")
    if kind == "extra_forbidden":
        parent, _ = _where(loc[:-1])
        key = str(loc[-1])
        hint = did_you_mean(key, _keys(model) if model else [])
        if model is StudyHead:
            known = [*_keys(model), *_setting_keys()]
            hint = did_you_mean(key, known if close_to(key, known) else [*known, *task_flags()])
        if loc == ("encoders",):
            hint += "; each model is an [[encoder]] table"
        return f"{path}: unknown key {key!r} in {parent if len(loc) > 1 else 'the file'}{hint}"
    if kind == "missing":
        field = model.model_fields.get(str(loc[-1])) if model else None
        if field is None and model is not None:
            field = next((f for f in model.model_fields.values() if f.alias == loc[-1]), None)
        what = f": {field.description}" if field is not None and field.description else ""
        return f"{path}: {where} is missing{what}"
    message = error["msg"][0].lower() + error["msg"][1:]
    return f"{path}: {where} = {_shown(value)}: {message}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_study_file(path: Path) -> tuple[StudyFile, dict[str, Scalar], CompareSettings]:
    """The study file parsed and validated against :class:`StudyFile`, the task flags of its ``[study]``
    table (flag → value, each of its option's type and choices) and the settings of its comparison; any problem
    is one line."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise BenchboxError(f"cannot read the study file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path}: not UTF-8 text (byte {exc.start}): save the study file as UTF-8") from None
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BenchboxError(f"{path}: not valid TOML: {exc}") from None
    if isinstance(spec.get("encoder"), dict):
        raise BenchboxError(f"{path}: [encoder] is a single table: write each model as an [[encoder]] table "
                            "(double brackets), one per model")
    settings = _compare_settings(path, spec.get("study"))
    flags = _task_flags(path, spec.get("study"))
    try:
        return StudyFile.model_validate(spec), flags, settings
    except ValidationError as exc:
        errors = exc.errors()  # an unknown key first: `[[encoders]]` is a typo before `[[encoder]]` is missing
        raise BenchboxError(_one_line(path, min(errors, key=lambda e: e["type"] != "extra_forbidden"))) from None


def _setting_keys() -> list[str]:
    """The keys of the ``[study]`` table that set the comparison: the flags of :class:`CompareSettings`."""
    return [setting.flag for _, setting, _ in settings_fields()]


def _compare_settings(path: Path, head: Any) -> CompareSettings:
    """The settings of the study's comparison: the keys of the ``[study]`` table that are options of ``benchbox
    compare`` (:func:`_setting_keys`), taken out of it, each checked against its choices or range as compare
    checks it; compare's defaults for the rest."""
    if not isinstance(head, dict):
        return CompareSettings()
    given = {}
    for name, setting, _ in settings_fields():
        if setting.flag in head:
            given[name] = head.pop(setting.flag)
            try:
                CompareSettings(**{name: given[name]})
            except BenchboxError as exc:
                raise BenchboxError(f"{path}: [study] {setting.flag} = {_shown(given[name])}: {exc}") from None
    return CompareSettings(**given)


def _task_flags(path: Path, head: Any) -> dict[str, Scalar]:
    """The keys of the ``[study]`` table that are task flags, taken out of it, each checked against its option's
    type, choices and range. The table's own keys (:class:`StudyHead`) are never task flags. The registered
    tasks are loaded only when the table has some other key: finding their flags imports every task module
    (the transfer tasks import torch and scikit-learn, seconds before the first cell can start)."""
    if not isinstance(head, dict):
        return {}
    own = set(_keys(StudyHead))
    if all(key in own for key in head):
        return {}
    declared = task_flags()
    flags = {}
    for key in [k for k in head if k in declared and k not in own]:
        option, tasks = declared[key]
        value = head.pop(key)
        try:
            flags[key] = option.check(tasks[0], value)
        except BenchboxError as exc:
            raise BenchboxError(f"{path}: [study] {key} = {_shown(value)}: {exc}") from None
    return flags


def beside(path: Path, value: str) -> Path:
    """A path written in the study file ``path`` (``~`` expanded), relative to the file's folder."""
    return path.parent / Path(value).expanduser()


def study_data_dir(path: Path, head: StudyHead) -> Path | None:
    """The data root the cells get (``--data-dir``): ``data-dir`` beside the study file, resolved; None leaves
    the cells theirs (``$BENCHBOX_DATA``, else the user's data folder)."""
    return beside(path, head.data_dir).resolve() if head.data_dir is not None else None


@dataclass(frozen=True)
class Checked:
    """What :func:`check_meaning` found, for the cells' keys (:mod:`benchbox.study.keys`)."""

    #: per ``[[encoder]]``: the encoder option its seeds go to (None: to its training, or it has no seeds)
    seed_options: list[str | None]
    #: per ``[[encoder]]``: the class (or object) its name refers to, and its source as a run records it
    #: (None: a ``run``)
    targets: list[Any]
    sources: list[str | None]
    #: the tasks studied, groups expanded, and each one's option values
    tasks: list[Any]
    values: dict[str, dict[str, Any]]


def check_meaning(path: Path, spec: StudyFile, flags: dict[str, Scalar]) -> Checked:
    """What the schema cannot check alone (module docstring): tasks, their options, the task flags and their data,
    encoders and their options, files, seeds and the baseline, and what the cells will open
    (:mod:`benchbox.study.opens`); raises a one-line :class:`BenchboxError` naming the file and the key."""
    from benchbox.data.root import DataRoot
    from benchbox.registry import TASKS
    from benchbox.task_contract.protocol import parse_task_arguments, require_task_data, resolve_tasks
    from benchbox.task_contract.options import TaskOptions, resolve_options

    try:
        names, options = parse_task_arguments(spec.study.tasks)  # TASK:KEY=VALUE sets an option
        for name in names:
            TASKS.resolve(name)
    except BenchboxError as exc:
        raise BenchboxError(f"{path}: [study] tasks: {with_include_hint(path, str(exc))}") from None
    tasks = resolve_tasks(names)
    try:
        values = resolve_options(tasks, TaskOptions(task_options=options, flags=flags))
    except BenchboxError as exc:
        raise BenchboxError(f"{path}: [study]: {exc}") from None
    data_dir = study_data_dir(path, spec.study)
    if data_dir is not None and not data_dir.is_dir():
        raise BenchboxError(f"{path}: [study] data-dir = {spec.study.data_dir!r} is not an existing folder "
                            f"(relative to {path.parent})")
    if any(entry.name is not None for entry in spec.encoder):  # cells will evaluate: the check run_tasks makes
        try:
            require_task_data(DataRoot(data_dir), tasks, values)
        except BenchboxError as exc:
            raise BenchboxError(f"{path}: [study] tasks: {exc}") from None
    models, seed_options = [], []
    for i, entry in enumerate(spec.encoder, 1):
        model, seed_option = _check_entry(path, f"[[encoder]] {i}", entry)
        models.append(model)
        seed_options.append(seed_option)
    baseline = spec.study.baseline
    if baseline is not None and baseline not in models:
        close = difflib.get_close_matches(baseline, models, n=1)
        raise BenchboxError(f"{path}: [study] baseline = {baseline!r} names none of the compared models "
                            f"({', '.join(dict.fromkeys(models))})" + (f"; did you mean {close[0]!r}?" if close else ""))
    targets = [None if entry.name is None else _encoder_class(path, f"[[encoder]] {i}", entry.name)
               for i, entry in enumerate(spec.encoder, 1)]
    runs = [None if entry.run is None else beside(path, entry.run).resolve() for entry in spec.encoder]
    check_opens(path, spec, runs, targets, tasks, values, DataRoot(data_dir))
    return Checked(seed_options, targets, [_source(entry.name) for entry in spec.encoder], tasks, values)


def _source(name: str | None) -> str | None:
    """What a run records as the source of the encoder ``name``: the qualified name of a registered one
    (``benchbox:glove-bow`` for ``glove-bow``), else the name (``module:attribute``)."""
    from benchbox.registry import ENCODERS

    return ENCODERS.resolve(name).qualified if name is not None and name in ENCODERS else name


def with_include_hint(path: Path, message: str) -> str:
    """``message``, and for an unknown task or encoder, how one declared in a file of the user's own reaches the
    study."""
    if not message.startswith("unknown "):
        return message
    return (f"{message.rstrip('.')}; one declared in a file of your own needs `benchbox --include FILE study "
            f"{path}` (every cell includes it too)")


def _check_entry(path: Path, where: str, entry: EncoderEntry) -> tuple[str, str | None]:
    """Check one ``[[encoder]]`` table; returns the name a baseline may use for it and the encoder option its
    seeds go to (None: to its training, or no seeds)."""
    from benchbox.storage.runs import MANIFEST

    if (entry.name is None) == (entry.run is None):
        raise BenchboxError(f"{path}: {where}: give either name (an encoder) or run (a run folder)")
    if entry.run is not None:
        extra = [k for k in ("seeds", "train") if getattr(entry, k) is not None] + (["options"] if entry.options else [])
        if extra:
            raise BenchboxError(f"{path}: {where}: {', '.join(extra)} do not apply to a run, which is used as it is")
        run = beside(path, entry.run).resolve()
        if not (run / MANIFEST).is_file():
            raise BenchboxError(f"{path}: {where} run = {entry.run!r}: {run} is not a benchbox run (no {MANIFEST})")
        return run.name, None
    cls = _encoder_class(path, where, entry.name)
    trained = entry.train is not None
    for key in entry.train or {}:
        if key in RESERVED_TRAIN:
            raise BenchboxError(f"{path}: {where} train.{key}: set by the study; {RESERVED_TRAIN[key]}")
    seed_option = getattr(cls, "seed_option", None)
    if entry.seeds is not None:
        _check_seeds(path, where, entry.seeds, trained, seed_option, entry.name)
    names, any_keyword, paths = encoder_parameters(cls, trained)
    for key, value in entry.options.items():
        option = key.replace("-", "_")
        if option not in names and not any_keyword:
            known = sorted(names)
            raise BenchboxError(f"{path}: {where} options.{key}: {entry.name} has no option {key!r}"
                                f"{did_you_mean(option, known) if known else ' (it takes none)'}")
        if entry.seeds is not None and option == seed_option:
            raise BenchboxError(f"{path}: {where} options.{key}: the seed option is set by seeds; drop it here")
        if option in paths and isinstance(value, str) and looks_like_path(value) \
                and not Path(value).expanduser().exists():
            raise BenchboxError(f"{path}: {where} options.{key} = {value!r}: no such file or folder")
    try:  # the values the cell's eval will build the encoder with (:mod:`benchbox.encoding.options`)
        typed_options(getattr(cls, "from_path", None) if trained else cls,
                      {key.replace("-", "_"): value for key, value in entry.options.items()}, entry.name)
    except BenchboxError as exc:
        raise BenchboxError(f"{path}: {where} options: {exc}") from None
    return entry.name, (seed_option if entry.seeds is not None and not trained else None)


def _check_seeds(path: Path, where: str, seeds: list[int], trained: bool, seed_option: str | None, name: str) -> None:
    """Seeds must be different, ≥ 0, and reach the encoder: its training or its declared seed option."""
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise BenchboxError(f"{path}: {where} seeds: {', '.join(map(str, repeated))} given twice; each seed is one "
                            "cell, list each once")
    if any(s < 0 for s in seeds):
        raise BenchboxError(f"{path}: {where} seeds: seeds are whole numbers ≥ 0, not {min(seeds)}")
    if not trained and seed_option is None:
        raise BenchboxError(f"{path}: {where} seeds: {name} has no seed option and is not trained here, so every "
                            "seed would give the same run: declare the constructor option that takes the seed as "
                            "its class' seed_option (e.g. seed_option = \"seed\", docs/plugins.md), or drop seeds"
                            + (", or add a train table" if trainable(name) else ""))


def trainable(name: str) -> bool:
    """Whether ``name`` is a registered encoder that a ``train`` table can train (it loads from a training folder)."""
    from benchbox.registry import ENCODERS

    try:
        return name in ENCODERS and hasattr(ENCODERS.get(name), "from_path")
    except BenchboxError:
        return False


def _encoder_class(path: Path, where: str, name: str) -> Any:
    """The class (or object) an encoder name refers to, imported but not built."""
    from benchbox.registry import ENCODERS, import_attribute

    try:
        if name in ENCODERS or ":" not in name:
            return ENCODERS.get(name)
        return import_attribute(name, current_folder=True)
    except BenchboxError as exc:
        raise BenchboxError(f"{path}: {where} name: {with_include_hint(path, str(exc))}") from None
    except Exception as exc:  # noqa: BLE001 - a module:attribute that fails to import, in one line
        raise BenchboxError(f"{path}: {where} name = {name!r}: cannot import it ({type(exc).__name__}: {exc})") from None


def encoder_parameters(cls: Any, trained: bool) -> tuple[set[str], bool, set[str]]:
    """The ``-e`` options an encoder class takes without building it: (names, whether it takes any keyword,
    the names whose values are paths). A trained model is built by ``from_path(path, ...)`` (its first parameter
    is the folder), a name by the class itself; an object or function (not a class) takes none."""
    if not inspect.isclass(cls):
        return set(), False, set()
    target = getattr(cls, "from_path", None) if trained else cls
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # no signature to read: let the cell's eval check the options
        return set(), True, set()
    if trained:
        parameters = parameters[1:]
    names, any_keyword, paths = set(), False, set()
    for param in parameters:
        if param.kind is param.VAR_KEYWORD:
            any_keyword = True
        elif param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.add(param.name)
            if "PathLike" in str(param.annotation):
                paths.add(param.name)
    return names, any_keyword, paths


def looks_like_path(value: str) -> bool:
    """Whether an option's value is certainly a path (absolute, ``./``, ``../`` or ``~``), not a name."""
    return value.startswith(("/", "./", "../", "~"))


def reference_markdown() -> str:
    """The study file reference (``docs/study.md``, between its markers), generated from the models."""
    lines = []
    for header, model in TABLES.values():
        schema = model.model_json_schema(by_alias=True)
        required = set(schema.get("required", ()))
        lines += [f"### `{header}`", "", inspect.cleandoc(model.__doc__ or "").replace("``", "`"), "", "| key | type | required | meaning |",
                  "|---|---|---|---|"]
        for key, prop in schema["properties"].items():
            lines.append(f"| `{key}` | {_type_name(prop)} | {'yes' if key in required else 'no'} | "
                         f"{prop.get('description', '')} |")
        if model is StudyHead:
            lines += [f"| `{setting.flag}` | {TOML_TYPES[type(default).__name__]} | no | comparison: {setting.help} "
                      f"(`benchbox compare --{setting.flag}`; default: {default}) |"
                      for _, setting, default in settings_fields()]
            lines += [f"| `{flag}` | {TOML_TYPES[option.type.__name__]} | no | task flag: {option.help} "
                      f"(tasks: {', '.join(tasks)}) |" for flag, (option, tasks) in task_flags(builtin_only=True).items()]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


#: JSON schema types as TOML calls them
TOML_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "null": "",
              "str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def _type_name(prop: dict[str, Any]) -> str:
    """A JSON-schema property's type in words (``list of integer``, ``table of string or integer``)."""
    if "anyOf" in prop:
        return " or ".join(t for t in (_type_name(p) for p in prop["anyOf"]) if t)
    if "$ref" in prop:
        return "table"
    kind = prop.get("type")
    if kind == "array":
        text = "list of " + _type_name(prop.get("items", {}))
    elif kind == "object":
        text = "table of " + _type_name(prop.get("additionalProperties", {}))
    else:
        text = TOML_TYPES.get(kind, "any")
    bounds = [f"≥ {prop['minimum']}"] if "minimum" in prop else []
    bounds += [f"at least {prop['minItems']}"] if prop.get("minItems", 0) > 1 else []
    return text + (f" ({', '.join(bounds)})" if bounds else "")


#: the markers around the generated reference in docs/study.md
BEGIN, END = "<!-- study-file-reference: begin (generated by python -m benchbox.study.schema) -->", \
    "<!-- study-file-reference: end -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "study.md"


def document_with_reference(text: str) -> str:
    """``text`` (docs/study.md) with the generated reference between its markers replaced."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not (begin and end):
        raise BenchboxError(f"{DOC}: the markers of the generated reference are missing")
    return f"{head}{BEGIN}\n{reference_markdown()}{END}{tail}"


if __name__ == "__main__":
    DOC.write_text(document_with_reference(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the study file reference into {DOC}")
