"""Free-text citations: where the parser cannot know a title ends, the record settles it."""

from __future__ import annotations

import pytest

from refaudit.evidence import Evidence
from refaudit.models import Person, SourceStatus, Verdict, Work
from refaudit.parsing import parse_freetext
from refaudit.recognise import is_convincing
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


XAI = Work(
    source="crossref",
    doi="10.1016/j.inffus.2024.102301",
    title="Explainable Artificial Intelligence 2.0: A manifesto of open challenges",
    authors=[Person("Longo", "Luca"), Person("Cabitza", "Federico")],
    year=2024,
    venue="Information Fusion",
)
GOUDA = Work(
    source="crossref",
    doi="10.1484/j.mlc.5.109876",
    title="The Devotio Moderna and Commemoration. The Case of St Margaret’s Convent in Gouda",
    authors=[Person("Goudriaan", "Koen")],
    year=2015,
    venue="The Medieval Low Countries",
    volume="2",
    pages="109-154",
)
REVIEW = Work(
    source="crossref",
    doi="10.1177/003463731301000353",
    title="Book Review: Das Religiöse in der modernen Lyrik. Von Otto Frommel. Mohr, Tübingen, "
    "1911. S. 71",
    authors=[Person("McGlothlin", "W. J.")],
    year=1913,
    venue="Review & Expositor",
)


@pytest.mark.parametrize(
    ("text", "work"),
    [
        (
            "Longo L, Cabitza F. ExplainabIe Artificial Intelligence 2.0: A manifesto of open "
            "challenges.Inf. Fusion. 2024",
            XAI,
        ),
        (
            "Goudriaan K. Tbe Devotio Modema and Commemoration. The Case of St Margaret’s Convent "
            "in Gouda. Mediev Low Ctries. 2015;2:109–154",
            GOUDA,
        ),
        (
            "McGlothlin WJ. Book Review: Das Religiöse in der modernen Lyrik. Von Otto Frommel. "
            "Mohr, Tübingen, 1911. S. 71. Rev. Expo. 1913;10:465–466.",
            REVIEW,
        ),
    ],
    ids=["misread-letter-and-glued-journal", "full-stop-and-misread-letters", "imprint-in-title"],
)
def test_the_record_title_spelt_with_slips_where_the_title_stands_is_the_title(
    text: str, work: Work
) -> None:
    # The rest of the string is read again after the record's title: venue, year, locator.
    verdict, errors = _verdict(text, work)
    assert verdict in (Verdict.VERIFIED, Verdict.MISMATCH) and errors == set()
    assert is_convincing(parse_freetext(text, key="k"), work)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "Longo L, Cabitza F. ExplainabIe Artificial Intelligence 2.0: A manifesto of open "
            "challenges.Inf. Sci. 2024",
            "venue-mismatch",
        ),
        (
            "Longo L, Cabitza F. Explainable Artificial Intelligence 2.0: A manifesto of open "
            "problems.Inf. Fusion. 2024",
            "title-mismatch",
        ),
        (
            "McGlothlin WJ. Book Review: Das Religiöse in der modernen Lyrik. Von Otto Frommel. "
            "Mohr, Tübingen, 1911. S. 71. Rev. Expo. 1915;10:465–466.",
            "year-mismatch",
        ),
    ],
    ids=["other-journal", "changed-word", "other-year"],
)
def test_reading_around_the_record_title_still_reports_what_differs(text: str, code: str) -> None:
    work = REVIEW if "Review" in text else XAI
    verdict, errors = _verdict(text, work)
    assert verdict in (Verdict.MISMATCH, Verdict.NOT_FOUND)
    assert verdict == Verdict.NOT_FOUND or code in errors


