"""`refaudit check --offline` end to end: the report says how old the Retraction Watch data were.

The real pipeline runs offline with an empty cache, so the snapshot is the only
retraction data; the snapshot is built from the CSV fixture the update tests use.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.render.json import load_schema
from refaudit.retractions.csvload import load_csv
from refaudit.retractions.store import snapshot_path

SAMPLE = Path(__file__).parent / "fixtures" / "retractionwatch" / "sample.csv"
BIB = r"""@article{wakefield1998,
  author = {Wakefield, A. J. and Murch, S. H. and Anthony, A.},
  title = {Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive
           developmental disorder in children},
  journal = {Lancet}, year = {1998}, doi = {10.1016/S0140-6736(97)11096-0}
}
@article{he2016deep,
  author = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  title = {Deep Residual Learning for Image Recognition},
  booktitle = {CVPR}, year = {2016}, doi = {10.1109/cvpr.2016.90}
}
"""
MISSING = (
    "retraction screening: no Retraction Watch snapshot — run `refaudit retractions update`;"
    " offline, only notices in cached source records were screened"
)


@pytest.fixture
def bib(tmp_path: Path) -> Path:
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    return path


@pytest.fixture
def downloaded() -> datetime:
    """Install the fixture CSV as a snapshot downloaded 22 days ago."""
    when = datetime.now(UTC) - timedelta(days=22)
    target = snapshot_path(load_settings())
    target.parent.mkdir(parents=True, exist_ok=True)
    load_csv(SAMPLE, target, source_url="fixture", downloaded_at=when)
    return when


def check(bib: Path, *args: str) -> tuple[int, str]:
    """Exit code and stdout; the table format's stderr (its one-line outage note) appended."""
    result = CliRunner().invoke(app, ["check", str(bib), "--offline", *args])
    return result.exit_code, result.stdout + ("" if "--format" in args else result.stderr)


def test_offline_check_screens_with_the_snapshot_and_says_how_old_it_is(
    bib: Path, downloaded: datetime
) -> None:
    line = f"retraction screening: Retraction Watch snapshot of {downloaded.date()} (22 days old)"
    code, table = check(bib)
    assert code == 1, table
    assert "1 retracted" in table
    assert line in table and "no Retraction Watch snapshot" not in table
    code, markdown = check(bib, "--format", "markdown")
    assert line in markdown.splitlines()
    code, output = check(bib, "--format", "json")
    data = json.loads(output)
    jsonschema.Draft202012Validator(load_schema()).validate(data)
    state = data["retraction_snapshot"]
    assert state["available"] is True and state["rows"] == 8
    assert state["age_days"] == 22.0 and state["downloaded_at"] == downloaded.isoformat()
    assert state["newest_notice_date"] == "2024-11-19"
    wakefield = next(r for r in data["results"] if r["key"] == "wakefield1998")
    retracted = next(f for f in wakefield["findings"] if f["code"] == "retracted")
    assert retracted["source"] == "retractionwatch snapshot"


def test_offline_check_without_a_snapshot_says_retractions_were_not_screened(bib: Path) -> None:
    code, table = check(bib)
    assert code == 3, "nothing could be checked, and nothing says it is retracted"
    assert "none of the 2 reference(s) is in the cache" in table
    code, markdown = check(bib, "--format", "markdown")
    assert MISSING in markdown.splitlines()
    code, output = check(bib, "--format", "json")
    data = json.loads(output)
    jsonschema.Draft202012Validator(load_schema()).validate(data)
    assert data["offline"] is True and data["summary"]["retracted"] == 0
    assert data["retraction_snapshot"] == {
        "available": False,
        "downloaded_at": None,
        "age_days": None,
        "rows": None,
        "newest_notice_date": None,
    }
