"""``benchbox report``: markdown and HTML from real runs — numbers, escaping, figures, determinism, errors — and
an end-to-end check in headless Chromium (marker ``browser``; screenshots in test-artifacts/)."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from benchbox.storage.cache import EmbeddingCache
from benchbox.cli import app, main
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.reports import write_report
from benchbox.reports.build import build_report
from benchbox.reports.markdown import escape
from benchbox.task_contract.metadata import KnownTasks
from benchbox.comparison.settings import CompareSettings
from benchbox.comparison.sources import Source
from benchbox.storage.runs import Run, write_run

from tests.chromium import chromium_binary, open_page

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
#: a run name that tries HTML injection, markdown tables/emphasis/links and matplotlib mathtext at once
EVIL = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> | *bold* [link](http://evil.example) $x^2$'


class EvilBow(Encoder):
    """GloVe-BOW under a hostile name and configuration: a real encoder whose strings must be escaped."""

    name = EVIL

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner

    @property
    def dim(self) -> int:
        return self.inner.dim

    def config(self):
        return {**self.inner.config(), "note": "</td></tr></table><b>x</b> `code` # not a heading"}

    def weights_digest(self) -> str:
        return self.inner.weights_digest()

    def _encode(self, sentences, batch_size):
        return self.inner._encode(sentences, batch_size)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, glove) -> dict[str, Path]:
    """Real evaluation runs on the embedded STS-B and SICK test sets: GloVe-BOW, and the same under EVIL."""
    root = tmp_path_factory.mktemp("runs")
    cache = EmbeddingCache(root / "cache")
    tasks = ["stsb-cosine", "sickr-cosine"]
    return {
        "glove": run_tasks(glove, tasks, cache=cache).save(root / "runs"),
        "evil": run_tasks(EvilBow(glove), tasks, cache=cache).save(root / "runs"),
    }


@pytest.fixture(scope="module")
def layout_runs(tmp_path_factory) -> dict[str, Path]:
    """Runs in the stored format for tasks whose data is not available offline (retrieval needs image
    features, transfer tasks another helper's code), and a training run as ``benchbox train`` writes it:
    they test the table layouts and the training figures, not the numbers."""
    root = tmp_path_factory.mktemp("layout")
    rows = []
    for direction, values in (("t2i", (27.5, 58.2, 70.5, 4.0)), ("i2t", (38.5, 68.9, 79.3, 2.0))):
        for metric, value in zip(("r1", "r5", "r10", "medr"), values):
            low, high = (value - 2.7, value + 2.9) if metric == "r1" and direction == "i2t" else (value - 2.8, value + 2.8)
            rows.append(("retrieval", direction, metric, value, low, high, 1000 if direction == "i2t" else 5000))
    rows.append(("retrieval", "all", "rsum", 342.9, math.nan, math.nan, 6000))
    rows += [("mr", "test", "accuracy", 77.25, 76.4, 78.1, 10662), ("mrpc", "test", "accuracy", 70.5, 68.3, 72.6, 1725),
             ("mrpc", "test", "f1", 80.1, math.nan, math.nan, 1725)]
    metrics = pd.DataFrame(rows, columns=["task", "subset", "metric", "value", "ci_low", "ci_high", "n"])
    eval_run = write_run(root, "char-gru", {"kind": "eval", "encoder": {"name": "char-gru", "fingerprint": "f" * 20},
                                            "tasks": {"retrieval": {"protocol": {}, "data_checksums": {}}}}, metrics, {})
    train = root / "train-h512"
    (train / "snapshots").mkdir(parents=True)
    snapshots = [{"epoch": e, "file": f"snapshots/epoch-{e:03d}.pt", "score": s,
                  "dev": {"i2t_r10": s + 1, "t2i_r10": s - 1, "i2t_r1": 10.0, "t2i_r1": 9.0}}
                 for e, s in ((4, 50.0), (8, 61.0), (12, 60.0))]
    manifest = {"run_id": "train-h512", "kind": "train", "status": "complete", "created": "2026-01-01T00:00:00+00:00",
                "encoder": {"name": "char-gru", "config": {"rnn": "gru", "hidden": 512}},
                "config": {"encoder": "char-gru", "dataset": "flickr8k", "visual": "features", "loss": "hinge-sum",
                           "hidden": 512}, "snapshots": snapshots, "ensemble": ["snapshots/epoch-008.pt"]}
    (train / "manifest.json").write_text(json.dumps(manifest))
    semantic = [(e, "sts12", "all", "pearson_mean", v, v - 0.03, v + 0.03, 3108) for e, v in ((4, 0.52), (8, 0.49), (12, 0.47))]
    semantic += [(e, "sts12", "MSRpar", "pearson", 0.3, 0.2, 0.4, 750) for e in (4, 8, 12)]
    semantic += [(e, "sickr-cosine", "test", "pearson", v, v - 0.02, v + 0.02, 4927) for e, v in ((4, 0.61), (8, 0.63), (12, 0.6))]
    pd.DataFrame(semantic, columns=["epoch", "task", "subset", "metric", "value", "ci_low", "ci_high", "n"]).to_csv(
        train / "semantic.csv", index=False)
    pd.DataFrame({"epoch": range(1, 13), "loss": np.linspace(400, 100, 12), "seconds": 1.0}).to_csv(
        train / "history.csv", index=False)
    small = root / "train-h256"
    small.mkdir()
    (small / "manifest.json").write_text(json.dumps({**manifest, "run_id": "train-h256",
                                                     "config": {**manifest["config"], "hidden": 256},
                                                     "snapshots": [{**s, "score": s["score"] - 10} for s in snapshots]}))
    nli = root / "infersent-nli"
    nli.mkdir()
    (nli / "manifest.json").write_text(json.dumps({"run_id": "infersent-nli", "kind": "train", "status": "complete",
                                                   "encoder": {"name": "infersent", "config": {"hidden": 64}}}))
    (nli / "history.csv").write_text("epoch,lr,loss,train_acc,dev_acc\n1,0.1,1.09,40.5,45.25\n2,0.099,0.98,52.0,55.5\n")
    return {"eval": eval_run, "train": train, "small": small, "nli": nli}


def _metric(run: Path, task: str, metric: str = "pearson") -> pd.Series:
    m = Run.open(run).metrics
    return m[(m["task"] == task) & (m["metric"] == metric)].iloc[0]


def _cell(record: pd.Series) -> str:
    return f"{100 * record['value']:.1f} [{100 * record['ci_low']:.1f}, {100 * record['ci_high']:.1f}]"


def _table_rows(markdown: str) -> list[list[str]]:
    """Markdown table rows split on unescaped pipes."""
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in markdown.splitlines() if line.startswith("|")]


def test_markdown_report_shows_numbers_provenance_and_figure(runs, tmp_path):
    out = write_report([runs["glove"]], tmp_path / "rep" / "report.md")
    text = out.read_text()
    for task in ("stsb-cosine", "sickr-cosine"):
        assert escape(_cell(_metric(runs["glove"], task))) in text
        assert escape(_cell(_metric(runs["glove"], task, "spearman"))) in text  # in "Other metrics"
    manifest = Run.open(runs["glove"]).manifest
    assert manifest["encoder"]["fingerprint"] in text and manifest["run_id"] in text
    for digest in manifest["tasks"]["sickr-cosine"]["data_checksums"].values():
        assert digest in text
    assert f"| numpy | {manifest['packages']['numpy']} |" in text
    assert "| sickr-cosine | test | 4927 |" in text
    figure = tmp_path / "rep" / "report_figures" / "semantic.svg"
    assert "](report_figures/semantic.svg)" in text and figure.is_file()
    svg = figure.read_text()
    assert "<svg" in svg and "<title" in svg and 'role="img"' in svg
    rows = _table_rows(text)
    assert rows and all(len(r) >= 2 for r in rows)
    header_lengths = [len(r) for r in rows if set("".join(r)) <= set(" -:")]
    assert header_lengths  # alignment rows exist for every table


def test_tables_keep_their_shape_and_hostile_names_are_escaped(runs, tmp_path):
    out = write_report([runs["glove"], runs["evil"]], tmp_path / "report.md")
    text = out.read_text()
    # markdown escapes, no HTML entities: every '<' that could open a tag carries a backslash
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", text) and "&lt;" not in text and "&amp;" not in text
    assert r"\<script>window.\_\_xss=2\</script>" in text and r"\| \*bold\* \[link\](http://evil.example)" in text
    assert r"\`code\` # not a heading" in text and not re.search(r"(?<!\\)`", text)
    # every row of every table has as many cells as its header: no '|' in data split a cell
    blocks = re.split(r"\n\n", text)
    for block in blocks:
        rows = _table_rows(block)
        if rows:
            assert len({len(r) for r in rows}) == 1, block[:300]
    svg = (tmp_path / "report_figures" / "semantic.svg").read_text()
    assert "<script" not in svg and "<img" not in svg and "&lt;script&gt;" in svg
    assert "$x^2$" in svg  # shown literally, not parsed as mathtext


def test_markdown_parses_as_intended_with_a_commonmark_parser(runs, layout_runs, tmp_path):
    """Parsed like GitHub does (CommonMark + tables, raw HTML allowed): the tables keep their shape, and the
    hostile name yields no tag, link or emphasis, only its literal text."""
    markdown_it = pytest.importorskip("markdown_it")  # installed with rich
    out = write_report([runs["glove"], runs["evil"], layout_runs["eval"]], tmp_path / "r.md",
                       references=["paper:merkx2019/glove-bow"])
    source = out.read_text()
    html = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(source)
    assert html.count("<table>") == len(re.findall(r"^\*[^*].*\*$", source, flags=re.M)) - 1  # captions, less the figure's
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        cells_per_row = {len(re.findall(r"<t[hd][ >]", row)) for row in re.findall(r"<tr>.*?</tr>", table, flags=re.S)}
        assert len(cells_per_row) == 1, table[:500]
    assert "<script" not in html and "<strong>" not in html and "<em>bold</em>" not in html
    assert re.findall(r"<img [^>]*>", html) == [
        f'<img src="r_figures/semantic.svg" alt="{_alt(html)}" />']
    assert all(href.startswith("#") for href in re.findall(r'href="([^"]*)"', html))
    literal = EVIL.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    assert literal in html


def _alt(html: str) -> str:
    return re.search(r'<img src="[^"]*" alt="([^"]*)"', html).group(1)


def test_html_is_self_contained_accessible_and_escaped(runs, layout_runs, tmp_path):
    out = write_report([runs["glove"], runs["evil"], layout_runs["eval"], layout_runs["train"]],
                       tmp_path / "report.html", references=["paper:merkx2019/glove-bow"])
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and '<html lang="en">' in html and 'name="viewport"' in html
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert not re.search(r'\b(?:src|href)\s*=\s*"(?!#)', html), "a resource or link outside the page"
    assert not re.search(r"url\((?!#)", html) and "@import" not in html and "<link" not in html
    assert html.count("<svg") == html.count('role="img"') == 2  # the semantic figure and one run's training curves
    assert html.count("<svg") == len(re.findall(r"<title id=", html))
    assert html.count("<table>") == html.count("<caption>") and '<th scope="col"' in html and '<th scope="row"' in html
    assert 'class="table-wrap"' in html and "overflow-x: auto" in html
    # the ids of several inline figures never collide
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    assert _cell(_metric(runs["glove"], "sickr-cosine")) in html


@pytest.mark.slow
def test_reports_are_byte_identical_across_renders(runs, layout_runs, tmp_path):
    sources = [runs["glove"], runs["evil"], layout_runs["eval"], layout_runs["train"], layout_runs["small"]]
    for fmt in ("md", "html"):
        first = write_report(sources, tmp_path / "a" / f"r.{fmt}", references=["paper:merkx2019/glove-bow"])
        second = write_report(sources, tmp_path / "b" / f"r.{fmt}", references=["paper:merkx2019/glove-bow"])
        assert first.read_bytes() == second.read_bytes()
    figures_a = sorted((tmp_path / "a" / "r_figures").iterdir())
    assert [p.name for p in figures_a] == ["selection.svg", "semantic.svg", "training-1.svg", "training-2.svg"]
    for path in figures_a:
        assert path.read_bytes() == (tmp_path / "b" / "r_figures" / path.name).read_bytes()
    body = (tmp_path / "a" / "r.md").read_text().split("## Provenance details")[0]
    created = [Run.open(p).manifest["created"] for p in sources[:3]]
    assert sum(body.count(c) for c in set(created)) == len(created)  # timestamps only in the runs' provenance table


def test_retrieval_table_2_layout_transfer_and_training(layout_runs, tmp_path):
    text = write_report([layout_runs["eval"], layout_runs["train"], layout_runs["small"]], tmp_path / "r.md").read_text()
    label = f"char-gru ({Run.open(layout_runs['eval']).run_id})"  # three char-gru runs: labels name their runs
    header = ("| Model | Caption → image R@1 | Caption → image R@5 | Caption → image R@10 | Caption → image medr | "
              "Image → caption R@1 | Image → caption R@5 | Image → caption R@10 | Image → caption medr | rsum |")
    assert header in text
    assert (f"| {label} | 27.5 ± 2.8 | 58.2 ± 2.8 | 70.5 ± 2.8 | 4.0 ± 2.8 | 38.5 +2.9/−2.7 | 68.9 ± 2.8 | 79.3 ± 2.8 | "
            "2.0 ± 2.8 | 342.9 |") in text
    assert "| Model | MR | MRPC | MRPC F1 |" in text and f"| {label} | 77.2 \\[76.4, 78.1\\] | 70.5 \\[68.3, 72.6\\] | 80.1 |" in text
    # model selection: best snapshot by dev score (epoch 8), semantic headline there = mean of sts12 mean and SICK-R
    assert "| char-gru (train-h512) | char-gru (flickr8k, features, hinge-sum) | 512 | 3 | complete | 8 | 61.0 | 56.0 |" in text
    assert "| char-gru (train-h256) | char-gru (flickr8k, features, hinge-sum) | 256 | 3 | complete | 8 | 51.0 | — |" in text
    svg = (tmp_path / "r_figures" / "training-1.svg").read_text()
    for series in ("i2t R@10", "t2i R@10", "mean R@10 (selection)", "sts12 mean", "sickr-cosine", "loss"):
        assert f">{series}<" in svg
    assert ">sts12 MSRpar<" not in svg  # per-subset rows of a year are summarised by its mean


def test_training_curves_of_an_nli_run_without_snapshots(layout_runs, tmp_path):
    text = write_report([layout_runs["nli"]], tmp_path / "r.md").read_text()
    assert "## Training curves" in text and "## Model selection" not in text  # no snapshots to select from
    svg = (tmp_path / "r_figures" / "training-1.svg").read_text()
    assert all(f">{name}<" in svg for name in ("loss", "train_acc", "dev_acc", "accuracy (%)", "training loss"))


def test_significance_section_from_a_comparison_table(runs, tmp_path):
    def row(subset, metric, verdict, unit, p):
        return {"task": "stsb-cosine", "subset": subset, "metric": metric, "model_a": EVIL, "model_b": "glove-bow",
                "value_a": 0.5, "ci_low_a": 0.45, "ci_high_a": 0.55, "value_b": 0.4, "ci_low_b": 0.35,
                "ci_high_b": 0.45, "diff": 0.1, "diff_ci_low": 0.05, "diff_ci_high": 0.15, "test": "williams",
                "statistic": 3.1, "p": p, "p_holm": 2 * p, "p_bh": 1.5 * p, "verdict": verdict, "approximate": False,
                "summary": unit}

    class Fake:
        settings, tasks = CompareSettings(), KnownTasks()
        table = pd.DataFrame([row("test", "pearson", "better", True, 0.0004),
                              row("dev", "pearson", "no significant difference", True, 0.2),
                              row("test", "spearman", "better", False, 0.0001)])

    sources = [Source("glove-bow", Run.open(runs["glove"]).metrics, Run.open(runs["glove"]))]
    from benchbox.reports import html, markdown

    text = markdown.render(build_report(sources, Fake()), tmp_path / "r.md")
    section = text.split("## Pairwise significance")[1].split("\n## ")[0]
    # the headline from the verdicts of the per-task (unit) rows, then a compact table with the verdict first
    assert (f"{escape(EVIL)} vs glove-bow: {escape(EVIL)} is significantly better on 1 of 2 summary rows, worse on 0 and "
            "not significantly different on 1 (Holm-corrected, 5%).") in section
    assert f"| {escape(EVIL)} is | Task | Subset | Metric | A − B | p (Holm) |" in section
    assert "| better | stsb-cosine | test | pearson | 10.0 \\[5.0, 15.0\\] | <0.001 |" in section
    assert "| no significant difference | stsb-cosine | dev | pearson | 10.0 \\[5.0, 15.0\\] | 0.400 |" in section
    assert "spearman" not in section.split("appendix.")[1]  # not a task's test: in the appendix only
    appendix = text.split("## Appendix: all pairwise tests")[1]
    assert appendix.count("| stsb-cosine |") == 3 and "| williams | <0.001 | <0.001 | <0.001 |" in appendix
    assert "&lt;" not in text and "- &lt;img" not in text and "\\<img" in text
    page = html.render(build_report(sources, Fake()))
    assert re.search(r'<h2 id="appendix-tests-heading">Appendix: all pairwise tests</h2>\n<details>\n<summary>', page)
    assert page.count("<details>") == 1 and page.index("<details>") > page.index('id="provenance"')


def test_compare_option_runs_paired_tests_between_runs(runs, tmp_path):
    result = CliRunner().invoke(app, ["report", str(runs["glove"]), str(runs["evil"]), "--compare",
                                      "--out", str(tmp_path / "r.html"), "--quiet"])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text()
    # identical embeddings under two names: every paired difference is exactly zero
    assert "Pairwise significance" in html and "is significantly better on 0 of 2 summary rows, worse on 0" in html
    # two tasks (Pearson rows) in the pair's table, all four tests (and Spearman) in the appendix
    section, appendix = html.split('id="significance"')[1].split('id="appendix-tests"')
    assert section.count("no significant difference</td>") == 2 and appendix.count("no significant difference</td>") == 4
    assert "&lt;script&gt;window.__xss=2" in html


def test_the_answer_comes_first(tmp_path):
    """Issue #27: the claims opened at 8,746 px of a 20,674 px page, after provenance and every table. Now:
    claims, the evidence per task, the tests, then the runs and provenance as an appendix."""
    from tests.comparison.test_compare import make_run

    good, bad = make_run(tmp_path, "good", 1.0, 0, 0.8), make_run(tmp_path, "bad", 1.5, 2, 0.75)
    result = CliRunner().invoke(app, ["report", str(good), str(bad), "--compare", "--out", str(tmp_path / "r.html"),
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text()
    order = ["claims", "semantic", "significance", "runs", "provenance", "appendix-tests"]
    at = [html.index(f'id="{section}"') for section in order]
    assert at == sorted(at), dict(zip(order, at))
    assert "pooled Δz" in html[at[0]:at[1]]


def test_user_errors(tmp_path, runs, monkeypatch, capsys):
    with pytest.raises(BenchboxError, match="no run given"):
        write_report([], tmp_path / "r.md")
    with pytest.raises(BenchboxError, match="does not exist"):
        write_report([tmp_path / "missing"], tmp_path / "r.md")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchboxError, match="neither a benchbox run"):
        write_report([tmp_path / "empty"], tmp_path / "r.md")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")
    with pytest.raises(BenchboxError, match="unreadable run manifest"):
        write_report([broken], tmp_path / "r.md")
    with pytest.raises(BenchboxError, match="unknown report format 'pdf'"):
        write_report([runs["glove"]], tmp_path / "r.md", fmt="pdf")
    with pytest.raises(BenchboxError, match="cannot tell the report format"):
        write_report([runs["glove"]], tmp_path / "r.txt")
    with pytest.raises(BenchboxError, match="unknown published comparator"):
        write_report([runs["glove"]], tmp_path / "r.md", references=["paper:nope"])
    monkeypatch.setattr(sys, "argv", ["benchbox", "report", str(broken)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    stderr = capsys.readouterr().err
    assert exit_info.value.code == 2 and "unreadable run manifest" in stderr and "Traceback" not in stderr


def test_a_folder_of_runs_stands_for_its_runs_in_name_order(runs, tmp_path):
    folder = runs["glove"].parent
    text = write_report([folder], tmp_path / "r.md").read_text()
    ordered = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    positions = [text.index(escape(name)) for name in ordered]
    assert positions == sorted(positions)


@pytest.mark.browser
def test_html_report_renders_in_headless_chromium(runs, layout_runs, tmp_path):
    binary = chromium_binary()
    if binary is None:
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    out = write_report([runs["glove"], runs["evil"], layout_runs["eval"], layout_runs["train"], layout_runs["small"]],
                       tmp_path / "report.html", compare=True, references=["paper:merkx2019/glove-bow"])
    with open_page(out.resolve().as_uri(), binary=binary) as page:
        assert page.evaluate("document.title") == "benchbox report"
        assert page.evaluate("document.documentElement.lang") == "en"
        counts = page.evaluate("[document.querySelectorAll('svg').length, document.querySelectorAll('table').length]")
        assert counts[0] == 4 and counts[1] >= 8
        # every figure was laid out with a real size
        sizes = page.evaluate("[...document.querySelectorAll('figure svg')].map(s => s.getBoundingClientRect().width)")
        assert all(width > 200 for width in sizes)
        assert page.evaluate("window.__xss") is None
        page.set_viewport(1200, 900)
        page.screenshot(ARTIFACTS / "report-desktop.png")
        # 1400 px: every significance table, the appendix's too (opened), shows its verdicts and p-values
        # without scrolling sideways
        page.set_viewport(1400, 1000)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        overflow = page.evaluate("""[...document.querySelectorAll('#significance .table-wrap, #appendix-tests .table-wrap')]
            .map(w => w.scrollWidth - w.clientWidth)""")
        assert len(overflow) >= 2 and max(overflow) <= 0, overflow
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.evaluate("document.getElementById('significance').scrollIntoView()")
        page.screenshot(ARTIFACTS / "report-1400-significance-test.png", full_page=False)
        page.set_viewport(390, 844, mobile=True)
        # a phone: the page never scrolls sideways (wide tables scroll inside their own region)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert page.evaluate("[...document.querySelectorAll('figure svg')].every(s => s.getBoundingClientRect().right <= window.innerWidth)")
        page.screenshot(ARTIFACTS / "report-phone.png", full_page=False)
        page.settle()
        assert page.problems() == []
    assert (ARTIFACTS / "report-desktop.png").stat().st_size > 10_000


@pytest.mark.realdata
def test_report_on_real_training_runs(data_root, runs, tmp_path):
    """Two tiny char-GRU runs on real Flickr8k captions, scored on STS-B per snapshot: curves and selection."""
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    trained = []
    for hidden in (8, 16):
        config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", hidden=hidden, epochs=2,
                             cycle_epochs=1, max_captions=320, threads=1, checkpoint_every=0,
                             eval_semantic=("stsb-cosine",), data_dir=str(data_root.root))
        trained.append(Trainer.from_config(config, tmp_path / f"h{hidden}").run())
    text = write_report([runs["glove"], *trained], tmp_path / "report.md").read_text()
    assert "## Training curves" in text and "## Model selection" in text
    assert sorted(p.name for p in (tmp_path / "report_figures").iterdir()) == [
        "selection.svg", "semantic.svg", "training-1.svg", "training-2.svg"]
    for run, hidden in zip(trained, (8, 16)):
        manifest = json.loads((run / "manifest.json").read_text())
        best = max(manifest["snapshots"], key=lambda s: (s["score"], s["epoch"]))
        semantic = pd.read_csv(run / "semantic.csv")
        pearson = semantic[(semantic["epoch"] == best["epoch"]) & (semantic["metric"] == "pearson")]["value"].item()
        assert (f"| char-gru ({run.name}) | char-gru (flickr8k, random, hinge-sum) | {hidden} | 2 | complete | "
                f"{best['epoch']} | {best['score']:.1f} | {100 * pearson:.1f} |") in text


def _train_run(root: Path, name: str, **manifest) -> Path:
    """A training run folder as ``benchbox train`` writes it, with two scored snapshots."""
    run = root / name
    run.mkdir()
    snapshots = [{"epoch": e, "file": f"snapshots/epoch-{e:03d}.pt", "score": s, "dev": {"c2c_r10": s}}
                 for e, s in ((4, 30.0), (8, 35.5))]
    (run / "manifest.json").write_text(json.dumps({
        "run_id": name, "kind": "train", "status": "complete", "created": "2026-01-01T00:00:00+00:00",
        "encoder": {"name": "char-gru", "config": {"hidden": 64}}, "steps_per_epoch": 12, "snapshots": snapshots,
        "config": {"encoder": "char-gru", "dataset": "flickr8k", "visual": "cluster", "loss": "hinge-sum",
                   "hidden": 64, "epochs": 8}, **manifest}))
    return run


def test_model_selection_states_the_criterion_each_run_recorded(tmp_path):
    from benchbox.training.trainer import SELECTION

    cluster = _train_run(tmp_path, "cluster", selection=SELECTION[1])
    text = write_report([cluster], tmp_path / "one.md").read_text()
    assert f"*Training runs: the snapshot with the best dev score ({escape(SELECTION[1])}) and" in text
    assert "mean R@10 of both directions" not in text
    features = _train_run(tmp_path, "features", selection=SELECTION[0],
                          config={"encoder": "char-gru", "visual": "features", "hidden": 64})
    text = write_report([cluster, features], tmp_path / "two.md").read_text()
    assert "| Selection criterion |" in text
    assert f"| complete | {escape(SELECTION[1])} | 8 | 35.5 |" in text and f"| {escape(SELECTION[0])} | 8 |" in text


def test_an_interrupted_training_run_is_marked_incomplete_with_how_to_resume(tmp_path):
    stopped = _train_run(tmp_path, "stopped", status="stopped", stopped_at_step=37)
    failed = _train_run(tmp_path, "failed", status="stopped", error="non-finite loss at step 3")
    text = write_report([stopped, failed], tmp_path / "r.md").read_text()
    assert (f"char-gru (stopped): incomplete (interrupted at step 37 of 96; resume with the same benchbox train "
            f"command and --out {escape(stopped)} --resume).") in text
    assert "char-gru (failed): stopped: non-finite loss at step 3." in text
    assert "| char-gru (stopped) | stopped | train, incomplete (interrupted at step 37) |" in text
    assert "| 2 | incomplete (interrupted at step 37) | 8 |" in text and "| 2 | stopped (error) | 8 |" in text


def test_published_comparators_are_compared_with_runs_not_with_each_other(data_root, glove, tmp_path):
    run = run_tasks(glove, ["sts12"], data_dir=data_root.root).save(tmp_path / "runs")
    text = write_report([run], tmp_path / "r.md", compare=True,
                        references=["paper:merkx2019/glove-bow", "paper:merkx2019/char-gru-coco"]).read_text()
    section = text.split("## Pairwise significance")[1].split("\n## Claims")[0]
    label = escape(Run.open(run).manifest.get("label") or "glove-bow")
    headlines = re.findall(r"^(\S.*) vs (\S.*?): .* is significantly better on", section, flags=re.M)
    assert [b for _, b in headlines] == ["paper:merkx2019/glove-bow", "paper:merkx2019/char-gru-coco"]
    assert all(a.startswith(label) for a, _ in headlines)
    appendix = text.split("## Appendix: all pairwise tests")[1]
    assert "| paper:merkx2019/glove-bow | paper:merkx2019/char-gru-coco |" not in appendix
    assert appendix.count("| sts12 | MSRpar | pearson |") == 2 and appendix.count("| sts12 |") == 5 * 2  # 2 pairs


def test_a_report_leaves_no_lock_file_and_speaks_of_published_bars_only_with_some(runs, tmp_path):
    """Issue 41: an empty .report.html.lock stayed beside the report; the figure's caption spoke of pale bars of
    published results in a report without any."""
    out = write_report([runs["glove"]], tmp_path / "report.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "report_figures"]
    text = out.read_text()
    assert "whiskers: 95% intervals." in text and "pale bars" not in text
    write_report([runs["glove"]], tmp_path / "report.html")
    assert not (tmp_path / ".report.html.lock").exists()


def test_report_compare_takes_the_options_of_compare(tmp_path):
    """Issue #44: `report --compare` could not set the correction. Now it takes compare's options (generated from
    one declaration, :class:`CompareSettings`) and gives the verdicts compare gives with them."""
    from tests.comparison.test_compare import make_run

    good, bad = make_run(tmp_path, "good", 1.0, 0, 0.8), make_run(tmp_path, "bad", 1.5, 2, 0.75)
    options = ["--correction", "bh", "--family", "pair", "--test", "steiger", "--test-resamples", "200", "--seed", "7"]
    result = CliRunner().invoke(app, ["report", str(good), str(bad), "--compare", *options, "--out",
                                      str(tmp_path / "r.md"), "--quiet"])
    assert result.exit_code == 0, result.output
    compared = CliRunner().invoke(app, ["compare", str(good), str(bad), *options, "--json", str(tmp_path / "c.json"),
                                        "--quiet"])
    assert compared.exit_code == 0, compared.output
    payload = json.loads((tmp_path / "c.json").read_text())
    assert (payload["correction"], payload["family"]) == ("bh", "pair")
    rows = pd.DataFrame(payload["comparisons"])
    assert set(rows["test"]) >= {"steiger"}
    summary = rows[rows["summary"]]
    text = (tmp_path / "r.md").read_text()
    section = text.split("## Pairwise significance")[1].split("\n## ")[0]
    assert "p-values are Benjamini–Hochberg-corrected over the rows of each pair of models apart" in section
    a, b = rows["model_a"].iloc[0], rows["model_b"].iloc[0]
    counts = summary["verdict"].value_counts()
    assert (f"{a} vs {b}: {a} is significantly better on {counts.get('better', 0)} of {len(summary)} summary rows, "
            f"worse on {counts.get('worse', 0)}") in section and "(Benjamini–Hochberg-corrected, 5%)" in section
    assert (counts.get("better", 0), counts.get("worse", 0)) != (0, 0)  # the verdicts say something
    alone = CliRunner().invoke(app, ["report", str(good), str(bad), "--correction", "bh", "--out",
                                     str(tmp_path / "s.md")])
    assert isinstance(alone.exception, BenchboxError) and "apply to --compare" in str(alone.exception)
    assert not (tmp_path / "s.md").exists()
