"""The README stays a front page that reads in minutes, and no link in it or in docs/*.md leads nowhere: every
relative link names a file of the repository and, with an anchor, a heading of that file (GitHub's anchors)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
# The README held 1,220 lines before its details moved to docs/; a new user reads this many in minutes.
README_LINE_BUDGET = 250


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def parse(page: Path) -> list[Token]:
    return MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8"))


def plain_text(inline: Token) -> str:
    return "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))


def github_anchor(title: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped (backticks, colons, commas, dots, ...), each
    space a hyphen."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor; a repeated one gets -1, -2, ... as GitHub numbers them."""
    tokens = parse(page)
    seen: Counter[str] = Counter()
    found = set()
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            anchor = github_anchor(plain_text(tokens[index + 1]))
            found.add(f"{anchor}-{seen[anchor]}" if seen[anchor] else anchor)
            seen[anchor] += 1
    return found


def relative_links(page: Path) -> list[str]:
    links = []
    for token in parse(page):
        for child in token.children or []:
            target = child.attrGet("href") if child.type == "link_open" else child.attrGet("src")
            if isinstance(target, str) and not re.match(r"^([a-z][a-z0-9+.-]*:|//)", target):
                links.append(target)
    return links


def test_the_readme_stays_under_its_line_budget() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= README_LINE_BUDGET, f"README.md has {lines} lines: move details to a docs/ page and link it"


def test_the_readme_links_every_docs_page() -> None:
    linked = {(README.parent / link.split("#")[0]).resolve() for link in relative_links(README)}
    assert [page_id(p) for p in PAGES[1:] if p.resolve() not in linked] == []


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for link in relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.is_file() or REPO.resolve() not in target.parents:
            broken.append(f"{link}: no such file in the repository")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link}: {page_id(target)} has no heading with anchor #{anchor}")
    assert broken == [], f"{page_id(page)}: {broken}"


def test_the_checks_see_links_and_anchors() -> None:
    """The link reader finds the README's links, and the anchors match GitHub's for the headings linked to."""
    assert len(relative_links(README)) >= 20
    assert any("#" in link for page in PAGES for link in relative_links(page))
    assert "a-fresh-account-what-must-exist-before-the-first-up" in anchors(REPO / "docs" / "deploying.md")
    assert "train-on-oci-serve-on-vultr" in anchors(REPO / "docs" / "cross-cloud.md")
    assert github_anchor("Policy packs: separation and guardrails") == "policy-packs-separation-and-guardrails"
