"""Free-text citations: each common style gives title, authors, year, venue and identifiers."""

from __future__ import annotations

import json
import re

import pytest

from refaudit.parsing import parse_freetext
from tests.conftest import shared_path


def test_apa_with_doi_url() -> None:
    ref = parse_freetext(
        r"Piazza, E., Carni, J. D., \& Kelly, J. (1983). Group psychotherapy for anorexia nervosa. "
        r"\emph{Journal of the American Academy of Child Psychiatry}, \emph{22}(3), 276–278. "
        r"https://doi.org/10.1016/s0002-7138(09)60377-0",
        key="piazza",
        file="paper.tex",
        line=12,
    )
    assert ref.title == "Group psychotherapy for anorexia nervosa"
    assert [p.family for p in ref.authors] == ["Piazza", "Carni", "Kelly"]
    assert ref.authors[1].given == "J. D."
    assert (ref.year, ref.venue) == (1983, "Journal of the American Academy of Child Psychiatry")
    assert (ref.volume, ref.number, ref.pages) == ("22", "3", "276-278")
    assert ref.doi == "10.1016/s0002-7138(09)60377-0"
    assert (ref.key, ref.file, ref.line) == ("piazza", "paper.tex", 12)
    assert ref.free_text is not None and "\\emph" not in ref.free_text


def test_apa_without_italics_finds_the_venue_before_the_volume() -> None:
    ref = parse_freetext(
        "Albano, V. G., Busetto, L., & Zanotti, V. (2006). C–C bond formation by cyanide addition "
        "to dinuclear vinyliminium complexes. Journal of Organometallic Chemistry, "
        "691(20), 4234–4243.",
        key="k",
    )
    assert ref.title == "C–C bond formation by cyanide addition to dinuclear vinyliminium complexes"
    assert ref.venue == "Journal of Organometallic Chemistry"
    assert (ref.volume, ref.number, ref.pages) == ("691", "20", "4234-4243")


def test_chicago_author_date_with_quoted_title() -> None:
    ref = parse_freetext(
        "Rifi, Mouna, Mohamed Hibti, and Rushed Kanawati. 2018. ``A Complex Network Analysis "
        "Approach for Risk Increase Factor Prediction in Nuclear Power Plants.'' "
        "\\emph{Proceedings "
        "of the 3rd International Conference on Complexity}.",
        key="k",
    )
    assert ref.title == (
        "A Complex Network Analysis Approach for Risk Increase Factor Prediction "
        "in Nuclear Power Plants"
    )
    assert [(p.given, p.family) for p in ref.authors] == [
        ("Mouna", "Rifi"),
        ("Mohamed", "Hibti"),
        ("Rushed", "Kanawati"),
    ]
    assert ref.year == 2018
    assert ref.venue == "Proceedings of the 3rd International Conference on Complexity"


def test_chicago_with_curly_quotes_and_plain_venue() -> None:
    ref = parse_freetext(
        "Manderscheid, Markus, Carmen Pereda-Fernández, and Josef Pfeilschifter. 2002. “Cyclic AMP "
        "Increases Rat Inhibitor of Apoptosis Protein (RIAP1) mRNA in Renal Mesangial Cells.” "
        "Kidney "
        "International 61 (3) (March): 797–803.",
        key="k",
    )
    assert ref.title.startswith("Cyclic AMP Increases Rat Inhibitor")
    assert ref.venue == "Kidney International"
    assert (ref.year, ref.volume, ref.number, ref.pages) == (2002, "61", "3", "797-803")
    assert ref.authors[1].family == "Pereda-Fernández"


def test_chicago_notes_style_without_year_after_the_authors() -> None:
    ref = parse_freetext(
        r"LeCun, Yann, Yoshua Bengio, and Geoffrey Hinton. ``Deep Learning.'' \emph{Nature} 521, "
        r"no. 7553 (2015): 436--44.",
        key="k",
    )
    assert [p.family for p in ref.authors] == ["LeCun", "Bengio", "Hinton"]
    assert (ref.title, ref.year, ref.venue, ref.pages) == (
        "Deep Learning",
        2015,
        "Nature",
        "436-44",
    )


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            r"Endoh, T., Sugimoto, N. (2013). Selection of RNAs for Constructing “Lighting-UP” "
            r"Biomolecular Switches in Response to Specific Small Molecules. \emph{PloS one}.",
            "Selection of RNAs for Constructing “Lighting-UP” Biomolecular Switches in Response "
            "to Specific Small Molecules",
        ),
        (
            "Hoffman A, Gold N. T-Mobile “The Un-Carrier”: Good Strategy Despite Ethical "
            "Concerns. Rotterdam School of Management, Erasmus University. 2016.",
            "T-Mobile “The Un-Carrier”: Good Strategy Despite Ethical Concerns",
        ),
        (
            r"B. Cowley and J. W. Pillow, ``High-contrast ``gaudy'' images improve the training "
            r"of deep neural network models of visual cortex,'' in \emph{NeurIPS}, 2020.",
            "High-contrast “gaudy” images improve the training of deep neural network models "
            "of visual cortex",
        ),
        (
            r"Liu, Z. (2020). View and Comments on the Data Ecosystem: “Ocean of Data”. "
            r"\emph{Engineering}, \emph{6}, 604--608.",
            "View and Comments on the Data Ecosystem: “Ocean of Data”",
        ),
        (
            "Sato Y, Joshi A, Packard R. Direct verification of the relation υs= (ℏ/m) ▽ ϕ. "
            "Journal of Physics: Conference Series. 2009.",
            "Direct verification of the relation υs= (ℏ/m) ▽ ϕ",
        ),
    ],
    ids=["apa", "vancouver", "ieee-nested", "apa-quote-after-colon", "vancouver-symbol-end"],
)
def test_a_phrase_quoted_inside_a_title_is_not_taken_for_the_title(text: str, title: str) -> None:
    ref = parse_freetext(text, key="k")
    assert ref.title == title
    assert ref.year in (2009, 2013, 2016, 2020)


