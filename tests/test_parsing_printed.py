"""Reference lists as a PDF prints them: plain text in which only the style's punctuation
says where the names, the title and the venue end (LNCS, ACM, natbib, APS)."""

from __future__ import annotations

import pytest

from refaudit.evidence import Evidence
from refaudit.identifiers import find_dois
from refaudit.match import compare_titles
from refaudit.models import Person, Verdict, Work
from refaudit.parsing import parse_freetext
from refaudit.parsing.pdflist import _joined, _Line, reference_list
from refaudit.parsing.pdftext import TextLine
from refaudit.verify import decide


@pytest.mark.parametrize(
    ("text", "authors", "title"),
    [
        (  # a Russian two-letter initial
            "Sergei A. Ivanov, B. Yu. Petrov, and Kenji Sato. Spin waves in layered "
            "antiferromagnets. Physical Review B, 2004.",
            ["Ivanov", "Petrov", "Sato"],
            "Spin waves in layered antiferromagnets",
        ),
        (  # an abbreviated first name, ACM author-date
            "Md. Rafiqul Hasan and Jun Ito. 2011. Thermal stability of layered oxides. "
            "Journal of Solid State Chemistry 184, 2 (2011), 301–309.",
            ["Hasan", "Ito"],
            "Thermal stability of layered oxides",
        ),
        (  # a given name printed with a stray full stop
            "Laura M. Keller, Haoran. Li, and Ana Costa. Boron clusters revisited. "
            "Inorganic Chemistry, 12(3):45–51, 1999.",
            ["Keller", "Li", "Costa"],
            "Boron clusters revisited",
        ),
        (  # hyphenated initials close the names
            "K.-H. Lee, M. Park, and T.-Y. Chen. Contrastive pretraining for tabular data. "
            "In ICLR, 2020.",
            ["Lee", "Park", "Chen"],
            "Contrastive pretraining for tabular data",
        ),
        (  # one name in reading order, closed by "et al."
            "Maria L. Gonzalez et al. Fair ranking under uncertainty. In International "
            "Conference on Learning Representations, 2022.",
            ["Gonzalez"],
            "Fair ranking under uncertainty",
        ),
        (  # APS: "et al." after the names is no title
            "R. Okafor, J. Lund, H. Sato, et al. Gradient noise in large-batch training. In "
            "International Conference on Learning Representations, 2023.",
            ["Okafor", "Lund", "Sato"],
            "Gradient noise in large-batch training",
        ),
        (  # APS: a family name with an elided particle
            "F. d’Angelo, D. Morel, and C. H. Lin, Monotone explanations for tree ensembles, "
            "in ICML (2021).",
            ["d’Angelo", "Morel", "Lin"],
            "Monotone explanations for tree ensembles",
        ),
    ],
)
def test_full_stops_inside_the_names_do_not_end_them(
    text: str, authors: list[str], title: str
) -> None:
    ref = parse_freetext(text, key="k")
    assert [p.family for p in ref.authors] == authors
    assert ref.title == title


@pytest.mark.parametrize(
    ("text", "venue"),
    [
        (
            "A. Weiss and P. Roy. Calcium signalling in mitochondria. Biochimica et Biophysica "
            "Acta (BBA) - Molecular Cell Research, 1863(4):611–620, 2016.",
            "Biochimica et Biophysica Acta (BBA) - Molecular Cell Research",
        ),
        (
            "Kim Tran and Li Wu. A flexible strain sensor. Sensors (Basel), 12(3):1–9, 2012.",
            "Sensors (Basel)",
        ),
        (  # a bracket with digits is the locator, not the name
            "Jan Novak. 2019. Soil carbon in spruce forests. Forest Ecology (2019), 1–12.",
            "Forest Ecology",
        ),
    ],
)
def test_a_bracket_of_letters_is_part_of_the_venue(text: str, venue: str) -> None:
    assert parse_freetext(text, key="k").venue == venue


@pytest.mark.parametrize(
    ("text", "title", "doi"),
    [
        (  # APS, a preprint: names, title and year only
            "J. Doe and R.-M. Roe, Sparse probing of transformer circuits (2022).",
            "Sparse probing of transformer circuits",
            None,
        ),
        (  # APS, the preprint's DOI between title and year
            "J. Doe and R. Roe, Sparse probing of transformer circuits "
            "10.48550/arXiv.2201.01234 (2022).",
            "Sparse probing of transformer circuits",
            "10.48550/arxiv.2201.01234",
        ),
        (  # LNCS, no venue, DOI and URL run together after a comma
            "Doe, J., Roe, R.: Sparse probing of transformer circuits (2022). "
            "https://doi.org/10.48550/arXiv.2201.01234,http://arxiv.org/abs/2201.01234",
            "Sparse probing of transformer circuits",
            "10.48550/arxiv.2201.01234",
        ),
        (  # natbib, a preprint: names, title and year only
            "Wei Chen. Audio-Visual grounding with Cross-Modal attention, 2023a.",
            "Audio-Visual grounding with Cross-Modal attention",
            None,
        ),
        (  # a title opening with an abbreviation (a book review)
            "P. de Vries. Chr. Jansen, Willem Barentsz. Een leven. Tijdschrift voor "
            "Geschiedenis, 120(2):301, 2007.",
            "Chr. Jansen, Willem Barentsz",
            None,
        ),
        (  # LNCS, names the style could not invert
            "Anna Berg, Tom Lind, K.L.: Probing sparse circuits in vision transformers. "
            "In: ICML (2024)",
            "Probing sparse circuits in vision transformers",
            None,
        ),
    ],
)
def test_a_title_without_a_venue_or_separator_is_still_the_title(
    text: str, title: str, doi: str | None
) -> None:
    ref = parse_freetext(text, key="k")
    assert (ref.title, ref.doi) == (title, doi)
    assert ref.year is not None and ref.authors


