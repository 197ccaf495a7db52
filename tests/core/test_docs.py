"""Documentation links: every ``docs/<file>.md#anchor`` cited in the repository (README, code, docs) names a
heading of that file, by GitHub's anchor rules; same-page ``(#anchor)`` links in ``docs/*.md`` resolve; and no
file cites the team's internal protocol notes instead of docs/protocols.md. Citations into a docs file that
does not exist (yet) are skipped: the check runs on what the repository holds."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: text files that may cite the docs
SUFFIXES = {".py", ".md", ".toml", ".html", ".j2", ".jinja", ".jinja2", ".cfg", ".ini", ".yml", ".yaml", ".rst"}
#: folders that are not the project's own text (virtual environments, build output, caches, runs)
SKIP_DIRS = {"__pycache__", "build", "dist", "runs", "node_modules", "test-artifacts"}
CITATION = re.compile(r"docs/([\w./-]+?\.md)#([\w-]+)")
SAME_PAGE_LINK = re.compile(r"\]\(#([\w-]+)\)")
#: a link from one docs page to another by its bare name, e.g. ``[STS](protocols.md#sts)``
SIBLING_LINK = re.compile(r"\]\(([\w.-]+\.md)#([\w-]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
#: the internal notes' name, assembled so that this file does not cite them itself
INTERNAL_NOTES = re.compile(r"\b" + "PROTO" + r"COLS(\.md)?\b")


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading text: markdown links and inline code reduced to their text, lower-cased,
    every character that is not a letter, digit, space, hyphen or underscore removed, spaces turned into
    hyphens (github-slugger's rules)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](url) → text
    text = text.replace("`", "").replace("*", "").lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a markdown file's headings outside code fences; repeated headings get ``-1``, ``-2``, ..."""
    seen: dict[str, int] = {}
    found = set()
    in_fence = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def text_files(root: Path) -> list[Path]:
    """The text files under ``root``, not descending into hidden folders, caches, build output or runs."""
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in SKIP_DIRS or d.endswith(".egg-info")
                                           or (Path(folder) / d / "pyvenv.cfg").exists())]  # a virtual environment
        files += [Path(folder) / n for n in names if Path(n).suffix in SUFFIXES]
    return sorted(files)


def broken_citations(root: Path) -> list[str]:
    """``file:line: docs/x.md#anchor`` for every citation whose docs file exists but has no such heading, and
    every same-page or sibling-page link of a ``docs/*.md`` file that names none of that page's headings."""
    known: dict[Path, set[str]] = {}

    def anchors_of(doc: Path) -> set[str]:
        if doc not in known:
            known[doc] = anchors(doc.read_text(encoding="utf-8"))
        return known[doc]

    broken = []
    for path in text_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(root)
        for lineno, line in enumerate(text.splitlines(), 1):
            for name, anchor in CITATION.findall(line):
                doc = root / "docs" / name
                if doc.is_file() and anchor not in anchors_of(doc):
                    broken.append(f"{rel}:{lineno}: docs/{name}#{anchor}")
            if rel.parts[0] == "docs" and path.suffix == ".md":
                for anchor in SAME_PAGE_LINK.findall(line):
                    if anchor not in anchors_of(path):
                        broken.append(f"{rel}:{lineno}: #{anchor}")
                for name, anchor in SIBLING_LINK.findall(line):
                    doc = path.parent / name
                    if doc.is_file() and anchor not in anchors_of(doc):
                        broken.append(f"{rel}:{lineno}: {name}#{anchor}")
    return broken


def internal_citations(root: Path) -> list[str]:
    return [f"{path.relative_to(root)}:{lineno}" for path in text_files(root)
            for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if INTERNAL_NOTES.search(line)]


@pytest.mark.parametrize(("heading", "slug"), [
    ("STS", "sts"),
    ("Reference-tool bugs", "reference-tool-bugs"),
    ("Char-RNN encoders", "char-rnn-encoders"),
    ("What's new in `benchbox compare`?", "whats-new-in-benchbox-compare"),
    ("Ranks, R@K and medr (VSE++)", "ranks-rk-and-medr-vse"),
    ("[Plugins](plugins.md) and entry_points", "plugins-and-entry_points"),
    ("Ähnlichkeit – STS", "ähnlichkeit--sts"),
])
def test_slugs_follow_github(heading, slug):
    assert github_slug(heading) == slug


def test_anchors_skip_code_fences_and_number_repeats():
    text = "# Title\n## Notes\n```bash\n# not a heading\n```\n## Notes\n### Notes ###\n"
    assert anchors(text) == {"title", "notes", "notes-1", "notes-2"}


def test_the_checker_finds_broken_and_internal_citations(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "handbook.md").write_text("# Handbook\n## Good part\nSee [below](#missing) and [up](#handbook).\n",
                                                encoding="utf-8")
    (tmp_path / "docs" / "other.md").write_text("# Other\n[a](handbook.md#good-part) [b](handbook.md#gone)\n",
                                                encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(
        '"""See docs/handbook.md#good-part and docs/handbook.md#bad-part; docs/absent.md#x is skipped."""\n'
        "# protocol: " + "PROTO" + "COLS.md §1\n", encoding="utf-8")
    for venv in (".venv", "env"):
        (tmp_path / venv).mkdir()
        (tmp_path / venv / "x.py").write_text("docs/handbook.md#nowhere\n", encoding="utf-8")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    assert broken_citations(tmp_path) == ["docs/handbook.md:3: #missing", "docs/other.md:2: handbook.md#gone",
                                          "pkg/mod.py:1: docs/handbook.md#bad-part"]
    assert internal_citations(tmp_path) == ["pkg/mod.py:2"]


def test_protocols_page_exists_and_is_cited():
    protocols = ROOT / "docs" / "protocols.md"
    assert protocols.is_file()
    cited = {anchor for path in text_files(ROOT)
             for name, anchor in CITATION.findall(path.read_text(encoding="utf-8", errors="replace"))
             if name == "protocols.md"}
    # the code cites one section per protocol family
    assert {"sts", "relatedness", "transfer", "retrieval", "structure", "statistics", "char-rnn-encoders"} <= cited


def test_every_docs_citation_names_a_heading():
    assert broken_citations(ROOT) == []


def test_nothing_cites_the_internal_protocol_notes():
    assert internal_citations(ROOT) == []


def test_the_readme_documentation_list_names_every_docs_page():
    """Issue 41: docs/architecture.md was missing from the README's documentation list."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", section))
    assert listed == {p.name for p in (ROOT / "docs").glob("*.md")}