def test_ieee_with_particle_and_doi() -> None:
    ref = parse_freetext(
        r"H.~Taher, D.~Schreurs, C.~van Niekerk, and B.~Nauwelaers, ``Detecting variations of "
        r"small-signal model parameters,'' \emph{Int. J. RF Microwave Computer-Aided Eng.}, "
        r"vol. 15, "
        r"no. 1, pp. 102--108, 2004. doi: 10.1002/mmce.20066.",
        key="k",
    )
    assert ref.title == "Detecting variations of small-signal model parameters"
    assert [p.full_family for p in ref.authors] == [
        "Taher",
        "Schreurs",
        "van Niekerk",
        "Nauwelaers",
    ]
    assert ref.authors[2].particle == "van"
    assert (ref.year, ref.venue) == (2004, "Int. J. RF Microwave Computer-Aided Eng.")
    assert (ref.volume, ref.number, ref.pages) == ("15", "1", "102-108")
    assert ref.doi == "10.1002/mmce.20066"


def test_ieee_conference_with_et_al_and_arxiv() -> None:
    ref = parse_freetext(
        r"A.~Vaswani et~al., ``Attention is all you need,'' in \emph{Proc. NIPS}, 2017, "
        r"arXiv:1706.03762v5.",
        key="k",
    )
    assert ref.title == "Attention is all you need"
    assert [p.family for p in ref.authors] == ["Vaswani"] and ref.authors_truncated
    assert (ref.venue, ref.year) == ("Proc. NIPS", 2017)
    assert (ref.arxiv_id, ref.arxiv_version) == ("1706.03762", 5)
    assert ref.entry_type == "inproceedings"


def test_vancouver_with_pmid() -> None:
    ref = parse_freetext(
        "LeCun Y, Bengio Y, Hinton G. Deep learning. Nature. 2015 May 28;521(7553):436-44. "
        "doi: 10.1038/nature14539. PMID: 26017442.",
        key="k",
    )
    assert (ref.title, ref.venue, ref.year) == ("Deep learning", "Nature", 2015)
    assert [(p.family, p.given) for p in ref.authors] == [
        ("LeCun", "Y"),
        ("Bengio", "Y"),
        ("Hinton", "G"),
    ]
    assert (ref.volume, ref.number, ref.pages) == ("521", "7553", "436-44")
    assert (ref.doi, ref.pmid) == ("10.1038/nature14539", "26017442")


def test_vancouver_title_ending_in_capitals() -> None:
    ref = parse_freetext(
        "Savage G, McNeil D, Dutta P. SOME NUTRITIONAL ADVANTAGES OF WALNUTS. Acta Horticulturae. "
        "2001:557-563.",
        key="k",
    )
    assert (ref.title, ref.venue, ref.year) == (
        "SOME NUTRITIONAL ADVANTAGES OF WALNUTS",
        "Acta Horticulturae",
        2001,
    )


def test_a_vancouver_list_whose_title_starts_with_a_word_and_another() -> None:
    """ "Sparse and …" after a list of names is the title, not more names in reading order."""
    ref = parse_freetext(
        "Zhu M, Chen T, Wang Z. Sparse and Imperceptible Adversarial Attack via a Homotopy "
        "Algorithm. Int Conf Mach Learn. 2021;139:12868-12877.",
        key="k",
    )
    assert ref.title == "Sparse and Imperceptible Adversarial Attack via a Homotopy Algorithm"
    assert [(p.family, p.given) for p in ref.authors] == [
        ("Zhu", "M"),
        ("Chen", "T"),
        ("Wang", "Z"),
    ]
    assert (ref.venue, ref.year, ref.volume, ref.pages) == (
        "Int Conf Mach Learn",
        2021,
        "139",
        "12868-12877",
    )


@pytest.mark.parametrize(
    ("text", "authors", "title"),
    [
        (
            "Okafor CN Lindqvist PA. Effects and Mechanisms of Cold Exposure in Lean Mice. "
            "J Appl Physiol. 2004;97:112-119.",
            [("Okafor", "CN"), ("Lindqvist", "PA")],
            "Effects and Mechanisms of Cold Exposure in Lean Mice",
        ),
        (
            "Haddad RS. Lizards, Snakes and Amphisbaenians: A Field Guide. Herpetol Rev. 2011",
            [("Haddad", "RS")],
            "Lizards, Snakes and Amphisbaenians: A Field Guide",
        ),
        (
            "Moreau J. Rivers, Lakes and Wetlands. Freshw Biol. 1998;40:1-9.",
            [("Moreau", "J")],
            "Rivers, Lakes and Wetlands",
        ),
    ],
    ids=["names-without-commas", "two-letter-initials", "title-case-list-in-title"],
)
def test_a_vancouver_head_with_a_title_of_listed_words_is_not_names_in_reading_order(
    text: str, authors: list[tuple[str, str]], title: str
) -> None:
    """Only "Given I." can begin names in reading order: a title in title case whose first
    words are joined by "and" or commas stays the title of the Vancouver names before it."""
    ref = parse_freetext(text, key="k")
    assert [(p.family, p.given) for p in ref.authors] == authors
    assert ref.title == title


def test_names_in_reading_order_after_a_given_name_and_initial() -> None:
    ref = parse_freetext(
        "Maria K. Jensen, Tom Alvarez, and Priya Raman. Sparse probing of language models. "
        "In ACL, 2022.",
        key="k",
    )
    assert [(p.family, p.given) for p in ref.authors] == [
        ("Jensen", "Maria K."),
        ("Alvarez", "Tom"),
        ("Raman", "Priya"),
    ]
    assert ref.title == "Sparse probing of language models"