def test_a_report_by_a_hundred_authors_keeps_its_names_and_title() -> None:
    given = ["Ana", "Bo", "Carla", "Dev", "Emil", "Fatima", "Goran", "Hana", "Ivo", "Jun"]
    family = ["Berg", "Costa", "Dahl", "Endo", "Fox", "Gill", "Hu", "Ito", "Jones"]
    names = ", ".join(f"{g} {f}" for g in given for f in family)
    ref = parse_freetext(
        f"{names}, and Ada Last. International safety report. Tech. rep., 2025.", key="k"
    )
    assert len(ref.authors) == 91 and ref.authors[-1].family == "Last"
    assert ref.title == "International safety report"


def test_a_physics_citation_without_title_still_has_its_venue() -> None:
    ref = parse_freetext(
        "A. Einstein, B. Podolsky, and N. Rosen, Phys. Rev. 47, 777 (1935).", key="k"
    )
    assert (ref.title, ref.venue, ref.volume) == (None, "Phys. Rev.", "47")


def test_a_compound_that_lost_its_hyphen_at_a_line_end_changes_no_word() -> None:
    found = "NeRF-W: Shape-conditioned Radiance Fields in the Wild"
    assert compare_titles("NeRF-W: Shapeconditioned radiance fields in the wild", found).kind in (
        "exact",
        "minor",
    )
    # A slip elsewhere stays a slip, not another work.
    slip = compare_titles("NeRF-W: Shapeconditioned radiace fields in the wild", found)
    assert (slip.kind, slip.changed_words) == ("typo", (("radiace", "radiance"),))
    assert compare_titles("Shapeconditioned point clouds in the wild", found).kind == "different"


def test_a_link_run_on_after_a_comma_is_not_part_of_the_doi() -> None:
    assert find_dois("https://doi.org/10.1007/978-3-030-1,http://example.org/x") == [
        "10.1007/978-3-030-1"
    ]


def _lines(*texts: str) -> list[_Line]:
    return [_Line(1, 0, 0.0, 300.0, 700.0 - 10 * n, 9.0, t) for n, t in enumerate(texts)]


def test_a_hyphen_tex_would_not_break_at_is_kept() -> None:
    # TeX breaks a word two letters from its start at the earliest, and a word holding a
    # hyphen only there: these hyphens are the compound's own.
    assert "goodness-of-fit test" in _joined(_lines("a goodness-", "of-fit test"), set())
    assert "latent k-polytope" in _joined(_lines("in latent k-", "polytope."), set())
    assert "recognition" in _joined(_lines("for image recog-", "nition."), set())


def test_a_doi_cut_after_a_bracket_is_whole_again() -> None:
    assert _joined(_lines("1989. doi: 10.1016/0010-0277(89)", "90031-0."), set()).endswith(
        "doi: 10.1016/0010-0277(89)90031-0."
    )


def test_pieces_of_one_printed_line_a_fraction_of_a_point_apart_keep_their_order() -> None:
    def line(x0: float, x1: float, y: float, text: str) -> TextLine:
        return TextLine(1, x0, x1, y, 10.0, text, 612.0, 792.0)

    # The italic journal name sits 0.3 pt above the roman title it follows on the line.
    lines = [
        line(72, 160, 720, "References"),
        line(72, 540, 700, "Ana Costa and Jun Ito. Sparse coding of natural images: a"),
        line(84, 250, 688, "literature review."),
        line(262, 420, 688.3, "Journal of Vision, 2020."),
        line(72, 540, 670, "Kim Tran. Flexible strain sensors from printed silver. Sensors,"),
        line(84, 200, 658, "12(3):1–9, 2012."),
    ]
    printed = [reference.text for reference in reference_list(lines)]
    assert printed[0] == (
        "Ana Costa and Jun Ito. Sparse coding of natural images: a literature review. "
        "Journal of Vision, 2020."
    )
    assert len(printed) == 2


@pytest.mark.parametrize(
    "text",
    [
        "J. Park and R. Osei, “A mean-field perspective of gradient flow in deep residual "
        "models,” in ICLR. OpenReview.net, 2022.",
        "Jin Park and Rita Osei. A mean-field perspective of gradient flow in deep residual "
        "models. In ICLR. OpenReview.net, 2022.",
    ],
)
def test_a_title_whose_last_word_was_changed_is_not_read_as_ending_early(text: str) -> None:
    work = Work(
        source="dblp",
        title="A Mean-Field Perspective of Gradient Flow in Deep Residual Networks",
        authors=[Person("Park", "Jin"), Person("Osei", "Rita")],
        year=2022,
        venue="10th International Conference on Learning Representations, ICLR 2022",
        venue_short="ICLR",
    )
    result = decide(Evidence(reference=parse_freetext(text, key="k"), candidates=[work]))
    errors = {f.code for f in result.findings if f.severity == "error"}
    assert (result.verdict, errors) == (Verdict.MISMATCH, {"title-mismatch"})
