"""Free-text citations: where the parser cannot know a title ends, the record settles it."""

from __future__ import annotations

import pytest

from refaudit.evidence import Evidence
from refaudit.models import Person, Verdict, Work
from refaudit.parsing import parse_freetext
from refaudit.verify import decide

PACIFIC = Work(
    source="crossref",
    doi="10.2307/2759251",
    title="Sino-American Economic Exchanges: The Legal Contributions",
    authors=[Person("Kapp", "Robert A."), Person("Wang", "Gungwu")],
    year=1986,
    venue="Pacific Affairs",
)
PDB = Work(
    source="datacite",
    doi="10.2210/pdb9q9l/pdb",
    title="HSV-1 prefusion glycoprotein B",
    authors=[Person("Sato", "Yuki")],
    year=2025,
    venue="Worldwide Protein Data Bank",
)


def _verdict(text: str, work: Work) -> tuple[Verdict, set[str]]:
    reference = parse_freetext(text, key="k")
    result = decide(Evidence(reference=reference, candidates=[work]))
    return result.verdict, {f.code for f in result.findings if f.severity == "error"}


@pytest.mark.parametrize(
    ("text", "work"),
    [
        (
            "Kapp RA, Wang G. Sino-American Economic Exchanges. The Legal Contributions. "
            "Pacific Affairs. 1986;59:304.",
            PACIFIC,
        ),
        ("Sato Y. HSV-1 prefusion glycoprotein B. Worldwide Protein Data Bank. 2025.", PDB),
    ],
    ids=["title-runs-into-venue", "venue-read-into-title"],
)
def test_a_title_with_a_full_stop_inside_is_read_as_the_record_writes_it(
    text: str, work: Work
) -> None:
    verdict, errors = _verdict(text, work)
    assert (verdict, errors) == (Verdict.VERIFIED, set())


@pytest.mark.parametrize(
    "text",
    [
        "Kapp RA, Wang G. Sino-American Economic Exchanges. The Legal Contributions. "
        "Foreign Affairs. 1986;59:304.",
        "Kapp RA, Wang G. Sino-American Economic Exchanges and Their Legal Contributions. "
        "Pacific Affairs. 1986;59:304.",
    ],
    ids=["wrong-venue", "changed-title"],
)
def test_a_citation_that_really_differs_is_still_flagged(text: str) -> None:
    verdict, errors = _verdict(text, PACIFIC)
    assert verdict == Verdict.MISMATCH and errors


def test_a_journal_run_into_the_title_without_a_space_is_the_journal() -> None:
    work = Work(
        source="crossref",
        doi="10.1016/j.inffus.2024.102301",
        title="Explainable Artificial Intelligence 2.0: A manifesto of open challenges",
        authors=[Person("Longo", "Luca"), Person("Cabitza", "Federico")],
        year=2024,
        venue="Information Fusion",
    )
    verdict, errors = _verdict(
        "Longo L, Cabitza F. Explainable Artificial Intelligence 2.0: A manifesto of open "
        "challenges.Inf. Fusion. 2024",
        work,
    )
    assert (verdict, errors) == (Verdict.VERIFIED, set())
