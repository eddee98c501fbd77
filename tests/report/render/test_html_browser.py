"""The page in a real browser (Debian's chromium, headless): it renders without console
errors or network requests, its filters work, hostile answers stay text, and a screenshot
shows the plots.  Skips when chromium is absent (.ci/run installs it)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_graphinstruct.report.render.html import NamedReport, build_page, write_page
from tests.report.html_fixtures import instructions, two_cell_report
from tests.report.render.html_browser import CHROMIUM, Browser

if CHROMIUM is None and os.environ.get("GI_REQUIRE_CHROMIUM") == "1":  # .ci/run sets it
    pytest.fail("GI_REQUIRE_CHROMIUM=1 but chromium is not installed", pytrace=False)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")

COUNT = "document.getElementById('gi-count').dataset.visible"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("html") / "report.html"
    write_page(build_page([NamedReport("r.json", two_cell_report())],
                          baseline=NamedReport("b.json", two_cell_report()),
                          instructions=instructions()), path)
    return path.as_uri()


@pytest.mark.parametrize(("fragment", "visible"), [
    ("", 8), ("#filter=failed", 7), ("#status=passed", 1), ("#status=failed&cell=0", 4),
    ("#q=l1-001", 2), ("#category=structural", 3), ("#category=count", 1),
    ("#cls=refusal&level=1", 2),
    ("#status=differs", 0)])
@pytest.mark.slow
def test_the_filters_from_the_url(browser: Browser, page_url: str, fragment: str,
                                  visible: int) -> None:
    browser.open(page_url + fragment)
    assert browser.js(COUNT) == str(visible)
    assert browser.js("document.querySelectorAll('#gi-table tr.item').length") == visible


def test_controls_filter_and_items_open_with_their_drawing(browser: Browser,
                                                           page_url: str) -> None:
    browser.open(page_url)
    browser.js("(() => { const s = document.getElementById('gi-cell'); s.value = '1';"
               " s.dispatchEvent(new Event('change')); })()")
    assert browser.js(COUNT) == "4"
    browser.js("(() => { const s = document.getElementById('gi-search'); s.value = 'alert';"
               " s.dispatchEvent(new Event('input')); })()")
    assert browser.js(COUNT) == "1"  # the hostile answer, found as text
    browser.js("document.querySelector('#gi-table tr.item').click()")
    pre = browser.js("document.querySelector('tr.details pre').textContent")
    assert "</script><script>alert(1)</script>" in pre
    assert browser.js("document.querySelectorAll('tr.details img').length") == 0
    browser.open(page_url + "#q=L1-001&cell=0")
    browser.js("document.querySelector('#gi-table tr.item').click()")
    assert browser.js("document.querySelectorAll('svg.graph circle.node').length") == 8
    assert browser.js("document.querySelectorAll('svg.graph circle.node.bad').length") == 3
    assert browser.js("document.querySelectorAll('svg.graph line.edge.bad').length") == 3


def test_no_console_error_no_dialog_no_network(browser: Browser, page_url: str) -> None:
    browser.open(page_url + "#q=alert")
    browser.js("document.querySelector('#gi-table tr.item').click()")
    assert browser.problems() == []
    base = page_url.split("#")[0]
    fetched = {u.split("#")[0] for u in browser.requests() if not u.startswith("data:")}
    assert fetched <= {base, "about:blank"}  # the page itself; inline images are data: URIs


def test_a_screenshot_shows_the_plots(browser: Browser, page_url: str, tmp_path: Path) -> None:
    browser.open(page_url)
    boxes = browser.js("[...document.querySelectorAll('figure.plot svg')].map(s => {"
                       " const r = s.getBoundingClientRect(); return [r.top, r.height]; })")
    assert len(boxes) == 5 and all(h > 50 for _, h in boxes)
    bottom = int(max(top + h for top, h in boxes)) + 10
    png = browser.screenshot(1200, bottom)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1200, bottom) and len(png) > 20_000
    (tmp_path / "page.png").write_bytes(png)


def test_the_leaderboard_page_renders_hostile_names_as_text(browser: Browser,
                                                           tmp_path: Path) -> None:
    """``leaderboard --format html``: a model name that is markup stays text (no element, no
    dialog), every table has a row per cell, and the page fetches nothing."""
    from pytest_graphinstruct.report.analyses.leaderboard import build_leaderboard, render
    from pytest_graphinstruct.report.analyses.models_table import load_models_table
    from pytest_graphinstruct.report.analyses.run_set import read_runs
    from tests.report.analyses.analyses_data import uniform, write_cell

    evil = '<img src=x onerror="alert(1)">'
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.8), tpv=500),
             write_cell(tmp_path, "gpt4o", "few-shot", uniform(0.9), tpv=2000),
             write_cell(tmp_path, evil, "zero-shot", uniform(0.5), tpv=900,
                        name="evil.quality.json")]
    page = tmp_path / "leaderboard.html"
    page.write_text(render(build_leaderboard(read_runs(files, load_models_table())), "html"),
                    encoding="utf-8")
    before = len(browser.requests())  # the browser is shared with the module's other tests
    browser.open(page.as_uri())
    assert browser.js("document.querySelectorAll('img, script').length") == 0
    rows = browser.js("[...document.querySelectorAll('table')].map("
                      "t => t.querySelectorAll('tbody tr').length)")
    assert rows[:3] == [3, 3, 3]  # by S_total, by S_final, per level
    cells = browser.js("[...document.querySelectorAll('td')].map(td => td.textContent)")
    assert evil in cells
    assert browser.problems() == []
    fetched = {u.split("#")[0] for u in browser.requests()[before:]
               if not u.startswith("data:")}
    assert fetched <= {page.as_uri(), "about:blank"}
