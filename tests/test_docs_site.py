"""The documentation: the mkdocs site builds strictly, the generated option page is current, links resolve.

- docs/config-reference.md is what ``scripts/config_reference.py`` writes from configs/ today
  (a new option, key or comment without ``make docs`` fails here).
- ``mkdocs build --strict`` of mkdocs.yml into a temporary folder succeeds: a link to a missing
  page or anchor, or a page left out of the nav, fails it (skipped without the ``docs`` extra).
- Every relative link of README.md and of the pages in docs/ names a file that exists and, with
  ``#anchor``, a heading of that file by GitHub's rule, so they work on GitHub as well as in the
  site; none points into ``shared/`` (kept beside the clone, never part of the repository).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(text: str) -> str:
    """The text without fenced blocks, HTML comments and inline code: what links can be in."""
    text = re.sub(r"<!--.*?-->", "", FENCE.sub("", text), flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def github_anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a markdown file (lower case, punctuation dropped,
    each space a hyphen, ``-1``, ``-2`` ... for repeats)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """Each relative link of ``page`` that names no file, no heading of it, or a place outside ``root``."""
    problems = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):           # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        where = f"{page.relative_to(root)}: link {target!r}"
        if "shared" in Path(file_part).parts or not dest.is_relative_to(root):
            problems.append(f"{where} leaves the repository")
        elif not dest.exists():
            problems.append(f"{where}: no such file {dest.relative_to(root)}")
        elif anchor and dest.suffix == ".md" and anchor not in github_anchors(dest):
            problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
    return problems


def test_config_reference_page_is_current():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "config_reference.py"), "-"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    committed = (DOCS / "config-reference.md").read_text(encoding="utf-8")
    assert committed == done.stdout, "docs/config-reference.md is stale: run  make docs  (or python scripts/config_reference.py)"


def test_config_reference_names_every_option_file():
    page = (DOCS / "config-reference.md").read_text(encoding="utf-8")
    for path in sorted((REPO / "configs").rglob("*.yaml")):
        group = path.parent.relative_to(REPO / "configs").as_posix()
        if group != ".":
            assert f"### `{group}={path.stem}`" in page, f"{path.relative_to(REPO)} missing from docs/config-reference.md"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="the docs extra (mkdocs, mkdocs-material) is not installed: make docs installs it")
def test_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    for page in PAGES:
        built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), f"{page.name} was not built (missing from the nav of mkdocs.yml?)"


def test_readme_links_resolve():
    assert broken_links(REPO / "README.md") == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_docs_links_resolve_on_github_too(page):
    assert broken_links(page) == []


def test_the_link_check_finds_broken_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "install.md").write_text("# Install\n\n## The local model's weights\n", encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text("# T\n\n[ok](install.md#the-local-models-weights) [ok](#t) [ok](https://x.org) `[ok](x.md)`\n"
                    "```sh\n[ok](not-a-link.md)\n```\n"
                    "[a](missing.md) [b](install.md#no-such-heading) [c](../../shared/data/x.json)\n", encoding="utf-8")
    problems = broken_links(page, root=tmp_path)
    assert len(problems) == 3, problems
    assert "missing.md" in problems[0] and "no-such-heading" in problems[1] and "leaves" in problems[2]


def test_every_page_is_listed_in_the_readme_and_on_the_home_page():
    readme = set(LINK.findall(_prose((REPO / "README.md").read_text(encoding="utf-8"))))
    home = set(LINK.findall(_prose((DOCS / "index.md").read_text(encoding="utf-8"))))
    for page in PAGES:
        if page.stem != "index":
            assert f"docs/{page.name}" in readme, f"README.md's table of pages lacks docs/{page.name}"
            assert page.name in home, f"docs/index.md's table of pages lacks {page.name}"


def test_the_command_list_on_the_running_page_is_the_cli_help(cli):
    """docs/running.md copies `mtsbench --help`: a command added to the CLI must appear there."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "running.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(usage: mtsbench.*?)```", page, re.S).group(1)
    shown = cli("--help").stdout
    assert block.strip() == shown.strip()