@pytest.mark.parametrize(
    ("text", "title", "venue", "families"),
    [
        (
            "Nadia Okafor, J. Lindqvist, and Tomas R Berg. 2019. Seasonal drift of "
            "groundwater nitrate in glacial aquifers. Water Research 161, 4 (2019), 112–120. "
            "https://doi.org/10.1016/j.watres.2019.05.001",
            "Seasonal drift of groundwater nitrate in glacial aquifers",
            "Water Research",
            ["Okafor", "Lindqvist", "Berg"],
        ),
        (
            "Keiko Mori, R. Ashworth, and L. Fenn. 2021. Ranking under uncertainty. "
            "Annals of Applied Statistics (2021).",
            "Ranking under uncertainty",
            "Annals of Applied Statistics",
            ["Mori", "Ashworth", "Fenn"],
        ),
    ],
    ids=["with-locator", "venue-and-year-only"],
)
def test_acm_author_year_with_an_initial_led_name_is_not_a_title_less_citation(
    text: str, title: str, venue: str, families: list[str]
) -> None:
    # "Nadia Okafor, J." has the shape of an inverted ACS name; the title after the
    # year says this is ACM's author-year list, names in reading order.
    ref = parse_freetext(text, key="k")
    assert ref.title == title
    assert ref.venue == venue
    assert [p.family for p in ref.authors] == families


def test_an_acs_volume_in_roman_numerals_keeps_the_citation_title_less() -> None:
    ref = parse_freetext("Harlow, P. J. J. Am. Acad. Relig. 1951, XIX, 88–93.", key="k")
    assert ref.title is None
    assert ref.venue == "J. Am. Acad. Relig."
    assert [p.family for p in ref.authors] == ["Harlow"]


def test_nature_style() -> None:
    ref = parse_freetext(
        r"LeCun, Y., Bengio, Y. \& Hinton, G. Deep learning. \emph{Nature} \textbf{521}, "
        r"436--444 (2015).",
        key="k",
    )
    assert (ref.title, ref.venue, ref.year, ref.pages) == (
        "Deep learning",
        "Nature",
        2015,
        "436-444",
    )
    assert [p.family for p in ref.authors] == ["LeCun", "Bengio", "Hinton"]


def test_harvard_style() -> None:
    ref = parse_freetext(
        "Bertrand, M., Duflo, E. and Mullainathan, S. (2004) How much should we trust "
        "differences-in-differences estimates? The Quarterly Journal of Economics, 119(1), "
        "pp. 249-275.",
        key="k",
    )
    assert ref.title == "How much should we trust differences-in-differences estimates?"
    assert ref.venue == "The Quarterly Journal of Economics"
    assert [p.family for p in ref.authors] == ["Bertrand", "Duflo", "Mullainathan"]
    assert (ref.year, ref.volume, ref.number) == (2004, "119", "1")


def test_listing_style_with_double_period_after_the_names() -> None:
    ref = parse_freetext(
        "Comer, David J.. Application of Top-Down Principles to Digital System Design. "
        "IEEE Transactions on Education. 1983. 26. 4. 170-172",
        key="k",
    )
    assert ref.title == "Application of Top-Down Principles to Digital System Design"
    assert (ref.venue, ref.year) == ("IEEE Transactions on Education", 1983)
    assert (ref.volume, ref.number, ref.pages) == ("26", "4", "170-172")
    assert [(p.family, p.given) for p in ref.authors] == [("Comer", "David J.")]


def test_noisy_ocr_string_keeps_only_what_is_certain() -> None:
    ref = parse_freetext(
        "1I. Pop andmT.-Y. NA, Applied Scient ific HesAarc h54, 125  (1995).", key="k"
    )
    assert ref.title is None and ref.venue is None
    assert ref.year == 1995
    assert ref.free_text == "1I. Pop andmT.-Y. NA, Applied Scient ific HesAarc h54, 125 (1995)"


def test_isbn_inside_a_title_is_not_taken_as_the_works_isbn() -> None:
    ref = parse_freetext(
        "Grubbs, Judith Evans. 1995. ``A. E. Laiou (ed.), Consent and Coercion. Washington, 1993. "
        "ISBN 0-88402-213-7.'' \\emph{Journal of Roman Studies} 85: 260.",
        key="k",
    )
    assert ref.isbn is None
    assert ref.year == 1995 and ref.venue == "Journal of Roman Studies"


def test_future_year_is_kept_as_written() -> None:
    ref = parse_freetext(
        "Chan, Kei Yuen. 2031. ``Dirac Cohomology for the Degenerate Affine Hecke "
        "Clifford Algebra.'' "
        "arXiv:1310.6668.",
        key="k",
    )
    assert ref.year == 2031 and ref.arxiv_id == "1310.6668"
    assert ref.venue is None


def test_datacite_doi_gives_the_arxiv_id_and_url_is_kept() -> None:
    ref = parse_freetext(
        "Ma, Y. (2023). Automated digital twins testing. \\emph{arXiv preprint arXiv:2302.13198}. "
        "https://doi.org/10.48550/arXiv.2302.13198 https://example.org/slides",
        key="k",
    )
    assert ref.arxiv_id == "2302.13198"
    assert ref.doi == "10.48550/arxiv.2302.13198"
    assert ref.url == "https://example.org/slides"


def test_bibliography_generated_by_bibtex_uses_newblocks() -> None:
    ref = parse_freetext(
        r"J.~D. Watson and F.~H.~C. Crick. \newblock Molecular structure of nucleic acids. "
        r"\newblock \emph{Nature}, 171:\penalty0 737--738, 1953.",
        key="k",
    )
    assert ref.title == "Molecular structure of nucleic acids"
    assert [p.family for p in ref.authors] == ["Watson", "Crick"]
    assert (ref.venue, ref.volume, ref.pages, ref.year) == ("Nature", "171", "737-738", 1953)


