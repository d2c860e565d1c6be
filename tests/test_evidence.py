"""Which search hits are the cited work: a near miss needs a recognisable title and its authors."""

from __future__ import annotations

import pytest

from refaudit.evidence import search_queries
from refaudit.models import Person, Reference, Work
from refaudit.parsing import parse_freetext
from refaudit.recognise import is_convincing

ACUNA = [Person("Acuna", "David"), Person("Law", "Marc T."), Person("Fidler", "Sanja")]
RECORD = Work(
    source="openalex",
    title="Domain Adversarial Training: A Game Perspective",
    authors=ACUNA,
    year=2022,
)


def cited(title: str, authors: list[Person]) -> Reference:
    return Reference(key="acuna2022", entry_type="inproceedings", title=title, authors=authors)


@pytest.mark.parametrize(
    ("title", "authors", "expected"),
    [
        ("Domain Competitive Training: A Game Perspective", ACUNA, True),
        ("Domain Adversarial Learning: A Game Perspective", ACUNA, True),
        ("Domain Competitive Training: A Game Perspective", [Person("Okafor", "Chidi")], False),
        ("Domain Competitive Training", ACUNA, False),
        ("Domain Competitive Learning: A Game Theory", ACUNA, False),
        ("Contrastive Pretraining of Protein Language Models", ACUNA, False),
    ],
    ids=[
        "long-word-swapped",
        "close-word-swapped",
        "other-authors",
        "too-short-to-recognise",
        "three-words-changed",
        "another-paper",
    ],
)
def test_a_near_miss_title_identifies_the_work_only_with_its_authors(
    title: str, authors: list[Person], expected: bool
) -> None:
    assert is_convincing(cited(title, authors), RECORD) is expected


PNAS = Work(
    source="crossref",
    title="Immunochemical characterization of murine H-2 controlled Ss protein",
    authors=[Person("Lachmann", "P. J."), Person("Meo", "T.")],
    year=1975,
    volume="72",
    pages="4536-4540",
)


@pytest.mark.parametrize(
    ("year", "volume", "pages", "expected"),
    [
        (1975, "72", "4536--4540", True),
        (1975, "72", "4541--4545", False),
        (1975, None, "4536--4540", False),
        (1976, "72", "4536--4540", False),
    ],
    ids=["same-article", "other-page", "no-volume", "other-year"],
)
def test_a_near_miss_with_other_authors_is_the_work_only_at_its_exact_locator(
    year: int, volume: str | None, pages: str, expected: bool
) -> None:
    reference = cited(
        "On immunochemical characterization of murine H-2 controlled Ss protein",
        [Person("Abo", "Masahiro"), Person("Chen", "Xuxi")],
    )
    reference.year, reference.volume, reference.pages = year, volume, pages

    assert is_convincing(reference, PNAS) is expected


CLEEREMANS = [Person("Cleeremans", "Axel")]


@pytest.mark.parametrize(
    ("record_authors", "record_year", "expected"),
    [
        ([], 2019, False),
        ([], 2003, True),
        (CLEEREMANS, 2003, True),
        (CLEEREMANS, 2019, True),
        ([Person("Smith", "Jane")], 2003, True),
        ([Person("Smith", "Jane")], 2019, False),
    ],
    ids=[
        "anonymous-other-year",
        "anonymous-same-year",
        "same-author",
        "same-author-other-year",
        "other-author-same-year",
        "other-author-other-year",
    ],
)
def test_a_generic_short_title_needs_authors_or_year_to_identify_a_chapter(
    record_authors: list[Person], record_year: int, expected: bool
) -> None:
    reference = Reference(
        key="cleeremans2003",
        entry_type="incollection",
        title="Introduction",
        authors=CLEEREMANS,
        year=2003,
    )
    record = Work(source="openalex", title="Introduction", authors=record_authors, year=record_year)

    assert is_convincing(reference, record) is expected


def test_a_title_cited_in_two_languages_is_searched_in_each_then_whole() -> None:
    title = (
        "长短期记忆网络在工业设备健康状态估计中的应用 "
        "[Application of long short-term memory networks to state-of-health estimation]"
    )
    reference = Reference(key="chen2023", title=title, authors=[Person("Chen", "Xinyi")])
    searched = [query.title for query in search_queries(reference)]
    assert searched == [
        "长短期记忆网络在工业设备健康状态估计中的应用",
        "Application of long short-term memory networks to state-of-health estimation",
        title,
    ]


def test_a_title_in_one_language_is_searched_once() -> None:
    reference = Reference(key="x", title="Deep learning (a survey)", authors=[Person("Le", "Q")])
    assert [query.title for query in search_queries(reference)] == ["Deep learning (a survey)"]


def test_a_titleless_citation_is_searched_within_its_year_only() -> None:
    """Only a record of the cited year can match a citation that prints no title, and a
    common name ("Zhang, D.; Li, Z. …") fills a ranked list with other years' papers."""
    titleless = parse_freetext(
        "Zhang, D.; Li, Z.; Liu, Z. IEEE Trans. Pattern Anal. Mach. Intell. 2025, 47, 101.",
        key="k",
    )
    unread = parse_freetext("Zhang D Li Z Liu Z 2025 vision survey pami", key="u")

    (query,) = search_queries(titleless)
    (loose,) = search_queries(unread)

    assert (query.year_from, query.year_to, query.authors) == (2025, 2025, ["Zhang", "Li", "Liu"])
    assert (loose.year_from, loose.year_to) == (None, None)