OYSTER = Work(
    source="crossref",
    doi="10.69566/ijestm.v6i1.115",
    title="Oyster Culture through Hanging Method: An Alternative Source of Livelihood",
    authors=[Person("Arsenia C. Domingo"), Person("Petronila E. Florendo")],
    year=1997,
    venue="The Vector: International Journal of Emerging Science, Technology and Management "
    "(IJESTM)",
)
CHO = Work(
    source="crossref",
    doi="10.1371/journal.pone.0111229",
    title="Efficient Production of sTNFRII-gAD Fusion Protein in Large Quantity by Use of the "
    "Modified CHO-S Cell Expression System",
    authors=[
        Person("Cai", "Qian"),
        Person("Zhao", "Ang"),
        Person("Yuting Yin"),
        Person("Ma", "Li"),
        Person("Jiao", "Zhen"),
        Person("Zhi", "Hui"),
        Person("Wang", "Lei"),
    ],
    year=2014,
    venue="PLoS ONE",
    volume="9",
    pages="e111229",
)
GRID = Work(
    source="crossref",
    doi="10.2172/2589179",
    title="Aggregated Distributed Energy Resources in 2024: The Fundamentals",
    authors=[
        Person("USDOE Office of Electricity (OE)", is_organisation=True),
        Person("Bieler", "Stephanie"),
        Person(
            "The National Association of State Energy Officials, Arlington, VA (United States)",
            is_organisation=True,
        ),
        Person(
            "National Association of Regulatory Utility Commissioners, Washington, DC "
            "(United States)",
            is_organisation=True,
        ),
        Person("Goldenberg", "Cara"),
        Person("McEvoy", "Avery"),
        Person("Stephan", "Katerina"),
    ],
    year=2024,
    publisher="Office of Scientific and Technical Information (OSTI)",
    type="report",
)
GRID_CITED = (
    "{} (2024). Aggregated Distributed Energy Resources in 2024: The Fundamentals. Office of "
    "Scientific and Technical Information (OSTI)."
)


@pytest.mark.parametrize(
    ("text", "work"),
    [
        (
            "Arsenia C. Domingo Petronila E. Florendo. Oyster Culture through Hanging Method: An "
            "Alternative Source of Livelihood. The Vector: International Journal of Emerging "
            "Science, Technology and Management (IJESTM). 1997",
            OYSTER,
        ),
        (
            "Cai Q Zhao A Yuting Yin Ma L Jiao Z Zhi H et al. Efficient Production of sTNFRII-gAD "
            "Fusion Protein in Large Quantity by Use of the Modified CHO-S Cell Expression System. "
            "PLoS ONE. 2014;9:e111229",
            CHO,
        ),
        (
            GRID_CITED.format(
                "USDOE Office of Electricity (OE), Bieler, S., The National Association of State "
                "Energy Officials, Arlington, VA (United States), National Association of "
                "Regulatory Utility Commissioners, Washington, DC (United States), Goldenberg, C. "
                "and McEvoy, A. et al."
            ),
            GRID,
        ),
        (
            "USDOE Office of Electricity (OE) Bieler S The National Association of State Energy "
            "Officials, Arlington, VA (United States) National Association of Regulatory Utility "
            "Commissioners, Washington, DC (United States) Goldenberg C McEvoy A et al. "
            "Aggregated Distributed Energy Resources in 2024: The Fundamentals. Office of "
            "Scientific and Technical Information (OSTI). 2024",
            GRID,
        ),
    ],
    ids=[
        "whole-names-read-as-title",
        "whole-name-among-vancouver-names",
        "organisations-commas",
        "organisations-and-vancouver-names-without-commas",
    ],
)
def test_names_the_record_writes_in_one_field_are_one_name_each(text: str, work: Work) -> None:
    # No name reader can split these; the record's own names say where they end.
    assert _verdict(text, work) == (Verdict.VERIFIED, set())