@pytest.mark.shared
def test_benchmark_bibitems_titles_and_years_are_extracted() -> None:
    """Every \\bibitem of the public free-text set comes through; titles are found for most."""
    from refaudit.parsing import parse_file

    path = shared_path("bench", "public", "freetext.tex")
    labels = json.loads(shared_path("bench", "public", "freetext.labels.json").read_text())
    bibliography = parse_file(path)
    text_lines = path.read_text(encoding="utf-8").splitlines()
    assert len(bibliography.references) == labels["count"] == 150
    assert {r.key for r in bibliography.references} == {label["key"] for label in labels["labels"]}
    for reference in bibliography.references:
        assert re.search(
            r"\\bibitem\{" + re.escape(reference.key) + "}", text_lines[reference.line - 1]
        )
        assert reference.free_text
    with_title = sum(1 for r in bibliography.references if r.title)
    with_year = sum(1 for r in bibliography.references if r.year)
    assert with_title >= 130 and with_year >= 140
    assert bibliography.problems == []


@pytest.mark.parametrize(
    ("text", "families"),
    [
        (
            r"Allard, M., Moisan, H., Brouillette, É., \& Gervais, A. (2006). Transcriptional "
            r"modulation of some iron-regulated genes. \emph{Microbiology}, \emph{152}, 1--10.",
            ["Allard", "Moisan", "Brouillette", "Gervais"],
        ),
        (
            r"J. Gu, S. Zhai, M. Á. Bautista, and J. M. Susskind, ``f-DM: A multi-stage "
            r"diffusion model via progressive signal transformation,'' in \emph{ICLR}, 2023.",
            ["Gu", "Zhai", "Bautista", "Susskind"],
        ),
        (
            "Kaasa S, Loge JH, Aapro M, Bruera É. Integration of oncology and palliative care. "
            "Lancet Oncol. 2018;19:e588-653.",
            ["Kaasa", "Loge", "Aapro", "Bruera"],
        ),
        (
            "Á. Parra, S.-F. Ch&apos;ng, T.-J. Chin, ``Provably robust rotation search,'' in "
            r"\emph{CVPR}, 2020.",
            ["Parra", "Ch'ng", "Chin"],
        ),
    ],
    ids=["apa", "ieee", "vancouver", "html-entity"],
)
def test_accented_initials_are_initials_not_authors(text: str, families: list[str]) -> None:
    ref = parse_freetext(text, key="k")
    assert [person.family for person in ref.authors] == families


def test_apa7_ellipsis_truncates_the_author_list() -> None:
    """APA 7: the first nineteen names, an ellipsis, the last; the ellipsis is no name."""
    names = ", ".join(f"Author{chr(65 + i)}, {chr(65 + i)}." for i in range(19))
    ref = parse_freetext(
        rf"{names}, . . . Zimmer, Z. (2020). A census of many hands. \emph{{Journal of Things}}, "
        r"\emph{3}, 1--9.",
        key="apa7",
    )
    assert ref.authors_truncated
    assert len(ref.authors) == 20
    assert (ref.authors[-1].family, ref.authors[-1].given) == ("Zimmer", "Z.")
    assert ref.title == "A census of many hands"


def test_vancouver_names_without_commas() -> None:
    ref = parse_freetext(
        "Ali MM Balash DG Kanich C Aviv AJ. Fighting phishing at scale. Proc USENIX Secur Symp. "
        "2021;30:1-18.",
        key="vnc",
    )
    assert [(p.family, p.given) for p in ref.authors] == [
        ("Ali", "MM"),
        ("Balash", "DG"),
        ("Kanich", "C"),
        ("Aviv", "AJ"),
    ]
    assert ref.title == "Fighting phishing at scale"
    assert ref.venue == "Proc USENIX Secur Symp"


def test_an_upper_case_title_is_not_read_as_more_names() -> None:
    ref = parse_freetext(
        "Voepel-Lewis T Reynolds P. THE EFFECT OF A SHUNT ON HALOTHANE UPTAKE. Anesthesiology. "
        "1997;87:1040.",
        key="caps",
    )
    assert [p.family for p in ref.authors] == ["Voepel-Lewis", "Reynolds"]
    assert ref.title == "THE EFFECT OF A SHUNT ON HALOTHANE UPTAKE"


def test_physics_style_without_title_keeps_authors_venue_and_locator() -> None:
    ref = parse_freetext(
        r"D. Kramer, M. L. Cossio, C. Downey, Rev. Chil. Pediatr. \textbf{87}, 69 (2016).",
        key="aip",
    )
    assert ref.title is None
    assert [p.family for p in ref.authors] == ["Kramer", "Cossio", "Downey"]
    assert (ref.venue, ref.year, ref.volume, ref.pages) == ("Rev. Chil. Pediatr", 2016, "87", "69")


def test_a_year_where_the_venue_would_be_is_no_venue() -> None:
    ref = parse_freetext(
        "J. Chen, Y. Lu, ``TransUNet: Transformers Make Strong Encoders,'', 2021", key="ieee"
    )
    assert ref.venue is None
    assert ref.year == 2021


def test_vancouver_year_without_a_locator_is_not_read_as_the_volume() -> None:
    ref = parse_freetext(
        "Nielsen D. Tree Boosting With XGBoost: Why Does XGBoost Win Every Machine Learning "
        "Competition?. Norwegian University of Science and Technology. 2016.",
        key="k",
    )
    assert (ref.venue, ref.year, ref.volume) == (
        "Norwegian University of Science and Technology",
        2016,
        None,
    )


