"""The leaderboard's HTML page (``benchbox leaderboard --html``): self-contained, its columns sortable, each ranked
model's 95% rank interval drawn as a bar; checked end to end in headless Chromium (marker ``browser``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chromium import chromium_binary, open_page
from tests.comparison.test_compare import make_run
from tests.helpers import cli

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
#: a published comparator whose name tries HTML injection
COMPARATOR = '''
[[comparator]]
name = "<img src=x onerror=window.__xss=1>"
citation = "A test"
task = "sts12"
metric = "pearson_mean"
value = 0.5
n = 350
'''


@pytest.fixture
def page_file(tmp_path, capsys):
    make_run(tmp_path, "good", noise_scale=0.3, rank_shift=0, accuracy=0.85)
    for seed in (1, 2, 3):
        make_run(tmp_path, "gru", noise_scale=1.0, rank_shift=2, accuracy=0.8, seed=seed)
    make_run(tmp_path, "bad", noise_scale=3.0, rank_shift=6, accuracy=0.7)
    (tmp_path / "published.toml").write_text(COMPARATOR)
    out = tmp_path / "board.html"
    code, _, err = cli(capsys, "leaderboard", str(tmp_path / "runs"), "-t", "sts12", "-t", "mr", "--group", "all",
                       "--resamples", "60", "--no-groups", "--comparators", str(tmp_path / "published.toml"),
                       "--html", str(out))
    assert code == 0, err
    return out


def test_the_page_is_self_contained(page_file):
    text = page_file.read_text()
    assert "default-src 'none'" in text and "http://" not in text and "https://" not in text
    assert "<img" not in text  # the comparator's name escaped


@pytest.mark.browser
def test_the_page_sorts_and_draws_rank_intervals_in_headless_chromium(page_file):
    binary = chromium_binary()
    if binary is None:
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    with open_page(page_file.resolve().as_uri(), binary=binary) as page:
        first = "[...document.querySelectorAll('#leaderboard tbody tr')].map(r => r.cells[2].textContent)"
        assert page.evaluate(first)[:3] == ["good", "gru (3 seeds)", "bad"]
        bars = page.evaluate("[...document.querySelectorAll('.ranks .interval')].map(b => b.getBoundingClientRect().width)")
        assert len(bars) == 3 and all(width > 0 for width in bars)  # the unpaired row has no rank
        page.evaluate("document.querySelectorAll('#leaderboard thead button')[1].click()")  # model, ascending
        published = "file:<img src=x onerror=window.__xss=1> (published, unpaired)"
        assert page.evaluate(first) == ["bad", published, "good", "gru (3 seeds)"]
        assert page.evaluate("document.querySelectorAll('#leaderboard thead th')[2].getAttribute('aria-sort')") == \
            "ascending"
        page.evaluate("document.querySelectorAll('#leaderboard thead button')[0].click()")  # rank, ascending
        page.evaluate("document.querySelectorAll('#leaderboard thead button')[0].click()")  # then descending
        assert page.evaluate(first) == ["bad", "gru (3 seeds)", "good", published]  # unranked rows last
        assert page.evaluate("window.__xss") is None
        page.set_viewport(1300, 700)
        page.screenshot(ARTIFACTS / "leaderboard.png")
        page.settle()
        assert page.problems() == []