@pytest.mark.parametrize(
    ("text", "work"),
    [
        (
            "Arsenia C. Domingo Maria L. Santos. Oyster Culture through Hanging Method: An "
            "Alternative Source of Livelihood. The Vector: International Journal of Emerging "
            "Science, Technology and Management (IJESTM). 1997",
            OYSTER,
        ),
        (
            GRID_CITED.format(
                "USDOE Office of Electricity (OE), Bieler, S., The National Association of State "
                "Energy Officials, Arlington, VA (United States), Ortiz, P. and McEvoy, A."
            ),
            GRID,
        ),
    ],
    ids=["other-name-before-the-title", "organisation-kept-other-person"],
)
def test_names_read_with_the_record_still_report_other_authors(text: str, work: Work) -> None:
    verdict, errors = _verdict(text, work)
    assert verdict != Verdict.VERIFIED
    assert verdict != Verdict.MISMATCH or "author-mismatch" in errors


def test_a_lower_case_initial_is_a_given_name_not_a_particle() -> None:
    work = Work(
        source="crossref",
        doi="10.36227/techrxiv.23589741.v1",
        title="A Survey on Large Language Models: Applications, Challenges, Limitations, and "
        "Practical Usage",
        authors=[
            Person("Hadi", "Muhammad Usman"),
            Person("al tashi", "qasem"),
            Person("Qureshi", "Rizwan"),
            Person("Shah", "Abbas"),
        ],
        year=2023,
        type="preprint",
    )
    cited = (
        "M. U. Hadi, q. al tashi, R. Qureshi, A. Shah et al., ``A Survey on Large Language "
        "Models: Applications, Challenges, Limitations, and Practical Usage,'', 2023"
    )
    assert _verdict(cited, work)[1] == set()
    assert "author-mismatch" in _verdict(cited.replace("q. al tashi", "q. el amin"), work)[1]


LLAMA = Work(
    source="arxiv",
    arxiv_id="2407.21783",
    title="The Llama 3 Herd of Models",
    authors=[Person("Dubey", "Abhimanyu"), Person("Jauhri", "Abhinav"), Person("Yang", "Amy")],
    year=2024,
    type="preprint",
    venue="arXiv",
)
ATLAS = Work(
    source="crossref",
    doi="10.1016/j.physletb.2024.127648",
    title="Measurement of the W boson mass using the 2022 and 2023 datasets",
    authors=[Person("Ahmadi", "Rahul"), Person("Allen", "Nadia"), Person("Anderson", "Nadia")],
    year=2024,
    venue="Physics Letters B",
    volume="356",
)


@pytest.mark.parametrize(
    ("text", "work"),
    [
        ("Meta. The Llama 3 herd of models. arXiv 2024.", LLAMA),
        ("Meta AI (2024). The Llama 3 herd of models. arXiv preprint arXiv:2407.21783.", LLAMA),
        ("Google DeepMind. The Llama 3 herd of models. arXiv preprint, 2024.", LLAMA),
        (
            "ATLAS Collaboration. Measurement of the W boson mass using the 2022 and 2023 "
            "datasets. Phys. Lett. B 356 (2024).",
            ATLAS,
        ),
        (
            "The ATLAS Collaboration. Measurement of the W boson mass using the 2022 and 2023 "
            "datasets. Physics Letters B. 2024;356.",
            ATLAS,
        ),
    ],
    ids=["mononym", "org-ai-apa", "company-camel-case", "collaboration", "the-collaboration"],
)
def test_a_work_cited_by_its_organisation_is_verified_against_its_members(
    text: str, work: Work
) -> None:
    reference = parse_freetext(text, key="k")
    # The organisation is the author, not the first words of the title.
    assert reference.title is not None and reference.title.startswith(work.title[:10])
    assert len(reference.authors) == 1
    assert _verdict(text, work) == (Verdict.VERIFIED, set())


def test_a_person_cited_for_an_organisations_report_is_still_an_author_mismatch() -> None:
    verdict, errors = _verdict("Smith J. The Llama 3 herd of models. arXiv 2024.", LLAMA)
    assert verdict == Verdict.MISMATCH and "author-mismatch" in errors