def test_an_initial_glued_to_its_family_name_is_an_initial() -> None:
    ref = parse_freetext(
        "M. S'ari, A.Brown, R. Brydson, “Multi-linear regression model to predict the electron "
        "stability of poorly soluble active pharmaceutical ingredients,” Microscopy and "
        "Microanalysis, vol. 23, pp. 1194–1195, 2017.",
        key="k",
    )
    assert [(p.family, p.given) for p in ref.authors] == [
        ("S'ari", "M."),
        ("Brown", "A."),
        ("Brydson", "R."),
    ]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "Ferreira, T. S. P., Almeida, R. R. d., Filsner, P. H. N. d. L., & Moreno, M. (2012). "
            "Molecular typing of Clostridium perfringens isolated from swine in slaughterhouses. "
            "Ciência Rural, 42, 1450–1456.",
            [("Ferreira", "T. S. P."), ("Almeida", "R. R. d."), ("Filsner", "P. H. N. d. L.")]
            + [("Moreno", "M.")],
        ),
        (
            # A family name cut at its particle: "Montes de Oca, M." written "Montes, d. O. M.".
            "Heitmann, W., Montes, d. O. M., & Alves, C. (2026). Crop yield responses to seaweed "
            "extract-based biostimulants. Front. plan. sci., 17, 1803269.",
            [("Heitmann", "W."), ("Montes", "d. O. M."), ("Alves", "C.")],
        ),
    ],
    ids=["particle-initials-after", "particle-initial-first"],
)
def test_apa_particle_initials_stay_with_their_name(
    text: str, names: list[tuple[str, str]]
) -> None:
    ref = parse_freetext(text, key="k")
    assert [(p.family, p.given) for p in ref.authors] == names


def test_a_lone_vancouver_author_keeps_a_particle_initial_after_the_others() -> None:
    ref = parse_freetext(
        "Cruz JMd. Attention-guided intrinsic depth estimation for unconstrained consumer "
        "imaging. Sensors. 2026",
        key="k",
    )
    assert [(p.family, p.given) for p in ref.authors] == [("Cruz", "JMd")]
    assert ref.title == (
        "Attention-guided intrinsic depth estimation for unconstrained consumer imaging"
    )
    # One capital and a lower-case letter is a given name, not an initial and a particle.
    natural = parse_freetext(
        "Omar El Housni and Vineet Goyal. Beyond worst-case: A probabilistic analysis of affine "
        "policies in dynamic optimization. In Advances in Neural Information Processing "
        "Systems 30 (NIPS 2017), pages 4756–4764, 2017",
        key="k",
    )
    assert [(p.family, p.given) for p in natural.authors] == [
        ("Housni", "Omar El"),
        ("Goyal", "Vineet"),
    ]


def test_apa_ampersand_ends_a_name_written_without_initials() -> None:
    ref = parse_freetext(
        "OpenAI, & Wijayagunawardhana, W. A. H. N. (2023). GPT-4 technical report. "
        "arXiv preprint, 2303.08774.",
        key="k",
    )
    assert [(p.family, p.given) for p in ref.authors] == [
        ("OpenAI", ""),
        ("Wijayagunawardhana", "W. A. H. N."),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            r"P. Jaaskelainen, C. G. Magnussen and M. A. Sabin et al., \emph{Diabetes Care}, "
            r"2012, \textbf{35}, 1937.",
            ("Diabetes Care", 2012, "35", "1937", ["Jaaskelainen", "Magnussen", "Sabin"]),
        ),
        (
            r"G. Pohnert and W. Boland, \emph{Eur. J. Org. Chem.}, 2000, \textbf{2000}, 1821.",
            ("Eur. J. Org. Chem.", 2000, "2000", "1821", ["Pohnert", "Boland"]),
        ),
    ],
    ids=["first-page-like-a-year", "volume-named-by-year"],
)
def test_rsc_style_puts_the_year_before_volume_and_page(
    text: str, expected: tuple[str, int, str, str, list[str]]
) -> None:
    ref = parse_freetext(text, key="k")
    families = [p.family for p in ref.authors]
    assert (ref.venue, ref.year, ref.volume, ref.pages, families) == expected
    assert ref.title is None


def test_a_year_alone_after_an_institution_is_not_a_volume() -> None:
    ref = parse_freetext(
        r"J. Gauci, ``Obstacle detection in aerodrome areas through the use of computer "
        r"vision,'' \emph{Cranfield University}, 2010.",
        key="k",
    )
    assert (ref.venue, ref.year, ref.volume) == ("Cranfield University", 2010, None)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "de Riedmatten H Chou C van Enk S Kimble H. Measurement induced entanglement for "
            "excitation stored in remote atomic ensembles. QELS 2006. 2006",
            [("de Riedmatten", "H"), ("Chou", "C"), ("van Enk", "S"), ("Kimble", "H")],
        ),
        (
            "Zacca R Castro FAdS Azevedo R. Riding the digital wave of exercise, health, and "
            "sports training optimization. Sports. 2024",
            [("Zacca", "R"), ("Castro", "FAdS"), ("Azevedo", "R")],
        ),
        (
            "Silva JA Cruz JMd Souza R. Attention-guided intrinsic depth estimation for "
            "unconstrained consumer imaging. Sensors. 2026",
            [("Silva", "JA"), ("Cruz", "JMd"), ("Souza", "R")],
        ),
        (
            "Bays H Tóth PP Kris‐Etherton PM Cochez M d’Amato C. Obesity, adiposity, and "
            "dyslipidemia: a consensus statement. J Clin Lipidol. 2013",
            [("Bays", "H"), ("Tóth", "PP"), ("Kris-Etherton", "PM"), ("Cochez", "M")]
            + [("d’Amato", "C")],
        ),
        (
            "Sanchis García J Palmero da Cruz J Guijarro Rosaleny J Gil Romero J. Enfermedad "
            "quística adventicial de la arteria poplítea: a propósito de un caso. Radiología. "
            "2008;50:532–533",
            [("Sanchis García", "J"), ("Palmero da Cruz", "J"), ("Guijarro Rosaleny", "J")]
            + [("Gil Romero", "J")],
        ),
        (
            "GAUTHIER M BELLEMARE R BELANGER A. ChemInform Abstract: PROGRESS IN THE DEVELOPMENT "
            "OF SOLID-STATE SULFATE DETECTORS FOR SULFUR OXIDES. Chem. Inf.. 1981;12.",
            [("GAUTHIER", "M"), ("BELLEMARE", "R"), ("BELANGER", "A")],
        ),
        (
            "KLOTZ EL DAVIES G. The Wealth of Royalist Peers and Baronets During the Puritan "
            "Revolution. Engl. Hist. Rev.. 1943;LVIII:217–219",
            [("KLOTZ", "EL"), ("DAVIES", "G")],
        ),
        (
            "HISADOME H YOSHIZAKI(OBANA) Y TAMAKI H. Analysis of miki (a traditional beverage in "
            "Amami Island). JOURNAL OF THE BREWING SOCIETY OF JAPAN. 2010;105:167–174",
            [("HISADOME", "H"), ("YOSHIZAKI(OBANA)", "Y"), ("TAMAKI", "H")],
        ),
    ],
    ids=[
        "particles",
        "particle-initial",
        "particle-initial-last",
        "hyphen-and-apostrophe",
        "particle-inside-family",
        "capitals",
        "capitals-two-initials",
        "capitals-former-name",
    ],
)
def test_vancouver_names_without_commas_keep_particles_and_unusual_letters(
    text: str, names: list[tuple[str, str]]
) -> None:
    ref = parse_freetext(text, key="k")
    assert [(p.family, p.given) for p in ref.authors] == names
    assert ref.title is not None and ref.title.split()[0] in text.split(". ")[1]


