"""Which search hits are the cited work: a near miss needs a recognisable title and its authors."""

from __future__ import annotations

import pytest

from refaudit.evidence import is_convincing
from refaudit.models import Person, Reference, Work

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
