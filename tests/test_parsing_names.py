"""BibTeX name lists and LaTeX decoding."""

from __future__ import annotations

import pytest

from refaudit.names import display_name_to_person, parse_names, parse_person
from refaudit.parsing import latex_to_text


@pytest.mark.parametrize(
    ("value", "family", "given", "particle", "suffix"),
    [
        ("van der Waals, Johannes Diderik", "Waals", "Johannes Diderik", "van der", ""),
        ("Johannes Diderik van der Waals", "Waals", "Johannes Diderik", "van der", ""),
        ("de la Fontaine, Jean", "Fontaine", "Jean", "de la", ""),
        ("Smith, Jr., John", "Smith", "John", "", "Jr."),
        ("Martin Luther King, Jr.", "King", "Martin Luther", "", "Jr."),
        (r"M{\"u}ller, J{\"o}rg", "Müller", "Jörg", "", ""),
        (r"Erd{\H{o}}s, P{\'a}l", "Erdős", "Pál", "", ""),
        ("张三", "张三", "", "", ""),
        ("Ng, Andrew Y.", "Ng", "Andrew Y.", "", ""),
    ],
)
def test_single_names_split_like_bibtex(
    value: str, family: str, given: str, particle: str, suffix: str
) -> None:
    (person,), truncated = parse_names(value)
    assert (person.family, person.given, person.particle, person.suffix) == (
        family,
        given,
        particle,
        suffix,
    )
    assert not truncated and not person.is_organisation


def test_braced_name_is_one_organisation() -> None:
    people, _ = parse_names("{World Health Organization} and {{European Commission}}")
    assert [(p.family, p.is_organisation) for p in people] == [
        ("World Health Organization", True),
        ("European Commission", True),
    ]


def test_and_inside_braces_does_not_split() -> None:
    people, _ = parse_names("{Barnes and Noble} and Doe, Jane")
    assert [p.family for p in people] == ["Barnes and Noble", "Doe"]


@pytest.mark.parametrize("tail", ["and others", "and Others", "et al.", "and et al"])
def test_truncation_markers_set_the_flag(tail: str) -> None:
    people, truncated = parse_names(f"Doe, Jane and Roe, Richard {tail}")
    assert [p.family for p in people] == ["Doe", "Roe"] and truncated


def test_empty_author_list() -> None:
    assert parse_names("  ") == ([], False)


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"{$\alpha$-divergence} for {B}ayesian nets", "α-divergence for Bayesian nets"),
        (r"Schr\"odinger's {\'E}cole \c{c}a \v{S}", "Schrödinger's École ça Š"),
        (r"Pages 10--20 and \emph{italic} \textbf{bold}", "Pages 10–20 and italic bold"),
        (r"R\&D: 50% of \url{https://x.org/a_b}", "R&D: 50% of https://x.org/a_b"),
        (r"The {\TeX}book and {\LaTeX}", "The TeXbook and LaTeX"),
        ("plain  text\nover lines", "plain text over lines"),
        (r"\href{https://x.org}{linked text} and \mbox{kept}", "linked text and kept"),
        (
            r"\href{https://doi.org/10.1/x}{\emph{Phys. Rev.} \textbf{13}} (1964)",
            "Phys. Rev. 13 (1964)",
        ),
    ],
)
def test_latex_to_text(latex: str, text: str) -> None:
    assert latex_to_text(latex) == text


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"Proen{\c{c}}a and Kantarc{\i}o{\u{g}}lu", "Proença and Kantarcıoğlu"),
        (r"{\.I}. Ba{\c{s}}er, D{\'{\i}}az, K{\'\i}rk", "İ. Başer, Díaz, Kírk"),
        (r"{D{\'i}az Romero} and Gro{\ss} e", "Díaz Romero and Groß e"),
        (r"{{\v S}vanda} {\L}{\'o}d{\'z} {\aa}{\O}", "Švanda Łódź åØ"),
        (r"Banking \& Finance, 100\% {III.} Teil", "Banking & Finance, 100% III. Teil"),
        (r"M\"{u}ller \'Etienne {\H{o}} {\~n} {\textit{a}}b", "Müller Étienne ő ñ ab"),
        (r"{\'e}---and {\'e} $x$", "é—and é x"),
    ],
)
def test_accented_letters_read_alone_read_as_in_their_text(latex: str, text: str) -> None:
    """Letters like {\\'e} between plain words are converted one at a time; where anything
    else is LaTeX (a dash, math), the whole string goes to pylatexenc as before."""
    assert latex_to_text(latex) == text


@pytest.mark.parametrize(
    ("bibtex", "display"),
    [
        ("Maria dos Santos", "Maria dos Santos"),
        ("dos Santos, Maria", "dos Santos, Maria"),
        ("Johannes van der Waals", "Johannes van der Waals"),
        ("Ahmed bin Salem", "Ahmed bin Salem"),
    ],
)
def test_a_name_parses_the_same_from_a_bib_file_and_from_an_api(bibtex: str, display: str) -> None:
    assert parse_person(bibtex) == display_name_to_person(display)
