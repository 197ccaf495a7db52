"""Declared tasks (``benchbox --include TASKS.toml``) are checked like built-in ones (issue #40): the column mapping
names columns the file has and shadows none, CSV and TSV both read, a correlation subset has the pairs its Fisher-z
interval needs, repeated pairs and document ids are refused, a classification subset holds two classes, and an
unknown key lists the keys a task table takes. Each refusal is one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats as st

from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.task_contract.options import TaskOptions
from benchbox.tasks.bases import cosine
from benchbox.tasks.declarative import load_task_file
from tests.helpers import LetterCounts

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [("a cat sat", "the cat sat", 4.5), ("dogs run fast", "a dog runs", 3.8), ("red cars", "blue sky", 0.5),
         ("she sings", "a woman sings", 4.0), ("rain falls", "stocks fell", 0.8), ("kids swim", "the oven", 0.2)]


def _tsv(*rows: tuple) -> str:
    return "".join("\t".join(map(str, row)) + "\n" for row in rows)


def _task(folder: Path, table: str, data: dict[str, str]) -> list:
    """The tasks of ``[[task]]`` table ``table`` (TOML text) with the data files ``data`` beside it."""
    for name, text in data.items():
        (folder / name).write_text(text)
    path = folder / "tasks.toml"
    path.write_text(table)
    return [cls() for cls in load_task_file(path)]


def _run(tasks: list):
    return run_tasks(LetterCounts(), tasks, cache=False, options=TaskOptions(bootstrap=50)).results[0]


def _refusal(tasks: list) -> str:
    with pytest.raises(BenchboxError) as caught:
        _run(tasks)
    return str(caught.value)


def _pairs_task(tmp_path: Path, text: str, base: str = "pair-correlation", extra: str = "") -> list:
    return _task(tmp_path, f'[[task]]\nname = "mine"\nbase = "{base}"\ndata = ["pairs.tsv"]\n{extra}',
                 {"pairs.tsv": text})


def test_a_mapping_must_name_a_column_the_file_has(tmp_path):
    # a typo in the mapping fell back, without a word, on the file's own `gold` column
    text = _tsv(("sentence1", "sentence2", "gold", "rating"), *((a, b, 1 + i % 3, s) for i, (a, b, s) in enumerate(PAIRS)))
    tasks = _pairs_task(tmp_path, text, extra='columns = { gold = "ratng" }\n')
    message = _refusal(tasks)
    assert message.startswith("task mine: columns maps gold to 'ratng', which ") and "lacks" in message
    assert "(columns: sentence1, sentence2, gold, rating)" in message and "\n" not in message


def test_a_mapping_onto_a_name_the_file_already_has_is_refused(tmp_path):
    # two columns answered to `gold`, and pandas' to_numeric raised a TypeError
    text = _tsv(("sentence1", "sentence2", "gold", "rating"), *((a, b, 1 + i % 3, s) for i, (a, b, s) in enumerate(PAIRS)))
    tasks = _pairs_task(tmp_path, text, extra='columns = { gold = "rating" }\n')
    assert "columns maps gold to 'rating', but" in _refusal(tasks)
    assert "has a column gold too: rename one of them in the file, or drop gold from columns" in _refusal(tasks)


def test_a_mapping_key_that_is_no_column_of_the_base_is_refused_when_the_file_is_loaded(tmp_path):
    text = _tsv(("sentence1", "sentence2", "score"), *PAIRS)
    with pytest.raises(BenchboxError, match=r"columns maps 'gld', which is not a column of its base \(did you mean "
                                            r"'gold'\?\); its columns: sentence1, sentence2, gold, item, subset"):
        _pairs_task(tmp_path, text, extra='columns = { gld = "score" }\n')


def test_comma_and_tab_separated_files_read_alike(tmp_path):
    quoted = [(f'"{a}, quoted"' if i == 0 else a, b, s) for i, (a, b, s) in enumerate(PAIRS)]
    (tmp_path / "csv").mkdir()
    (tmp_path / "tsv").mkdir()
    csv_task = _task(tmp_path / "csv", '[[task]]\nname = "c"\nbase = "pair-correlation"\ndata = ["pairs.csv"]\n'
                     'columns = { gold = "score" }\n',
                     {"pairs.csv": "".join(",".join(map(str, row)) + "\n"
                                           for row in [("sentence1", "sentence2", "score"), *quoted])})
    tsv_task = _task(tmp_path / "tsv", '[[task]]\nname = "t"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n',
                     {"pairs.tsv": _tsv(("sentence1", "sentence2", "gold"),
                                        *[(f"{a}, quoted" if i == 0 else a, b, s) for i, (a, b, s) in enumerate(PAIRS)])})
    read_csv, read_tsv = _run(csv_task), _run(tsv_task)
    assert read_csv.items["sentence1"].iloc[0] == "a cat sat, quoted"
    assert read_csv.items[["sentence1", "sentence2", "gold", "score"]].equals(
        read_tsv.items[["sentence1", "sentence2", "gold", "score"]])
    assert [r.value for r in read_csv.metrics] == [r.value for r in read_tsv.metrics]


def test_a_declared_delimiter_that_does_not_split_the_header_names_the_right_one(tmp_path):
    text = "".join(",".join(map(str, row)) + "\n" for row in [("sentence1", "sentence2", "gold"), *PAIRS])
    message = _refusal(_pairs_task(tmp_path, text, extra='delimiter = "tab"\n'))
    assert "its header holds no tab but commas: declare delimiter = \"comma\"" in message
    with pytest.raises(BenchboxError, match="delimiter"):
        _pairs_task(tmp_path, text, extra='delimiter = "semicolon"\n')


def test_a_hash_inside_a_line_is_text_and_only_hash_lines_are_comments(tmp_path):
    text = "# a comment\n" + _tsv(("sentence1", "sentence2", "gold"), ("C# code", "the C# language", 3.0), *PAIRS)
    items = _run(_pairs_task(tmp_path, text)).items
    assert items["sentence1"].iloc[0] == "C# code" and items["sentence2"].iloc[0] == "the C# language"
    assert items["gold"].iloc[0] == 3.0 and len(items) == len(PAIRS) + 1
    # a byte-order mark, CRLF line ends and a line separator inside a sentence read as text too
    crlf = "\ufeff" + _tsv(("sentence1", "sentence2", "gold"), ("one\u2028two", "three", 2.0), *PAIRS).replace("\n", "\r\n")
    items = _run(_pairs_task(tmp_path, crlf)).items
    assert items["sentence1"].iloc[0] == "one\u2028two" and items["gold"].tolist() == [2.0, *(p[2] for p in PAIRS)]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_correlation_subset_needs_the_pairs_of_a_fisher_interval(tmp_path, n):
    message = _refusal(_pairs_task(tmp_path, _tsv(("sentence1", "sentence2", "gold"), *PAIRS[:n])))
    assert message == (f"task mine, subset test: {n} pair(s), and a correlation's Fisher-z interval needs at least 4: "
                       "add pairs to the subset")


def test_four_pairs_have_an_interval(tmp_path):
    result = _run(_pairs_task(tmp_path, _tsv(("sentence1", "sentence2", "gold"), *PAIRS[:4])))
    encoder = LetterCounts()
    score = cosine(encoder.encode([p[0] for p in PAIRS[:4]]), encoder.encode([p[1] for p in PAIRS[:4]]))
    pearson = next(r for r in result.metrics if r.metric == "pearson")
    assert pearson.value == pytest.approx(st.pearsonr(score, [p[2] for p in PAIRS[:4]])[0])
    assert pearson.ci_low < pearson.value < pearson.ci_high


def test_a_repeated_pair_is_refused_naming_both_rows(tmp_path):
    text = _tsv(("sentence1", "sentence2", "gold"), *PAIRS[:3], PAIRS[1], *PAIRS[3:])
    assert _refusal(_pairs_task(tmp_path, text)).endswith(
        "pairs.tsv, row 4: the pair ('dogs run fast', 'a dog runs') repeats row 2, so it would be scored twice: "
        "delete the repeated line")
    # the same two sentences in two subsets are two items
    subsets = _tsv(("sentence1", "sentence2", "gold", "subset"), *[(*p, "a") for p in PAIRS], *[(*p, "b") for p in PAIRS])
    assert {r.subset for r in _run(_pairs_task(tmp_path, subsets)).metrics} == {"a", "b"}


def test_a_repeated_document_id_is_refused(tmp_path):
    tasks = _task(tmp_path, '[[task]]\nname = "search"\nbase = "retrieval"\ndata = ["q.tsv", "d.tsv"]\n',
                  {"q.tsv": _tsv(("query", "sentence", "relevant"), ("q1", "a cat", "d1"), ("q2", "a dog", "d2")),
                   "d.tsv": _tsv(("document", "sentence"), ("d1", "the cat"), ("d2", "a dog"), ("d1", "nothing"))})
    assert _refusal(tasks).endswith("d.tsv, row 3: document 'd1' repeats row 1's id, so the queries' relevant "
                                    "documents are ambiguous: give each document an id of its own")


@pytest.mark.parametrize("rows", [3, 1])
def test_one_class_in_a_pair_classification_subset_is_refused(tmp_path, rows):
    text = _tsv(("sentence1", "sentence2", "gold"), *[(a, b, 1) for a, b, _ in PAIRS[:rows]])
    assert _refusal(_pairs_task(tmp_path, text, base="pair-classification")) == (
        f"task mine, subset test: all {rows} pair(s) have gold 1, and the ROC AUC needs both classes (gold 0 and "
        "1): add pairs of the other class to the subset")


def test_a_probe_whose_train_rows_hold_one_class_is_refused(tmp_path):
    rows = [(f"{w} {w}", "animal", split) for split, words in (("train", "cat dog cow"), ("dev", "eel"), ("test", "owl"))
            for w in words.split()]
    tasks = _task(tmp_path, '[[task]]\nname = "topics"\nbase = "classification"\ndata = ["topics.tsv"]\n',
                  {"topics.tsv": _tsv(("sentence", "label", "split"), *rows)})
    assert _refusal(tasks).endswith("topics.tsv: all train rows have label 'animal', and a classifier needs at "
                                    "least two classes to learn: add train rows of another class")


def test_an_unknown_key_lists_the_keys_a_task_table_takes(tmp_path):
    (tmp_path / "pairs.tsv").write_text(_tsv(("sentence1", "sentence2", "gold"), *PAIRS))
    with pytest.raises(BenchboxError) as caught:
        _pairs_task(tmp_path, _tsv(("sentence1", "sentence2", "gold"), *PAIRS), extra='colums = { gold = "x" }\n')
    assert str(caught.value).endswith(
        "tasks.toml: unknown key 'colums' in [[task]] 1 (did you mean 'columns'?); the keys of a [[task]] table: "
        "name, base, data, columns, delimiter, description, license, citation, reference, group, order, version")


def test_a_comma_separated_task_file_on_the_command_line(tmp_path):
    (tmp_path / "pairs.csv").write_text("".join(",".join(map(str, row)) + "\n"
                                                for row in [("left", "right", "score"), *PAIRS]))
    (tmp_path / "tasks.toml").write_text('[[task]]\nname = "csv-pairs"\nbase = "pair-correlation"\ndata = ["pairs.csv"]\n'
                                         'columns = { sentence1 = "left", sentence2 = "right", gold = "score" }\n')
    done = subprocess.run([sys.executable, "-m", "benchbox", "--include", str(tmp_path / "tasks.toml"), "eval",
                           "tests.helpers:LetterCounts", "-t", "csv-pairs", "--no-save", "--bootstrap", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "csv-pairs" in done.stdout and "spearman" in done.stdout


def test_two_task_tables_of_one_name_are_refused_in_one_line(tmp_path):
    """Issue #55: the last of two ``[[task]]`` tables named alike silently won (40 pairs became 5)."""
    from benchbox.include import include_file

    (tmp_path / "pairs.tsv").write_text(_tsv(("sentence1", "sentence2", "gold"), *PAIRS))
    table = '[[task]]\nname = "mine"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n'
    (tmp_path / "tasks.toml").write_text(table + "\n" + table)
    with pytest.raises(BenchboxError) as caught:
        include_file(tmp_path / "tasks.toml")
    assert str(caught.value) == (f"--include {tmp_path / 'tasks.toml'}: [[task]] tables 1 and 2 are both named 'mine': "
                                 "give each task its own name")
