"""``python -m pytest_graphinstruct html``: any saved reports, our own and the release's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.run.records.writer import write_report
from tests.report.html_fixtures import SUITE, two_cell_report

QUALITY = Path(__file__).resolve().parents[4] / "shared" / "published-results" / "quality"
_DATA = re.compile(r'<script type="application/json" id="gi-data">(.*?)</script>', re.S)


def _doc(path: Path) -> dict:
    return json.loads(_DATA.findall(path.read_text(encoding="utf-8"))[0])


@pytest.mark.skipif(not QUALITY.is_dir(), reason="../shared/published-results absent")
@pytest.mark.slow
def test_published_score_files_make_one_page(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    files = [QUALITY / "deepseekaiDeepSeekV3-zero-shot.quality.json",
             QUALITY / "deepseekaiDeepSeekV3-few-cot.quality.json"]
    out = tmp_path / "page.html"
    assert main(["html", *map(str, files), "--out", str(out)]) == 0
    assert "2 cell(s), 1600 item(s)" in capsys.readouterr().out
    doc = _doc(out)
    assert [c["key"] for c in doc["cells"]] == ["deepseekaiDeepSeekV3-zero-shot",
                                                "deepseekaiDeepSeekV3-few-cot"]
    assert doc["cells"][0]["taxonomy"]["classes"]["unknown"] == 800  # no samples kept
    published = json.loads(files[0].read_text())
    assert doc["cells"][0]["summary"]["s_total"] == round(published["total_score"], 4)
    page = out.read_text(encoding="utf-8")
    assert 'id="plot-heatmap"' in page and 'id="plot-pareto"' in page


def test_our_report_with_baseline_and_suite(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    write_report(two_cell_report(), report)
    out = tmp_path / "page.html"
    assert main(["html", str(report), "--out", str(out), "--baseline", str(report),
                 "--suite", str(SUITE), "--title", "mine"]) == 0
    doc = _doc(out)
    assert doc["title"] == "mine" and doc["baseline"] == "r.json"
    assert "L1-001" in doc["instructions"] and len(doc["items"]) == 8


def test_a_bad_report_is_one_line_and_exit_2(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    out = tmp_path / "page.html"
    assert main(["html", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and not out.exists()
    assert main(["html", str(bad), "--out", str(out), "--suite", str(tmp_path / "no")]) == 2
