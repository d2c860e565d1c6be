"""One spelling of a DOI, one key: the forms users paste all canonicalise alike."""

from __future__ import annotations

import pytest

from refaudit.identifiers import find_dois, normalize_doi

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"


@pytest.mark.parametrize(
    "written",
    [
        "10.1016/S0140-6736(97)11096-0",
        "doi:10.1016/S0140-6736(97)11096-0",
        "DOI: 10.1016/S0140-6736(97)11096-0.",
        "https://doi.org/10.1016/S0140-6736(97)11096-0",
        "http://dx.doi.org/10.1016%2FS0140-6736(97)11096-0",
        "https://doi.org/10.1016/S0140-6736(97)11096-0/",
        "https://doi.org/10.1016/S0140-6736(97)11096-0?via%3Dihub",
        "https://doi.org/10.1016/S0140-6736(97)11096-0#abstract",
        "10.1016/S0140-6736(97)11096-0\u200b",
        "\ufeff10.1016/S0140-6736(97)11096-0;",
    ],
)
def test_every_written_form_of_a_doi_gives_the_same_key(written: str) -> None:
    assert normalize_doi(written) == WAKEFIELD


def test_sici_dois_keep_their_brackets_and_semicolons() -> None:
    sici = "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0"
    assert normalize_doi(sici) == sici.lower()


def test_text_without_a_doi_gives_none() -> None:
    assert normalize_doi("https://example.org/paper?id=10") is None
    assert normalize_doi("") is None


def test_dois_are_found_in_notes_in_order_without_repeats() -> None:
    note = "Published as doi:10.1038/nature14539; see also https://doi.org/10.1038/NATURE14539."
    assert find_dois(note + " and 10.48550/arXiv.1706.03762") == [
        "10.1038/nature14539",
        "10.48550/arxiv.1706.03762",
    ]