def test_an_invented_work_attributed_to_an_organisation_is_not_found() -> None:
    text = "OpenAI. Scaling laws for reward overoptimization in multimodal agents. arXiv 2023."
    answered = SourceStatus("answered")
    evidence = Evidence(
        reference=parse_freetext(text, key="k"),
        candidates=[LLAMA],
        statuses={"arxiv": answered, "openalex": answered, "semanticscholar": answered},
        searched=True,
        searched_by={"openalex", "semanticscholar"},
    )
    assert decide(evidence).verdict == Verdict.NOT_FOUND


GRID_FLEX = Work(
    source="crossref",
    doi="10.1016/j.epsr.2024.110123",
    title="Stochastic modeling for the aggregated flexibility of distribution systems",
    authors=[Person("Wen", "Yi"), Person("Guo", "Yu"), Person("Hu", "Zechun"), Person("Hug", "G.")],
    year=2024,
    venue="Electric Power Systems Research",
)


@pytest.mark.parametrize(
    "text",
    [
        "Y. Wen, Y. Guo, Z. Hu, G. Hug, Electr. Power Syst. Res. (2024)",
        "Wen, Y.; Guo, Y.; Hu, Z.; Hug, G. Electr. Power Syst. Res. 2024",
        "Y. Wen, Y. Guo, Z. Hu and G. Hug, Electr. Power Syst. Res., 2024",
    ],
    ids=["aip", "acs", "rsc"],
)
def test_a_titleless_citation_is_identified_by_its_names_abbreviated_journal_and_year(
    text: str,
) -> None:
    assert _verdict(text, GRID_FLEX) == (Verdict.VERIFIED, set())


@pytest.mark.parametrize(
    "text",
    [
        # One author in a journal and a year: the author may have published more there.
        "Wen, Y. Electr. Power Syst. Res. 2024",
        # Other co-authors: another article of the first author's.
        "Y. Wen, P. Novak, R. Ortiz, Electr. Power Syst. Res. (2024)",
    ],
)
def test_a_titleless_citation_that_does_not_single_out_the_record_is_not_identified(
    text: str,
) -> None:
    verdict, _ = _verdict(text, GRID_FLEX)
    assert verdict == Verdict.UNVERIFIED


HYPOTHERMIA = Work(
    source="openalex",
    title="Kidney surgery under hypothermia",
    authors=[Person("Grégoir", "W.")],
    year=1977,
    venue="Bruxelles medical",
)


@pytest.mark.parametrize(
    "text",
    [
        "W. Grégoir, Brux. Med. (1977).",
        "Grégoir, W. Brux. Med. 1977.",
        "W. Grégoir, \\emph{Brux. Med.}, 1977.",
    ],
    ids=["aip", "acs", "rsc"],
)
def test_a_one_author_titleless_citation_names_that_authors_one_article_there(
    text: str,
) -> None:
    """All the citation says (one author, the journal, the year) is the record's, and the
    record is that author's alone."""
    assert _verdict(text, HYPOTHERMIA) == (Verdict.VERIFIED, set())


@pytest.mark.parametrize(
    "text",
    [
        "M. Grégoir, Brux. Med. (1977).",  # another person of that name
        "W. Grégoir, Brux. Med. (1979).",  # another year
        "W. Grégoir, Acta Chir. Belg. (1977).",  # another journal
        "W. Grégoir, Brux. Med. 12, 331 (1977).",  # a volume and page the record lacks
    ],
)
def test_a_one_author_titleless_citation_that_differs_in_anything_is_not_identified(
    text: str,
) -> None:
    verdict, _ = _verdict(text, HYPOTHERMIA)
    assert verdict == Verdict.UNVERIFIED


