"""How a comparison tests and corrects (docs/protocols.md#statistics): :class:`CompareSettings`, each setting
declared once — its default, its choices or range and its help — as a field of it.

Everything else derives from the fields: the options of ``benchbox compare`` and ``benchbox report --compare``
(generated, :mod:`benchbox.commands.compare_options`), the keys of a study's ``[study]`` table
(:mod:`benchbox.study.schema`), the check of a value given through the Python API, and what a comparison records
(:class:`benchbox.comparison.compare.Comparison` holds the settings it was made with). The corrections are
declared in :mod:`benchbox.stats.corrections`, the tests of two dependent correlations and the treatments of
pairs that share a sentence in :mod:`benchbox.task_contract.paired_tests`, the τ² estimators in :mod:`benchbox.stats.pooling`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.memory import require_resamples
from benchbox.options import DEFAULT_RESAMPLES, DEFAULT_SEED, check_number
from benchbox.task_contract.paired_tests import CORRELATION_TESTS, ITEM_DEPENDENCE, PairSettings
from benchbox.stats.corrections import CORRECTIONS, Correction
from benchbox.stats.pooling import METHODS as POOLING_METHODS

#: the families a correction may run over, as the report states them
FAMILIES = {"all": "every row of every pair compared", "pair": "the rows of each pair of models apart"}


@dataclass(frozen=True)
class Setting:
    """What a field of :class:`CompareSettings` declares besides its name and default: its command-line flag
    (without ``--``), help, and its choices or lower bound."""

    help: str
    choices: tuple[str, ...] | None = None
    low: float | None = None
    #: None: the field's name with dashes (filled in by :func:`settings_fields`)
    flag: str | None = None
    #: the choices in words, as an error names them (None: the choices, joined by "or")
    use: str | None = None
    #: a number of resamples: refused at once beyond what memory could hold (:func:`benchbox.memory.require_resamples`)
    resamples: bool = False

    def check(self, value: Any, default: Any) -> None:
        """A one-line error unless ``value`` is of the default's type and among the choices or in range."""
        name = f"--{self.flag}"
        kind = type(default)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BenchboxError(f"{name} must be {'an integer' if kind is int else 'text'}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise BenchboxError(f"unknown {name} {value!r}: use {self.use or _either(self.choices)}")
        if kind is int:
            check_number(name, value, low=self.low)
        if self.resamples:
            require_resamples(name, value)


def _setting(default: Any, help: str, *, flag: str | None = None, choices: Any = None, low: float | None = None,
             use: str | None = None, resamples: bool = False) -> Any:
    """A field of :class:`CompareSettings`: its default and its :class:`Setting`."""
    return field(default=default, metadata={
        "setting": Setting(help, tuple(choices) if choices else None, low, flag, use, resamples)})


def _either(choices: Any) -> str:
    """``a or b``, ``a, b or c``."""
    *head, last = choices
    return f"{', '.join(head)} or {last}" if head else last


@dataclass(frozen=True)
class CompareSettings:
    """How a comparison tests and corrects; each field's default, choices or range and help is declared here once,
    and checked when the settings are made."""

    correction: str = _setting("holm", f"Multiple-comparison correction the verdicts use: {_either(CORRECTIONS)}.",
                               choices=CORRECTIONS)
    test: str = _setting(CORRELATION_TESTS[0], "Test for two dependent correlations: "
                         f"{_either(CORRELATION_TESTS)}.", choices=CORRELATION_TESTS)
    item_dependence: str = _setting(
        ITEM_DEPENDENCE[0], "Correlation rows whose pairs share a sentence: sentence-groups (a jackknife over groups of "
        "pairs linked by shared sentences) or independent (Williams/Steiger as if every pair were independent: the "
        "published reference).", choices=ITEM_DEPENDENCE, use="sentence-groups (pairs sharing a sentence tested "
        "together) or independent (Williams/Steiger on every row)")
    #: resamples of the paired bootstrap tests and of the intervals of the differences
    n_boot: int = _setting(DEFAULT_RESAMPLES, "Resamples of the paired bootstrap tests and of the intervals of the "
                           "differences (at least 2).", flag="test-resamples", low=2, resamples=True)
    #: the evaluation's seed: part of the identity of the runs evaluated on demand (a run of another seed is not
    #: reused)
    seed: int = _setting(DEFAULT_SEED, "Seed of every random choice of the evaluation: SentEval's probes and folds, "
                         "bootstrap draws (the default is SentEval's).", low=0)
    #: the seed of the comparison's own resampling: the paired bootstrap tests, the intervals of the differences
    #: and the claims' draws; no part of any run's identity, so changing it never re-evaluates
    test_seed: int = _setting(DEFAULT_SEED, "Seed of the paired tests' and claims' resampling (bootstrap tests, "
                              "intervals of the differences); changing it never re-evaluates a model.", low=0)
    family: str = _setting("all", "Correction family: all (every row of every pair) or pair (each pair apart).",
                           choices=FAMILIES, use="all (every row of every pair) or pair")
    #: τ² of the claims' random-effects pooling (:mod:`benchbox.comparison.claims`)
    pooling: str = _setting("dl", "Between-row variance of the pooled claim effect: dl (DerSimonian-Laird) or pm "
                            "(Paule-Mandel).", choices=POOLING_METHODS,
                            use="dl (DerSimonian-Laird) or pm (Paule-Mandel)")

    def __post_init__(self) -> None:
        for name, setting, default in settings_fields():
            setting.check(getattr(self, name), default)

    @property
    def corrected(self) -> Correction:
        """The correction the verdicts use (:data:`benchbox.stats.corrections.CORRECTIONS`)."""
        return CORRECTIONS[self.correction]

    def pair(self) -> PairSettings:
        """What every paired test of the comparison shares (:class:`~benchbox.task_contract.paired_tests.PairSettings`),
        with no sentence group found yet."""
        return PairSettings(self.n_boot, self.test_seed, self.test, self.item_dependence)

    @property
    def p_column(self) -> str:
        """The comparison table's column of the p-values the verdicts read: ``p_holm``, ``p_bh``, ..."""
        return self.corrected.p_column


def settings_fields() -> list[tuple[str, Setting, Any]]:
    """Every field of :class:`CompareSettings` in order: its name, its :class:`Setting` (the flag filled in) and
    its default."""
    found = []
    for f in fields(CompareSettings):
        setting = f.metadata["setting"]
        found.append((f.name, replace(setting, flag=setting.flag or f.name.replace("_", "-")), f.default))
    return found

