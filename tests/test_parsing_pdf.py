"""Reading a PDF's reference list: the committed fixtures (tests/fixtures/pdf, built by
build.py there) and the compiled papers of ../shared/bench/public/pdf."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shared_path

from refaudit.errors import InputError
from refaudit.parsing import parse_file
from refaudit.parsing.pdf import read_pdf
from refaudit.parsing.pdflist import normalise
from tests import pdfbytes

FIXTURES = Path(__file__).parent / "fixtures" / "pdf"
REPO = Path(__file__).resolve().parents[1]


def test_a_two_column_numbered_list_across_pages_is_read_in_order() -> None:
    references = read_pdf(FIXTURES / "numbered-two-column.pdf")
    assert [r.label for r in references] == [f"[{n}]" for n in range(1, 33)]
    assert [r.key for r in references][:3] == ["ref1", "ref2", "ref3"]
    assert {r.page for r in references[:12]} == {1}
    assert {r.page for r in references[12:]} == {2}
    first = references[0]
    assert first.title == "Deep residual learning for image recognition"
    assert first.year == 2016
    assert first.text is not None and first.text.startswith("K. He, X. Zhang")
    # A word hyphenated at a line end is joined; so is a page range cut after its dash.
    silver = references[12]
    assert "Mastering the game of Go" in (silver.title or "")
    assert "pp. 2672–2680, 2014" in (references[7].text or "")
    # The running head, the page number and the appendix after the list are not entries.
    printed = " ".join(r.text or "" for r in references)
    assert "Preprint under review" not in printed
    assert "appendix gives the proofs" not in printed.lower()
    # A URL cut across lines is whole again; the list ends with its last entry.
    assert (references[-1].url or "").endswith("/technical-sessions/presentation/abadi")
    assert (references[-1].text or "").endswith("abadi, 2016.")


def test_an_author_year_list_without_labels_is_cut_at_its_hanging_indents() -> None:
    references = read_pdf(FIXTURES / "author-year.pdf")
    assert len(references) == 32
    assert all(r.label is None for r in references)
    assert references[0].text is not None and references[0].text.startswith("A. Krizhevsky")
    assert [r.page for r in references] == sorted(r.page or 0 for r in references)
    assert references[-1].page == 3
    assert references[-1].year == 2015
    assert "Additional tables" not in (references[-1].text or "")


def test_a_list_under_a_german_heading_is_found_and_ends_at_the_appendix(tmp_path: Path) -> None:
    # The numbered steps in the text are a longer run than the list: only its heading
    # tells which run of numbers is the reference list.
    lines = [
        "Vorgehen",
        *(f"{n}. Schritt {n} der Auswertung wird hier beschrieben." for n in range(1, 6)),
        "Literaturverzeichnis",
        "[1] K. He, X. Zhang, S. Ren, and J. Sun. Deep residual learning for image",
        "recognition. In CVPR, 2016.",
        "[2] A. Vaswani et al. Attention is all you need. In NeurIPS, 2017.",
        "[3] D. P. Kingma and J. Ba. Adam: A method for stochastic optimization. In ICLR, 2015.",
        "A. Appendix",
        "1. Further steps of the proof follow here.",
    ]
    (tmp_path / "arbeit.pdf").write_bytes(pdfbytes.text_page(lines))
    references = read_pdf(tmp_path / "arbeit.pdf")
    assert [r.label for r in references] == ["[1]", "[2]", "[3]"]
    assert references[0].title == "Deep residual learning for image recognition"
    assert "proof" not in (references[-1].text or "")


def test_alpha_labels_become_the_keys() -> None:
    references = read_pdf(FIXTURES / "alpha.pdf")
    assert [r.key for r in references][:3] == ["HZRS16", "VSPU17", "LBH15"]
    assert references[0].label == "[HZRS16]"
    assert len(references) == 12


def test_links_cut_at_a_line_end_or_set_with_ruled_underscores_are_whole_again() -> None:
    from refaudit.parsing.pdflist import _joined, _Line

    def lines(*texts: str) -> list[_Line]:
        return [_Line(1, 0, 0.0, 100.0, 700.0 - 10 * n, 9.0, t) for n, t in enumerate(texts)]

    assert _joined(
        lines("Modeling. http:", "//dx.doi.org/10.1007/978-3-319-44677-6 41"), set()
    ) == ("Modeling. http://dx.doi.org/10.1007/978-3-319-44677-6_41")
    assert _joined(lines("1075–1079. https://doi.org/10.4103/ijo.IJO 644 22"), set()).endswith(
        "https://doi.org/10.4103/ijo.IJO_644_22"
    )
    assert _joined(lines("In Proc. X. https://example.org/paper Accessed today."), set()).endswith(
        "https://example.org/paper Accessed today."
    )


def test_ligatures_and_separate_tex_accents_are_plain_letters() -> None:
    assert normalise("Eﬃcient ﬁne-tuning by Fran¸cois, Ren´ e and J´er^ome") == (
        "Efficient fine-tuning by François, René and Jérôme"
    )
    assert normalise("https://example.org/~user/a^b") == "https://example.org/~user/a^b"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("encrypted.pdf", "encrypted PDF; it cannot be read without its password"),
        ("scan.pdf", "no text layer (a scanned PDF?)"),
        ("notes.pdf", "no reference list found"),
        ("fake.pdf", "not a PDF"),
    ],
)
def test_unusable_pdfs_are_refused_with_one_line(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "scan.pdf").write_bytes(pdfbytes.image_page())
    (tmp_path / "notes.pdf").write_bytes(pdfbytes.text_page(["Meeting notes", "Nothing cited."]))
    (tmp_path / "fake.pdf").write_text("@article{a, title={T}}")
    path = FIXTURES / name if name == "encrypted.pdf" else tmp_path / name
    with pytest.raises(InputError) as caught:
        parse_file(path)
    assert message in str(caught.value)


def test_check_on_a_scan_says_so_and_suggests_ocr(tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(pdfbytes.image_page())
    done = subprocess.run(
        [sys.executable, "-m", "refaudit", "check", "scan.pdf", "--offline"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 2
    assert "scan.pdf: no text layer (a scanned PDF?)" in done.stderr
    assert "ocrmypdf" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_json_report_gives_each_printed_reference_its_text_label_and_page(
    tmp_path: Path,
) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes((FIXTURES / "numbered-two-column.pdf").read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "refaudit", "check", "paper.pdf", "--offline", "-f", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 3, done.stderr  # offline: nothing could be checked
    results = json.loads(done.stdout)["results"]
    assert [r["reference"]["label"] for r in results] == [f"[{n}]" for n in range(1, 33)]
    thirteenth = results[12]["reference"]
    assert (thirteenth["page"], thirteenth["text"][:12]) == (2, "D. Silver, A")


def test_fix_writes_the_list_as_bibtex_and_never_touches_the_pdf(tmp_path: Path) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes((FIXTURES / "numbered-two-column.pdf").read_bytes())
    before = paper.read_bytes()
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def fix(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "refaudit", "fix", "paper.pdf", "--offline", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)

    refused = fix("--in-place")
    assert refused.returncode == 2 and "refaudit cannot write into this input" in refused.stderr
    done = fix("-o", "refs.bib")
    assert done.returncode == 0, done.stderr
    assert "wrote 32 entries to refs.bib" in done.stderr
    written = parse_file(tmp_path / "refs.bib")
    assert [r.key for r in written.references] == [f"ref{n}" for n in range(1, 33)]
    assert paper.read_bytes() == before


# --- the compiled benchmark papers (../shared) ---------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "gen-ieeetran",
        "gen-acm",
        "gen-plainnat",
        "hallmark-dev_public-splncs04",
        "hallmark-dev_public-apsrev",
        "word-gen-plainnat",
    ],
)
def test_every_printed_reference_of_the_benchmark_papers_is_found(name: str) -> None:
    folder = shared_path("bench", "public", "pdf")
    labels = json.loads((folder / f"{name}.labels.json").read_text())["labels"]
    references = read_pdf(folder / f"{name}.pdf")
    assert len(references) == len(labels)

    def words(text: str) -> set[str]:
        return set(re.findall(r"[^\W_]+", text.casefold()))

    # The same entry in the same place: nearly all of its printed words.
    same = sum(
        len(words(label["text"]) & words(r.text or "")) >= 0.9 * len(words(label["text"]))
        for r, label in zip(references, labels, strict=True)
    )
    assert same >= 0.99 * len(labels)
    if labels[0]["printed_label"].startswith("["):
        assert [r.label for r in references] == [label["printed_label"] for label in labels]