def test_a_capitalised_title_after_mixed_case_names_is_not_read_as_names() -> None:
    ref = parse_freetext("Smith J Jones K. THE EFFECT OF AN ION ON IT. J Chem. 1990;3:1-2", key="k")
    assert [p.family for p in ref.authors] == ["Smith", "Jones"]
    assert ref.title == "THE EFFECT OF AN ION ON IT"


def test_ocr_et_al_with_a_capital_i_still_truncates() -> None:
    ref = parse_freetext(
        "Shen, Tao, Xiubo Geng, and Binxing Jiao et aI.. 2023. “LexMAE: Lexicon-bottlenecked "
        "pretraining for large-scale retrieval.” ICLR 2023",
        key="k",
    )
    assert ref.authors_truncated
    assert [p.family for p in ref.authors] == ["Shen", "Geng", "Jiao"]


def test_a_page_range_closing_the_title_is_the_locator() -> None:
    ref = parse_freetext(
        "Turing, A., Wilkinson, J. H. (2005). The Turing–Wilkinson lecture series (1946–7)., "
        "459–528.",
        key="k",
    )
    assert (ref.title, ref.pages, ref.year) == (
        "The Turing–Wilkinson lecture series (1946–7)",
        "459-528",
        2005,
    )


def test_chicago_names_and_year_without_the_space_ocr_dropped() -> None:
    ref = parse_freetext("Turing, A..1987. “Intelligence service: Schriften.”", key="k")
    assert (ref.title, ref.year, [p.family for p in ref.authors]) == (
        "Intelligence service: Schriften",
        1987,
        ["Turing"],
    )


def test_a_numbered_title_does_not_end_at_its_number() -> None:
    reference = parse_freetext(
        "Lancaster R, Rix M. 705. CARPINUS FANGIANA. Curtis's Botanical Magazine. 2011",
        key="k",
    )
    assert (reference.title, reference.venue, reference.year) == (
        "705. CARPINUS FANGIANA",
        "Curtis's Botanical Magazine",
        2011,
    )


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "王, 華., 本田, 博., & 野津, 滋. (2001). "
            "マイクロフィン付き水平管内凝縮の修正理論モデル. "
            "Transactions of the Japan Society of Mechanical Engineers. B",
            [("王", "華."), ("本田", "博."), ("野津", "滋.")],
        ),
        (
            "GUI Li-hong, 贵., FENG Jing-yi, 丰. and QIAO Yun-xia, 乔. (2013) `Method of Measuring "
            "Nematic LC Rotational Viscosity', Chin J Liq Cryst Disp, 28, pp. 527–533.",
            [("GUI Li-hong", "贵."), ("FENG Jing-yi", "丰."), ("QIAO Yun-xia", "乔.")],
        ),
        (
            "N.AIdridge, “Toxic oil syndrome (TOS): Experimental studies,” Toxicol Lett, 1996",
            [("AIdridge", "N.")],
        ),
    ],
    ids=["apa-cjk", "harvard-cjk-initials", "ocr-glued-initial"],
)
def test_initials_in_scripts_without_capitals_and_ocr_glued_ones(
    text: str, names: list[tuple[str, str]]
) -> None:
    ref = parse_freetext(text, key="k")
    assert [(p.family, p.given) for p in ref.authors] == names


