"""Snapshot trimming as a pure function, and which settings offer the browser tools."""

from __future__ import annotations

from pathlib import Path

from beamclaw_tools.browser import (
    find_chromium,
    open_browser_pool,
    parse_snapshot,
    refs_of,
    render,
    trim,
    trimmed_snapshot,
)
from beamclaw_tools.settings import BrowserSettings

SNAPSHOT = """- generic [active] [ref=e1]:
  - banner [ref=e2]:
    - navigation [ref=e3]:
      - list [ref=e4]:
        - listitem [ref=e5]:
          - link "Home" [ref=e6] [cursor=pointer]:
            - /url: /home
  - heading "Title: with colon" [level=1] [ref=e7]
  - separator [ref=e8]
  - generic [ref=e9]:
    - generic [ref=e10]:
      - paragraph [ref=e11]: Some "quoted" text
  - textbox "Query" [ref=e12]:
    - /placeholder: search here
  - generic [ref=e13] [cursor=pointer]: clickable div
  - img [ref=e14]
"""


def test_parse_keeps_roles_names_refs_text_and_props() -> None:
    root = parse_snapshot(SNAPSHOT)
    (body,) = root.children
    assert body.role == "generic"
    assert body.ref == "e1"
    assert "active" in body.attrs
    heading = body.children[1]
    assert (heading.role, heading.name, heading.ref) == ("heading", "Title: with colon", "e7")
    assert heading.attrs == ("level=1",)
    link = body.children[0].children[0].children[0].children[0].children[0]
    assert (link.role, link.name, link.props) == ("link", "Home", (("/url", "/home"),))
    assert refs_of(root) == {f"e{i}" for i in range(1, 15)}


def test_trim_unwraps_drops_and_collapses() -> None:
    text = render(trim(parse_snapshot(SNAPSHOT)))
    assert text.splitlines() == [
        '- link "Home" [ref=e6]',  # banner > navigation > list > listitem collapsed
        '- heading "Title: with colon" [level=1]',  # not actionable: no ref
        '- text: Some "quoted" text',  # wrappers unwrapped
        '- textbox "Query" [ref=e12]',
        "  - /placeholder: search here",  # kept; /url is dropped
        "- generic [ref=e13]: clickable div",  # a pointer target keeps its ref
    ]  # the separator and the unnamed image are gone


def test_repeated_siblings_are_counted_not_lost() -> None:
    rows = "\n".join(
        f'  - listitem [ref=e{i}]:\n    - link "Item {i}" [ref=f{i}]' for i in range(30)
    )
    text = render(trim(parse_snapshot(f"- list [ref=l]:\n{rows}")))
    assert text.count("- link") == 8
    assert "… 22 more link (full=true shows all)" in text


def test_render_cuts_on_a_line_and_says_how_to_see_everything() -> None:
    rows = "\n".join(f'- heading "Heading number {i}" [level=2] [ref=e{i}]' for i in range(200))
    text = trimmed_snapshot(rows, 500)
    body, note = text.rsplit("\n", 1)
    assert len(body) <= 500
    assert body.endswith("]")
    assert "full=true" in note


def test_missing_chromium_offers_no_tools(tmp_path: Path) -> None:
    missing = BrowserSettings(executable_path=tmp_path / "no-chromium")
    assert find_chromium(missing) is None
    assert open_browser_pool(missing) is None
    assert open_browser_pool(BrowserSettings(enabled=False)) is None