def test_a_one_author_titleless_citation_two_articles_fit_is_not_identified() -> None:
    """The author wrote twice in that journal that year: the citation names neither."""
    other = Work(
        source="openalex",
        title="Surgical treatment of renal artery stenosis",
        authors=[Person("Grégoir", "W.")],
        year=1977,
        venue="Bruxelles medical",
    )
    reference = parse_freetext("W. Grégoir, Brux. Med. (1977).", key="k")

    result = decide(Evidence(reference=reference, candidates=[HYPOTHERMIA, other]))

    assert result.verdict == Verdict.UNVERIFIED


def _journal_article(title: str, families: list[str], first_page: str, doi: str) -> Work:
    return Work(
        source="crossref",
        doi=doi,
        title=title,
        authors=[Person(family, "A.") for family in families],
        year=2014,
        venue="European Journal of Cancer",
        volume="50",
        pages=first_page,
    )


def test_a_titleless_citation_is_not_another_article_of_its_third_author() -> None:
    """Same journal, volume and year, led by a name the citation lists third: another
    paper, which must neither be taken for the cited one nor make it ambiguous."""
    cited = _journal_article("Anti-OX40 pharmacology", ["Sukumaran", "Kim", "Huseni"], "71", "1")
    other = _journal_article("T-cell immunotherapy", ["Huseni", "Du", "Zhu"], "45", "2")
    reference = parse_freetext(
        "S. Sukumaran, J. Kim, M. Huseni et al., Eur. J. Cancer \\textbf{50}, 71 (2014).", key="k"
    )

    result = decide(Evidence(reference=reference, candidates=[other, cited]))

    assert (result.verdict, result.matched and result.matched.doi) == (Verdict.VERIFIED, "1")


def test_a_titleless_citation_names_the_part_of_a_series_on_its_page() -> None:
    """Two parts of one series share the authors, journal, volume and year; the cited
    first page tells them apart."""
    part_one = _journal_article("New plants from the West", ["Heller"], "580", "1")
    part_two = _journal_article("New plants from the West II", ["Heller"], "626", "2")
    reference = parse_freetext(
        "A. A. Heller, \\emph{Eur. J. Cancer}, 2014, \\textbf{50}, 626.", key="k"
    )

    result = decide(Evidence(reference=reference, candidates=[part_one, part_two]))

    assert (result.verdict, result.matched and result.matched.doi) == (Verdict.VERIFIED, "2")


@pytest.mark.parametrize(
    ("text", "work"),
    [
        (
            "Okoro, A. J.; Lindahl, E.; Park, J. J. Cell Syst. 2023.",
            Work(
                source="crossref",
                title="Learned potentials for protein design",
                authors=[Person("Okoro", "A. J."), Person("Lindahl", "E."), Person("Park", "J.")],
                year=2023,
                venue="Cell Systems",
            ),
        ),
        (
            "N. W. Rahman, SSRN Electron. J. (2024).",
            Work(
                source="crossref",
                title="Household savings under inflation",
                authors=[Person("Rahman", "Nur Wardina")],
                year=2024,
                venue="SSRN Electronic Journal",
            ),
        ),
    ],
    ids=["acs-initial-or-journal", "preprint-server"],
)
def test_a_titleless_venue_read_either_way_or_a_preprint_server_is_the_records(
    text: str, work: Work
) -> None:
    """ "Park, J. J. Cell Syst." is Park, J. in J. Cell Syst. or Park, J. J. in Cell Syst.;
    an SSRN paper's venue is the server's name, abbreviated."""
    assert _verdict(text, work) == (Verdict.VERIFIED, set())


def test_a_titleless_citation_of_another_preprint_server_is_not_identified() -> None:
    work = Work(
        source="crossref",
        title="Household savings under inflation",
        authors=[Person("Rahman", "Nur Wardina")],
        year=2024,
        venue="SSRN Electronic Journal",
    )
    verdict, _ = _verdict("N. W. Rahman, Research Square (2024).", work)
    assert verdict == Verdict.UNVERIFIED