@pytest.mark.parametrize(
    ("text", "authors", "title", "year", "venue"),
    [
        (  # LNCS (splncs04)
            "He, K., Zhang, X., Ren, S., Sun, J.: Deep residual learning for image "
            "recognition. In: Proceedings of the IEEE CVPR. pp. 770–778 (2016). "
            "https://doi.org/10.1109/CVPR.2016.90",
            ["He", "Zhang", "Ren", "Sun"],
            "Deep residual learning for image recognition",
            2016,
            "Proceedings of the IEEE CVPR",
        ),
        (  # ACM author-date
            "Yann LeCun, Yoshua Bengio, and Geoffrey Hinton. 2015. Deep learning. Nature 521, "
            "7553 (2015), 436–444.",
            ["LeCun", "Bengio", "Hinton"],
            "Deep learning",
            2015,
            "Nature",
        ),
        (  # natbib plainnat
            "Diederik P. Kingma and Jimmy Ba. Adam: A method for stochastic optimization. In "
            "International Conference on Learning Representations, pages 1–15, 2015.",
            ["Kingma", "Ba"],
            "Adam: A method for stochastic optimization",
            2015,
            "International Conference on Learning Representations",
        ),
        (  # plainnat, a first name with an initial
            "Thomas W. Anthony, Tom Eccles, and Yoram Bachrach. Learning to play no-press "
            "diplomacy with best response policy iteration. In Advances in Neural Information "
            "Processing Systems, 2020.",
            ["Anthony", "Eccles", "Bachrach"],
            "Learning to play no-press diplomacy with best response policy iteration",
            2020,
            "Advances in Neural Information Processing Systems",
        ),
        (  # abbrv: an abbreviated venue keeps its words
            "K. He, X. Zhang, S. Ren, and J. Sun. Deep residual learning for image "
            "recognition. In Proc. CVPR, pages 770–778, 2016.",
            ["He", "Zhang", "Ren", "Sun"],
            "Deep residual learning for image recognition",
            2016,
            "Proc. CVPR",
        ),
        (  # APS, proceedings
            "T. N. Kipf and M. Welling, Semi-supervised classification with graph "
            "convolutional networks, in ICLR (2017).",
            ["Kipf", "Welling"],
            "Semi-supervised classification with graph convolutional networks",
            2017,
            "ICLR",
        ),
        (  # APS, journal
            "J. Jumper, R. Evans, and D. Hassabis, Highly accurate protein structure "
            "prediction with AlphaFold, Nature 596, 583 (2021).",
            ["Jumper", "Evans", "Hassabis"],
            "Highly accurate protein structure prediction with AlphaFold",
            2021,
            "Nature",
        ),
    ],
)
def test_the_plain_text_of_common_bst_styles_is_read(
    text: str, authors: list[str], title: str, year: int, venue: str
) -> None:
    ref = parse_freetext(text, key="k")
    assert [p.family for p in ref.authors] == authors
    assert (ref.title, ref.year, ref.venue) == (title, year, venue)


def test_an_ieee_page_range_after_the_year_is_not_the_year() -> None:
    ref = parse_freetext(
        'S. Yan, "A nonparametric approach to matrix completion," in NIPS, 2017, pp. 2049–2060.',
        key="k",
    )
    assert (ref.year, ref.pages) == (2017, "2049-2060")


@pytest.mark.parametrize(
    ("text", "families", "venue", "year"),
    [
        # ACS: names inverted and cut by semicolons, no title; "J." opens the journal.
        (
            "Smith, J. S.; Villalobos, M. C.; Kottemann, C. M. J. Food Sci. 1986",
            ["Smith", "Villalobos", "Kottemann"],
            "J. Food Sci.",
            1986,
        ),
        (
            "Baskar, J. F.; Huang, E. J. Gen. Virol. 1981, 54, 415–420",
            ["Baskar", "Huang"],
            "J. Gen. Virol.",
            1981,
        ),
        ("Bailey, K. T. Womens Stud. Int. Forum 1989", ["Bailey"], "Womens Stud. Int. Forum", 1989),
        # AIP without volume or pages: the abbreviation or short name is the journal.
        (
            "W. Zhu, L. Deng, G. Liang, Virus res. (2015)",
            ["Zhu", "Deng", "Liang"],
            "Virus res.",
            2015,
        ),
        (
            "V. Capraro, A. Lentsch et al., PNAS Nexus (2024).",
            ["Capraro", "Lentsch"],
            "PNAS Nexus",
            2024,
        ),
        (
            "Y. Wen, Y. Guo, Z. Hu, G. Hug, Electr. Power Syst. Res. (2024)",
            ["Wen", "Guo", "Hu", "Hug"],
            "Electr. Power Syst. Res.",
            2024,
        ),
    ],
)
def test_titleless_styles_give_names_venue_and_year(
    text: str, families: list[str], venue: str, year: int
) -> None:
    ref = parse_freetext(text, key="k")
    assert ref.title is None
    assert [p.family for p in ref.authors] == families
    assert (ref.venue, ref.year) == (venue, year)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("A. Author, Is it robust? (2021).", "Is it robust?"),
        (
            "Smith, J.; Doe, A. Deep learning for the automated inspection of widgets. "
            "J. Am. Chem. Soc. 2020, 142, 1–9.",
            None,
        ),
    ],
)
def test_a_title_is_not_read_as_a_titleless_venue(text: str, title: str | None) -> None:
    ref = parse_freetext(text, key="k")
    assert ref.venue is None or "widgets" not in ref.venue
    if title:
        assert ref.title == title


@pytest.mark.parametrize(
    ("text", "venue"),
    [
        (
            "Porat, B.; Friedlander, B. \\emph{IEEE Trans. Acoust. Speech Signal Process.} "
            "\\textbf{1986}, \\emph{34}, 1410--1418.",
            "IEEE Trans. Acoust. Speech Signal Process",
        ),
        ("B. Wang, D. Zhang, Y. Su and H. Zhang, \\emph{Sensors}, 2024.", "Sensors"),
    ],
    ids=["acs-italic-journal", "rsc-italic-journal-alone"],
)
def test_a_titleless_journal_set_in_italics_is_the_venue(text: str, venue: str) -> None:
    ref = parse_freetext(text, key="k")
    assert (ref.title, ref.venue) == (None, venue)


@pytest.mark.parametrize(
    ("text", "authors", "title"),
    [
        (
            "Weiss T. Surgery and Robotics: Where the Field Stands Now. J Robot Surg. 2023;7.",
            [("Weiss", "T")],
            "Surgery and Robotics: Where the Field Stands Now",
        ),
        (
            "Novak P, Gr\u00e9goire\u2010Lef\u00e8vre A. Tumour dormancy in the bone marrow. "
            "Cancer Lett. 2022.",
            [("Novak", "P"), ("Gr\u00e9goire-Lef\u00e8vre", "A")],
            "Tumour dormancy in the bone marrow",
        ),
        (
            "Popescu \u0218T, \u021a\u00eeru\u0219 AM, Ionescu D. Physical activity in older "
            "adults. Rom J Intern Med. 2020;58:3-11.",
            [("Popescu", "\u0218T"), ("\u021a\u00eeru\u0219", "AM"), ("Ionescu", "D")],
            "Physical activity in older adults",
        ),
    ],
    ids=["title-with-and-and-colon", "typographic-hyphen-in-a-name", "romanian-initials"],
)
def test_vancouver_names_of_every_latin_script_and_titles_with_a_colon(
    text: str, authors: list[tuple[str, str]], title: str
) -> None:
    ref = parse_freetext(text, key="k")
    assert [(p.family, p.given) for p in ref.authors] == authors
    assert ref.title == title


def test_names_in_reading_order_after_a_given_name_and_several_initials() -> None:
    ref = parse_freetext(
        "John C. S. Lui and Don Towsley. Fluid models of queues. In SIGMETRICS, 2001.", key="k"
    )
    assert [(p.family, p.given) for p in ref.authors] == [("Lui", "John C. S."), ("Towsley", "Don")]
    assert ref.title == "Fluid models of queues"


@pytest.mark.parametrize(
    ("text", "count", "venue", "locator"),
    [
        (
            "M. de Groot, K. van der Linden, A. Ortiz, Phys. Rev. E 94, 012301 (2016).",
            3,
            "Phys. Rev. E",
            ("94", "012301"),
        ),
        (
            "R. A. Lima, F. C. d. Souza and T. Moura, \\emph{Quim. Nova}, 2011, \\textbf{34}, 62.",
            3,
            "Quim. Nova",
            ("34", "62"),
        ),
        (
            "J. Garcia de Haro, E. Sanz, \\emph{Rev. Esp. Cardiol.}, 2009, \\textbf{62}, 7.",
            2,
            "Rev. Esp. Cardiol",
            ("62", "7"),
        ),
        # A journal abbreviated in lower case, cut short at its last word.
        ("H. Okada, T. Mori, K. Sato et al., J. sleep res. (2019).", 3, "J. sleep res.", None),
        # Someone known by one name among the others.
        (
            "R. Tanaka, Suharto, K. Ito, \\emph{Tetrahedron}, 2016, \\textbf{72}, 5.",
            3,
            "Tetrahedron",
            ("72", "5"),
        ),
    ],
    ids=["particles", "particle-cut-short", "three-word-family", "lower-case-journal", "mononym"],
)
def test_titleless_citations_with_particles_and_lower_case_journals(
    text: str, count: int, venue: str, locator: tuple[str, str] | None
) -> None:
    """Such a citation read as titled made its journal a title nothing matches."""
    ref = parse_freetext(text, key="k")
    assert (ref.title, len(ref.authors), ref.venue) == (None, count, venue)
    assert (ref.volume, ref.pages) == (locator or (None, None))


@pytest.mark.parametrize(
    ("text", "last_name", "title"),
    [
        (
            "Okafor N, Brandt K, Lindqvist J.Sparse Attention for Long Documents. "
            "Trans Assoc Comput Linguist. 2022;10:1-15.",
            ("Lindqvist", "J"),
            "Sparse Attention for Long Documents",
        ),
        (
            "Chen Y, Park S, Adeyemi T, et al.Contrastive Pretraining of Sensor Data. "
            "Proc AAAI Conf Artif Intell. 2023;37:101-9.",
            ("Adeyemi", "T"),
            "Contrastive Pretraining of Sensor Data",
        ),
    ],
    ids=["after-an-initial", "after-et-al"],
)
def test_a_title_ocr_ran_into_the_names_still_begins_the_title(
    text: str, last_name: tuple[str, str], title: str
) -> None:
    ref = parse_freetext(text, key="k")
    assert ((ref.authors[-1].family, ref.authors[-1].given), ref.title) == (last_name, title)


def test_an_ocr_capital_i_inside_a_family_name_is_still_a_person() -> None:
    """ "KoehIer" is OCR's "Koehler", not a company spelt like "DeepMind"."""
    ref = parse_freetext(
        "Novak, Petra, Frederic KoehIer, and Ana Ruiz. 2021. “Sparse Recovery Bounds.” "
        "Ann. Stat. 49: 1–20.",
        key="k",
    )
    assert [(p.family, p.is_organisation) for p in ref.authors] == [
        ("Novak", False),
        ("KoehIer", False),
        ("Ruiz", False),
    ]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            "Moreau C. Sex and Gender Differences in Drug Metabolism. Handb exp pharmacol. 2014.",
            "Sex and Gender Differences in Drug Metabolism",
        ),
        (
            "Osei K. Trade and Aid in the Age of Austerity. Rethinking Development. 2016:12-30.",
            "Trade and Aid in the Age of Austerity",
        ),
    ],
)
def test_one_vancouver_author_then_a_title_with_and_is_not_names_in_reading_order(
    text: str, title: str
) -> None:
    """ "Kingma and Jimmy Ba" goes on with names; "Sex and Gender Differences in …" has
    words no name has."""
    ref = parse_freetext(text, key="k")
    assert (len(ref.authors), ref.title) == (1, title)


def test_a_citation_of_names_and_a_year_alone_is_titleless() -> None:
    """A work without a venue, cited in a title-less style: nothing to take for a title."""
    ref = parse_freetext("Q. Sun and W. Zhou, 2020.", key="k")
    assert (ref.title, ref.venue, ref.year, len(ref.authors)) == (None, None, 2020, 2)


def test_initials_ai_in_a_vancouver_list_are_a_persons_not_a_company() -> None:
    """ "Meta AI" alone may be a group; "Rahman AI, Okafor SC" lists two people."""
    ref = parse_freetext(
        "Rahman AI, Okafor SC. Conclusions and Future Research. Electrochemical Sensing. "
        "2016;4:143-148.",
        key="k",
    )
    assert [(p.family, p.given, p.is_organisation) for p in ref.authors] == [
        ("Rahman", "AI", False),
        ("Okafor", "SC", False),
    ]
    assert ref.title == "Conclusions and Future Research"
