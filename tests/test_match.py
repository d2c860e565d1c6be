"""Field comparisons: what counts as the same title, author list, year, venue and pages."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from refaudit.match import (
    candidate_score,
    compare_authors,
    compare_pages,
    compare_titles,
    compare_venues,
    compare_volume,
    compare_years,
    is_conference_venue,
    is_preprint_venue,
    is_same_work,
    normalize_text,
    title_tokens,
)
from refaudit.models import Person, Reference, Work
from refaudit.text import latex_to_text


def people(*names: str) -> list[Person]:
    """ "Family, Given" strings (particle before a "|") → Persons, like the parser makes."""
    persons = []
    for name in names:
        particle, _, rest = name.rpartition("|")
        family, _, given = rest.partition(",")
        persons.append(Person(family=family.strip(), given=given.strip(), particle=particle))
    return persons


# --- normalisation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Schrödinger’s Cat", "schrodingers cat"),
        ("Straße und Ørsted, Łódź, Æsir", "strasse und orsted lodz aesir"),
        ("Pre-training — fine-tuning/evaluation", "pre training fine tuning evaluation"),
        ("Cats &amp; Dogs", "cats and dogs"),
        ("Cats \\& Dogs", "cats and dogs"),
        ("The <i>E. coli</i> CO<sub>2</sub> budget", "the e coli co2 budget"),
        ('Sch\\"{o}dinger and Erd\\H{o}s', "schodinger and erdos"),
        ("{BERT}: {P}re-training", "bert pre training"),
        ("\\emph{Deep} learning with $\\alpha$-divergence", "deep learning with alpha divergence"),
        ("360$^{\\circ}$ images and 360$^\u2218$ images", "360 images and 360 images"),
        ("in $\\mathbb{R}^N$ versus in ℝ^N", "in rn versus in rn"),
        (
            "Evidence for the<mml:math><mml:mn>2</mml:mn><mml:mi>π</mml:mi></mml:math>Decay",
            "evidence for the 2 pi decay",
        ),
        ("  spaced \n  out  ", "spaced out"),
        ("", ""),
    ],
    ids=[
        "accents",
        "special-letters",
        "dashes-slashes",
        "html-entity",
        "latex-ampersand",
        "html-tags",
        "latex-accents",
        "braces",
        "latex-commands-greek",
        "degree-symbol",
        "blackboard-bold",
        "mathml",
        "whitespace",
        "empty",
    ],
)
def test_normalize_text_gives_one_spelling_per_title(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


def test_title_tokens_are_the_normalised_words() -> None:
    assert title_tokens("Attention Is All You Need!") == ["attention", "is", "all", "you", "need"]


# --- titles ------------------------------------------------------------------------

TITLE_CASES = [
    # (cited, found, found_subtitle, kind)
    (
        "Deep Residual Learning for Image Recognition",
        "Deep residual learning for image recognition",
        None,
        "exact",
    ),
    (
        "Deep Residual Learning for Image Recogniton",
        "Deep Residual Learning for Image Recognition",
        None,
        "typo",
    ),
    (
        "Deep Residual Learning for Image Classification",
        "Deep Residual Learning for Image Recognition",
        None,
        "different",
    ),
    (
        "Neural Sparse Representation for Image Resotration",
        "Neural Sparse Representation for Image Restoration",
        None,
        "typo",
    ),
    (
        "On the Saturation Effect of Kernel Ridge Regrsesion",
        "On the Saturation Effect of Kernel Ridge Regression",
        None,
        "typo",
    ),
    (
        "Convolutional Netwroks for Biomedical Image Segmentation",
        "Convolutional Networks for Biomedical Image Segmentation",
        None,
        "typo",
    ),
    (
        "A Kernel Perspective of Skip Connections in Convolutional Models",
        "A Kernel Perspective of Skip Connections in Convolutional Networks",
        None,
        "different",
    ),
    (
        "Mixing Predictions towards Online Metric Algorithms",
        "Mixing Predictions for Online Metric Algorithms",
        None,
        "different",
    ),
    (
        "Self-Consistency Improves Chain of Thought Inference in Language Models",
        "Self-Consistency Improves Chain of Thought Reasoning in Language Models",
        None,
        "different",
    ),
    (
        "Revisiting Locally Supervised Learning: Neural ODEs and Their Numerical Solution",
        "Revisiting Locally Supervised Learning: An Alternative to End-to-End Training",
        None,
        "different",
    ),
    (
        "Learning Transferable Visual Models From Natural Language Supervision",
        "Learning Transferable Visual Models From Natural Language",
        None,
        "different",
    ),
    (
        "Learning Deep Features in Regression",
        "Learning Deep Features in Instrumental Variable Regression",
        None,
        "different",
    ),
    (
        "Colour constancy in the visual cortex of the macaque",
        "Color constancy in visual cortex of the macaque",
        None,
        "word_form",
    ),
    (
        "Modelling the behaviour of three-dimensional optimisers",
        "Modeling the behavior of 3-dimensional optimizers",
        None,
        "minor",
    ),
    (
        "Graph neural network for molecule generation",
        "Graph Neural Networks for Molecule Generation",
        None,
        "word_form",
    ),
    ("Pretraining transformers", "Pre-training transformers", None, "minor"),
    (
        "Augmenting Online Algorithms with ε-Accurate Predictions",
        "Augmenting Online Algorithms with $varepsilon$-Accurate Predictions",
        None,
        "minor",
    ),
    ("BERT", "BERT: Pre-training of Deep Bidirectional Transformers", None, "different"),
    (
        "Scaling laws for neural language models",
        "Scaling laws for neural language models: an empirical study",
        None,
        "subtitle",
    ),
    (
        "Proteomics of the human brain: a quantitative atlas",
        "Proteomics of the human brain",
        None,
        "subtitle",
    ),
    (
        "Surface ices and the atmospheric composition of Pluto",
        "Surface ices and the atmospheric composition of Pluto",
        "New data from 1992",
        "exact",
    ),
    (
        "Surface ices and the atmospheric composition of Pluto: new data from 1992",
        "Surface ices and the atmospheric composition of Pluto",
        "New data from 1992",
        "exact",
    ),
    ("Wellbeing in later life - a longitudinal view", "Wellbeing in later life", None, "subtitle"),
    (
        "Intracranial V. cholerae sialidase protects against excitotoxic neurodegeneration",
        "Intracranial V. cholerae Sialidase Protects against Excitotoxic Neurodegeneration",
        None,
        "exact",
    ),
    (
        "Predicting deleterious amino acid substitutions in human proteins with",
        "Predicting deleterious amino acid substitutions in human proteins with sequence data",
        None,
        "truncated",
    ),
    (
        "Genome sequence of",
        "Genome sequence of the malaria parasite Plasmodium falciparum",
        None,
        "different",
    ),
    ("Deep Learning", "Deep Leaning", None, "different"),
    ("A 3D model of the heart", "A 2D model of the heart", None, "different"),
    (
        "Parallel implementation of algorithms towards finding connected components in graphs",
        "Parallel implementation of algorithms for finding connected components in graphs",
        None,
        "different",
    ),
    (
        "Comment réduire les effets négatifs du travail de nuit sur la santé?",
        "Comment Reduire Les Effets Negatifs Du Travail De Nuit Sur La Sante",
        None,
        "exact",
    ),
    (
        "Die Entstehung der Kontinente und Ozeane",
        "Die Entstehung der Kontinente und Ozeane",
        None,
        "exact",
    ),
]


@pytest.mark.parametrize(
    ("cited", "found", "found_subtitle", "kind"),
    TITLE_CASES,
    ids=[
        "case-only",
        "typo-deletion",
        "word-replaced",
        "typo-transposition",
        "typo-double",
        "typo-netwroks",
        "near-miss-models",
        "near-miss-preposition",
        "near-miss-reasoning",
        "chimeric",
        "word-added-at-end",
        "words-dropped-in-middle",
        "article-dropped",
        "british-numbers",
        "plural",
        "hyphenation",
        "varepsilon",
        "short-title-needs-more",
        "found-has-subtitle",
        "cited-has-subtitle",
        "separate-subtitle-field",
        "with-separate-subtitle",
        "dash-subtitle",
        "abbreviation-dot-in-title",
        "truncated",
        "short-prefix-not-truncated",
        "short-title-no-typo",
        "digit-changed",
        "towards-for",
        "french-accents",
        "german",
    ],
)
def test_compare_titles_classifies_the_difference(
    cited: str, found: str, found_subtitle: str | None, kind: str
) -> None:
    assert compare_titles(cited, found, found_subtitle).kind == kind


def test_changed_words_name_the_replaced_word() -> None:
    result = compare_titles(
        "Deep Residual Learning for Image Classification",
        "Deep Residual Learning for Image Recognition",
    )
    assert result.changed_words == (("classification", "recognition"),)


def test_typo_reports_the_misspelt_word_and_scores_high() -> None:
    result = compare_titles("Attenton Is All You Need", "Attention Is All You Need")
    assert result.kind == "typo"
    assert result.changed_words == (("attenton", "attention"),)
    assert result.score > 0.9


def test_different_title_scores_below_accepted_ones() -> None:
    exact = compare_titles("Graph Attention Networks", "Graph Attention Networks")
    chimeric = compare_titles(
        "Graph Attention Networks for Protein Folding", "Graph Attention Networks"
    )
    unrelated = compare_titles("Graph Attention Networks", "Wind power and grid stability")
    assert exact.score == 1.0
    assert unrelated.score < 0.5 < chimeric.score < exact.score


def test_empty_title_is_different() -> None:
    assert compare_titles("", "Something").kind == "different"


# --- authors -----------------------------------------------------------------------

AUTHOR_CASES = [
    # (cited, found, truncated, kind)
    (
        people("Vaswani, Ashish", "Shazeer, Noam"),
        people("Vaswani, Ashish", "Shazeer, Noam"),
        False,
        "exact",
    ),
    (people("Vaswani, A.", "Shazeer, N."), people("Vaswani, Ashish", "Shazeer, Noam"), False, "ok"),
    (people("Sartre, J.-P."), people("Sartre, Jean-Paul"), False, "ok"),
    (
        people("van der|Maaten, Laurens", "Hinton, Geoffrey"),
        people("Maaten, Laurens van der", "Hinton, Geoffrey"),
        False,
        "ok",
    ),
    (
        people("Van Der Maaten, L.", "Hinton, G."),
        people("van der|Maaten, Laurens", "Hinton, Geoffrey"),
        False,
        "ok",
    ),
    (people("de|Freitas, Nando"), people("Freitas, Nando de"), False, "ok"),
    (
        people("Le Cun, Yann", "Bengio, Yoshua"),
        people("LeCun, Yann", "Bengio, Yoshua"),
        False,
        "ok",
    ),
    (people("Müller, Klaus-Robert"), people("Muller, K.-R."), False, "ok"),
    (
        people("Wang, Xiaogang", "Tang, Xiaoou"),
        people("Xiaogang, Wang", "Xiaoou, Tang"),
        False,
        "ok",
    ),
    (people("Zhang, Wei"), [Person(family="", given="Wei Zhang")], False, "exact"),
    (
        [Person(family="ATLAS Collaboration", is_organisation=True)],
        [Person(family="The ATLAS Collaboration", is_organisation=True)],
        False,
        "ok",
    ),
    (
        people("Guo, Wan-Qian"),
        people("Guo, Wan-Qian", "Ren, Nan-Qi", "Wang, Xiang-Jing"),
        True,
        "truncated_ok",
    ),
    (
        people("Shazeer, Noam", "Vaswani, Ashish"),
        people("Vaswani, Ashish", "Shazeer, Noam"),
        False,
        "minor",
    ),
    (
        people("Schmidthuber, Jürgen", "Hochreiter, Sepp"),
        people("Schmidhuber, Jürgen", "Hochreiter, Sepp"),
        False,
        "minor",
    ),
    (
        people("Xu, Liyuan", "Chen, Yutian"),
        people(
            "Xu, Liyuan",
            "Chen, Yutian",
            "Srinivasan, Siddarth",
            "de|Freitas, Nando",
            "Doucet, Arnaud",
            "Gretton, Arthur",
        ),
        False,
        "different",
    ),
    (
        people(*[f"Author{n}, A." for n in "abcde"]),
        people(*[f"Author{n}, A." for n in "abcdefghijklmnop"]),
        False,
        "minor",
    ),
    (
        people("Kim, Hye-youn", "Jung, Inchan", "Lim, Youn-kyung"),
        people("Ng, Pauline C.", "Henikoff, Steven"),
        False,
        "different",
    ),
    (
        people("Mendes, C.", "Lastname, F.", "Martin, L."),
        people("Mendes, C.", "Martin, L."),
        False,
        "different",
    ),
    (people("Doe, John"), people("Smith, John"), False, "different"),
    (people("Bengio, Yoshua", "Hinton, Geoffrey"), people("Bengio, Yoshua"), False, "different"),
    (people("Vaswani, Ashish"), [], False, "unknown"),
]


@pytest.mark.parametrize(
    ("cited", "found", "truncated", "kind"),
    AUTHOR_CASES,
    ids=[
        "identical",
        "initials",
        "hyphenated-initials",
        "particle-in-field-or-given",
        "particle-capitalised",
        "particle-de",
        "le-cun-spacing",
        "umlaut-and-initials",
        "chinese-family-given-swapped",
        "whole-name-in-given",
        "organisation",
        "et-al-prefix",
        "order-changed",
        "misspelt-family",
        "partial-list-no-et-al",
        "long-list-first-authors",
        "swapped-authors",
        "placeholder",
        "john-doe",
        "added-author",
        "found-has-no-authors",
    ],
)
def test_compare_authors_classifies_the_difference(
    cited: list[Person], found: list[Person], truncated: bool, kind: str
) -> None:
    assert compare_authors(cited, found, cited_truncated=truncated).kind == kind


@pytest.mark.parametrize(
    ("cited", "found", "truncated", "expected"),
    [
        (
            people("Xue, Zhenghai", "Peng, Zhenghao"),
            people("Xue, Zhenghai", "Peng, Zhenghao", "Li, Quanyi", "Liu, Yunhan", "Zhou, Bolei"),
            False,
            {
                "kind": "different",
                "missing": ("Li", "Liu", "Zhou"),
                "extra": (),
                "first_author_ok": True,
            },
        ),
        (
            people("Deng, Xiang", "Xiao, Yun"),
            people("Halpern, Daniel", "Kehne, Gregory"),
            False,
            {
                "extra": ("Deng", "Xiao"),
                "missing": ("Halpern", "Kehne"),
                "matched": 0,
                "first_author_ok": False,
            },
        ),
        (
            people("Hochreiter, Sepp", "Schmidthuber, Jürgen"),
            people("Hochreiter, Sepp", "Schmidhuber, Jürgen"),
            False,
            {"misspelled": (("Schmidthuber", "Schmidhuber"),), "matched": 2},
        ),
        (
            people("Kim, Youngdong", "Kim, Byungjai"),
            people("Kim, Byungjai", "Kim, Youngdong"),
            False,
            {"kind": "minor", "order_changed": True},
        ),
        (
            people("Guo, W."),
            people("Guo, Wan-Qian", "Ren, Nan-Qi"),
            True,
            {"missing": (), "score": 1.0},
        ),
        (
            people("Doe, Mary-Ann", "Smith, J."),
            people("Doe, Mary-Ann", "Smith, John"),
            False,
            {"placeholder": False, "kind": "ok"},
        ),
    ],
    ids=[
        "partial-list-names-the-missing",
        "swapped-are-extra-and-missing",
        "misspelt-family-paired-with-the-right-name",
        "same-family-pair-by-initials",
        "truncated-list-reports-no-missing",
        "real-doe-and-smith-are-not-placeholders",
    ],
)
def test_compare_authors_reports_what_differs(
    cited: list[Person], found: list[Person], truncated: bool, expected: dict[str, object]
) -> None:
    result = compare_authors(cited, found, cited_truncated=truncated)
    assert {name: getattr(result, name) for name in expected} == expected


@pytest.mark.parametrize(
    "placeholder",
    ["Doe, Jane", "Author, A.", "Anonymous", "Lastname, Firstname", "Last, First"],
)
def test_placeholder_names_are_flagged(placeholder: str) -> None:
    result = compare_authors(people("Smith, J.", placeholder), people("Smith, John", "Jones, K."))
    assert result.placeholder
    assert result.kind == "different"


# --- years -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cited", "found", "other_years", "kind", "delta"),
    [
        (2017, 2017, (), "exact", 0),
        (2018, 2017, (), "adjacent", 1),
        (2016, 2017, (), "adjacent", -1),
        (2021, 2017, (), "different", 4),
        (2015, 2017, (2015,), "adjacent", -2),
        (None, 2017, (), "unknown", None),
        (2017, None, (), "unknown", None),
    ],
    ids=[
        "same",
        "print-after-online",
        "preprint-year",
        "wrong",
        "other-source-year",
        "not-cited",
        "not-found",
    ],
)
def test_compare_years(
    cited: int | None,
    found: int | None,
    other_years: tuple[int, ...],
    kind: str,
    delta: int | None,
) -> None:
    result = compare_years(cited, found, other_years=other_years)
    assert (result.kind, result.delta) == (kind, delta)


# --- venues ------------------------------------------------------------------------

VENUE_CASES = [
    # (cited, found, found_short, kind)
    ("Nature", "Nature", None, "same"),
    ("The Lancet", "Lancet", None, "same"),
    ("J. Mach. Learn. Res.", "Journal of Machine Learning Research", None, "abbreviation"),
    ("Phys. Rev. Lett.", "Physical Review Letters", None, "abbreviation"),
    (
        "Proc. Natl. Acad. Sci. U.S.A.",
        "Proceedings of the National Academy of Sciences",
        None,
        "abbreviation",
    ),
    ("Int J Hydrogen Energy", "International Journal of Hydrogen Energy", None, "same"),
    (
        "IEEE Trans. Pattern Anal. Mach. Intell.",
        "IEEE Transactions on Pattern Analysis and Machine Intelligence",
        None,
        "abbreviation",
    ),
    ("Sci. & Technol. Stud.", "Science &amp; Technology Studies", None, "abbreviation"),
    ("Physical Review Letters", "Physical Review Letters", "Phys. Rev. Lett.", "same"),
    (
        "ICML",
        "Proceedings of the 38th International Conference on Machine Learning",
        None,
        "acronym",
    ),
    (
        "International Conference on Machine Learning",
        "Proceedings of the 38th International Conference on Machine Learning",
        None,
        "same",
    ),
    (
        "CVPR",
        "2022 IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)",
        None,
        "acronym",
    ),
    (
        "NIPS",
        "Advances in Neural Information Processing Systems 33 (NeurIPS 2020)",
        None,
        "acronym",
    ),
    (
        "Proc. of ICLR",
        "9th International Conference on Learning Representations, ICLR 2021",
        None,
        "acronym",
    ),
    (
        "Advances in Neural Information Processing Systems",
        "Advances in Neural Information Processing Systems 33 (NeurIPS 2020)",
        None,
        "same",
    ),
    (
        "PNAS",
        "Proceedings of the National Academy of Sciences of the United States of America",
        None,
        "acronym",
    ),
    ("arXiv preprint arXiv:1706.03762", "arXiv (Cornell University)", None, "preprint"),
    ("CoRR", "Advances in Neural Information Processing Systems", None, "preprint"),
    (
        "Physical Review D",
        "Physical Review D: Particles, Fields, Gravitation, and Cosmology",
        None,
        "same",
    ),
    ("Bioinformatics", "Bioinformatics (Oxford, England)", None, "same"),
    ("Lecture Notes in Computer Science", "Computer Vision - ECCV 2018", None, "compatible"),
    ("Nature", "Nature Communications", None, "different"),
    ("Nature", "Science", None, "different"),
    (
        "ICML",
        "Advances in Neural Information Processing Systems 33 (NeurIPS 2020)",
        None,
        "different",
    ),
    (
        "UAI",
        "Proceedings of the 38th International Conference on Machine Learning",
        None,
        "different",
    ),
    ("Journal of Applied Physics", "Applied Physics Letters", None, "different"),
    (
        "Transportation Research Part C",
        "Transportation Research Part D: Transport and Environment",
        None,
        "different",
    ),
    (
        "Proteins: Structure, Function, Bioinformatics",
        "Drug discovery today. Technologies",
        None,
        "different",
    ),
    (
        "Annual Meeting on Reward Learning and Alignment",
        "11th International Conference on Learning Representations, ICLR 2023",
        None,
        "different",
    ),
    ("Journal of Behavioural Economics", "Journal of Behavioral Economics", None, "same"),
    ("Journal of Behavioral Ecnoomics", "Journal of Behavioral Economics", None, "compatible"),
    (None, "Nature", None, "unknown"),
]


@pytest.mark.parametrize(
    ("cited", "found", "found_short", "kind"),
    VENUE_CASES,
    ids=[
        "identical",
        "article",
        "iso4-jmlr",
        "iso4-prl",
        "iso4-pnas",
        "pubmed-style",
        "iso4-tpami",
        "abbreviation-with-entity",
        "same-with-short",
        "icml-acronym",
        "icml-proceedings",
        "cvpr-parenthesised",
        "nips-neurips",
        "proc-of-iclr",
        "neurips-full",
        "pnas-long",
        "arxiv-both",
        "corr-for-published",
        "journal-section",
        "pubmed-place",
        "lncs-series",
        "nature-communications",
        "nature-science",
        "icml-neurips",
        "uai-icml",
        "applied-physics",
        "transportation-parts",
        "unrelated-journals",
        "invented-venue",
        "spelling-variant",
        "misspelt-venue",
        "not-cited",
    ],
)
def test_compare_venues_classifies_the_difference(
    cited: str | None, found: str, found_short: str | None, kind: str
) -> None:
    assert compare_venues(cited, found, found_short=found_short).kind == kind


@pytest.mark.parametrize(
    ("cited", "found", "kind"),
    [
        ("JOSS", "The Journal of Open Source Software", "acronym"),
        ("NEJM", "New England Journal of Medicine", "acronym"),
        ("CACM", "Communications of the ACM", "acronym"),
        ("TOG", "ACM Transactions on Graphics", "acronym"),
        ("OSDI", "USENIX Symposium on Operating Systems Design and Implementation", "acronym"),
        ("New England Journal of Medicine", "NEJM", "acronym"),
        ("JOSS", "Journal of Open Research Software", "different"),
        ("Nature", "Nature Communications", "different"),
    ],
    ids=[
        "joss",
        "nejm",
        "cacm-inner-acronym",
        "tog-publisher-dropped",
        "osdi-kind-dropped",
        "reverse",
        "jors",
        "word",
    ],
)
def test_initialisms_of_unlisted_venues_are_recognised(cited: str, found: str, kind: str) -> None:
    assert compare_venues(cited, found).kind == kind


@pytest.mark.parametrize(
    ("found", "found_type"),
    [(None, "preprint"), ("arXiv (Cornell University)", None), ("bioRxiv", "posted-content")],
    ids=["no-venue-preprint-type", "arxiv-venue", "biorxiv"],
)
def test_venue_cited_as_published_for_a_preprint_record_is_left_to_the_engine(
    found: str | None, found_type: str | None
) -> None:
    result = compare_venues("NeurIPS", found, found_type=found_type)
    assert result.kind == "compatible"
    assert result.found_preprint and not result.cited_preprint


@pytest.mark.parametrize(
    ("venue", "expected"),
    [
        ("arXiv preprint arXiv:2106.09685", True),
        ("CoRR", True),
        ("bioRxiv", True),
        ("SSRN Electronic Journal", True),
        ("Nature", False),
        ("Proceedings of ICML", False),
        (None, False),
    ],
    ids=["arxiv", "corr", "biorxiv", "ssrn", "journal", "conference", "none"],
)
def test_is_preprint_venue(venue: str | None, expected: bool) -> None:
    assert is_preprint_venue(venue) is expected


def test_preprint_cited_for_published_work() -> None:
    result = compare_venues("arXiv preprint arXiv:2106.09685", "ICLR", found_type="proceedings")
    assert result.kind == "preprint"
    assert result.cited_preprint and not result.found_preprint


def test_threads_comparing_venues_at_once_load_the_abbreviation_list_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Verdicts run in worker threads: the LTWA (a second of CPU) must be built once."""
    from pyiso4.ltwa import Abbreviate

    from refaudit.match import abbreviations

    builds: list[int] = []
    real = Abbreviate.create

    def counted() -> Abbreviate:
        builds.append(1)
        return real()

    monkeypatch.setattr(Abbreviate, "create", counted)
    abbreviations._build_abbreviator.cache_clear()
    start = threading.Barrier(4)

    def compare(n: int) -> bool:
        start.wait()
        return abbreviations.same_iso4(
            f"J. Mach. Learn. Res. {n}", f"Journal of Machine Learning Research {n}"
        )

    with ThreadPoolExecutor(4) as pool:
        same = list(pool.map(compare, range(4)))

    assert same == [True] * 4
    assert len(builds) == 1


# --- pages and volume -------------------------------------------------------------


@pytest.mark.parametrize(
    ("cited", "found", "expected"),
    [
        ("123-130", "123--130", True),
        ("123–30", "123-130", True),
        ("pp. 123-130", "123", True),
        ("e1001", "e1001", True),
        ("E1001", "e1001", True),
        ("124-130", "123-130", False),
        ("0249", "249-275", True),
        (None, "123", None),
        ("no--no", "123", None),
    ],
    ids=[
        "double-dash",
        "short-range",
        "pp-prefix",
        "article-number",
        "article-case",
        "other-page",
        "leading-zero",
        "not-cited",
        "placeholder-pages",
    ],
)
def test_compare_pages_uses_the_first_page(
    cited: str | None, found: str, expected: bool | None
) -> None:
    assert compare_pages(cited, found) is expected


@pytest.mark.parametrize(
    ("cited", "found", "expected"),
    [("33", "33", True), ("Vol. 33", "33", True), ("34", "33", False), (None, "33", None)],
    ids=["same", "prefixed", "other", "not-cited"],
)
def test_compare_volume(cited: str | None, found: str, expected: bool | None) -> None:
    assert compare_volume(cited, found) is expected


# --- whole records -------------------------------------------------------------


def _reference(**fields: object) -> Reference:
    return Reference(key="ref", **fields)  # type: ignore[arg-type]


ATTENTION = Work(
    source="crossref",
    title="Attention is All you Need",
    authors=people("Vaswani, Ashish", "Shazeer, Noam", "Parmar, Niki"),
    year=2017,
    venue="Advances in Neural Information Processing Systems 30",
    doi="10.5555/3295222.3295349",
)


def test_candidate_score_ranks_the_cited_work_first() -> None:
    reference = _reference(
        title="Attention Is All You Need",
        authors=people("Vaswani, A."),
        authors_truncated=True,
        year=2017,
        venue="NeurIPS",
    )
    similar = Work(
        source="openalex",
        title="Attention Is Not All You Need",
        authors=people("Dong, Yihe"),
        year=2021,
        venue="ICML",
    )
    assert candidate_score(reference, ATTENTION) > 0.95
    assert candidate_score(reference, similar) < 0.7


def test_candidate_score_with_title_only_uses_the_title() -> None:
    reference = _reference(title="Attention Is All You Need")
    assert candidate_score(reference, ATTENTION) == 1.0
    assert candidate_score(_reference(), ATTENTION) == 0.0


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        (Work(source="s2", doi="10.5555/3295222.3295349", title="Different"), True),
        (
            Work(
                source="openalex",
                title="Attention is all you need.",
                year=2018,
                authors=people("Vaswani, A."),
            ),
            True,
        ),
        (
            Work(
                source="openalex",
                title="Attention is all you need",
                year=2021,
                authors=people("Vaswani, A."),
            ),
            False,
        ),
        (
            Work(
                source="openalex",
                title="Attention is all you need",
                year=2017,
                authors=people("Jones, B."),
            ),
            False,
        ),
        (
            Work(
                source="arxiv",
                title="Attention is all you need",
                year=2017,
                doi="10.48550/arXiv.1706.03762",
            ),
            False,
        ),
    ],
    ids=[
        "shared-doi",
        "same-title-adjacent-year",
        "far-year",
        "other-first-author",
        "preprint-doi-differs",
    ],
)
def test_is_same_work(other: Work, expected: bool) -> None:
    assert is_same_work(ATTENTION, other) is expected


def test_is_same_work_by_arxiv_id_or_pmid_when_dois_do_not_conflict() -> None:
    published = Work(source="s2", title="A", arxiv_id="1706.03762")
    preprint = Work(source="arxiv", title="B", arxiv_id="1706.03762")
    assert is_same_work(published, preprint)
    assert is_same_work(Work(source="pubmed", pmid="123"), Work(source="crossref", pmid="123"))


@pytest.mark.parametrize("record_family", ["Powell, Jr.", "Powell Jr", "Powell, III"])
def test_a_generational_suffix_left_in_the_records_family_name_still_matches(
    record_family: str,
) -> None:
    cited = [Person("Powell", "J.", suffix="Jr.")]
    result = compare_authors(cited, [Person(record_family, "James")])
    assert result.kind == "ok"
    assert result.missing == () and result.extra == ()


def test_a_vancouver_name_read_the_natural_way_round_is_still_its_author() -> None:
    """ "Bartosh LF" after a group author reads as given "Bartosh", family "LF"."""
    cited = [Person("LF", "Bartosh"), Person("VS", "Zhivotoshchuk")]
    found = [Person("Bartosh", "L. F."), Person("Zhivotoshchuk", "Vera S.")]
    assert compare_authors(cited, found).kind == "ok"
    # Only the record's own initials and family name make that reading.
    wrong = compare_authors([Person("LK", "Bartosh")], [Person("Bartosh", "L. F.")])
    other = compare_authors([Person("LF", "Bartosz")], [Person("Bartosh", "L. F.")])
    assert wrong.kind == other.kind == "different"


def test_math_operators_in_a_latex_title_read_as_words() -> None:
    # The cited title is what the .bib parser made of the same LaTeX: one reader, one text.
    result = compare_titles(
        "An O(loglogm) Prophet Inequality for Subadditive Combinatorial Auctions",
        r"An $O(\log \log m)$ Prophet Inequality for Subadditive Combinatorial Auctions",
    )
    assert result.kind == "exact"


@pytest.mark.parametrize(
    "latex",
    [
        r"Neutrinoless Double Beta Decay with $^{82}$SeF$_6$ and Direct Ion Imaging",
        r"The $E_{\rm p}$ - $E_{\rm iso}$ relation and the internal shock model",
        r"Can Y(4140) be a $c\bar{c}s\bar{s}$ tetraquark?",
        r"The {\TeX}book and {\LaTeX}",
    ],
)
def test_a_latex_record_title_reads_as_the_parser_reads_the_cited_one(latex: str) -> None:
    assert normalize_text(latex) == normalize_text(latex_to_text(latex))


@pytest.mark.parametrize(
    ("cited", "found", "kind"),
    [
        (
            "Proceedings of the 2022 Annual ACM-SIAM Symposium on Discrete Algorithms (SODA)",
            "Society for Industrial and Applied Mathematics eBooks",
            "compatible",
        ),
        ("Practica Oto-Rhino-Laryngologica", "Practica oto-rhino-laryngologica. Suppl.", "same"),
        ("Acta Oto-Laryngologica", "Practica oto-rhino-laryngologica. Suppl.", "different"),
    ],
    ids=["openalex-publisher-collection", "journal-supplement", "other-journal"],
)
def test_publisher_collections_and_supplements_do_not_contradict_the_venue(
    cited: str, found: str, kind: str
) -> None:
    assert compare_venues(cited, found).kind == kind


def test_an_article_number_before_the_title_is_not_a_word_of_it() -> None:
    turing = compare_titles(
        "Computing Machinery and Intelligence", "I.—COMPUTING MACHINERY AND INTELLIGENCE"
    )
    assert turing.kind == "exact"
    assert compare_titles("I. Introduction", "Introduction").kind == "different"


def test_latex_italic_correction_is_not_a_word_break() -> None:
    assert normalize_text(r"Bio\/technology") == normalize_text("Biotechnology")


@pytest.mark.parametrize(
    ("venue", "conference"),
    [
        ("Advances in Neural Information Processing Systems 25", True),
        ("Proceedings of the 38th International Conference on Machine Learning", True),
        ("2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)", True),
        ("Proceedings of the IEEE", False),
        ("Proceedings of the National Academy of Sciences", False),
        ("Journal of Machine Learning Research", False),
        (None, False),
    ],
)
def test_is_conference_venue(venue: str | None, conference: bool) -> None:
    assert is_conference_venue(venue) is conference


@pytest.mark.parametrize(
    ("cited", "kind"),
    [
        ("Learning Differentiable Equations that are Easy to Solve", "word_form"),
        ("Learning Differential Equation that are Easy to Solve", "word_form"),
        ("Learning Diferential Equations that are Easy to Solve", "typo"),
        ("Learning Differentail Equations that are Easy to Solve", "typo"),
    ],
    ids=["derived-word", "plural", "letter-dropped", "letters-swapped"],
)
def test_another_word_of_the_same_stem_is_a_changed_word_not_a_typo(cited: str, kind: str) -> None:
    found = "Learning Differential Equations that are Easy to Solve"
    assert compare_titles(cited, found).kind == kind


@pytest.mark.parametrize(
    ("cited", "found", "kind"),
    [
        # ISO 4, both directions, with series letters, without dots, with "Proc." and ordinals.
        ("J. Phys. A", "Journal of Physics A: Mathematical and Theoretical", "abbreviation"),
        ("Eur. Phys. J. C", "The European Physical Journal C", "abbreviation"),
        ("Phys Rev E", "Physical Review E", "abbreviation"),
        ("Physical Review Letters", "Phys. Rev. Lett.", "abbreviation"),
        (
            "Proc 38th Int Conf Mach Learn",
            "International Conference on Machine Learning",
            "abbreviation",
        ),
        (
            "Ber. dtsch. chem. Ges.",
            "Berichte der deutschen chemischen Gesellschaft",
            "abbreviation",
        ),
        (
            "Nucl. Instrum. Methods Phys. Res. B",
            "Nuclear Instruments and Methods in Physics Research Section B: Beam Interactions",
            "abbreviation",
        ),
        ("Phys. Rev. D", "Physical Review B", "different"),
        ("Phys. Rev.", "Physical Review E", "different"),
        ("J. Am. Chem. Soc.", "Journal of Organic Chemistry", "different"),
        # Acronyms from the name's words: multi-letter pieces, skipped function words.
        ("ICRA", "2015 IEEE International Conference on Robotics and Automation", "acronym"),
        (
            "Proc. EMDL",
            "Proceedings of the 5th International Workshop on Embedded and Mobile Deep Learning",
            "acronym",
        ),
        ("COLING", "International Conference on Computational Linguistics", "acronym"),
        ("JACS", "Journal of the American Chemical Society", "acronym"),
        ("ICML", "IEEE/CVF Conference on Computer Vision and Pattern Recognition", "different"),
        ("ECCV", "IEEE International Conference on Computer Vision", "different"),
        # Nothing confirms it, nothing contradicts it: a warning, never an error.
        (
            "J. R. Stat. Soc.",
            "Journal of the Royal Statistical Society Series C (Applied Statistics)",
            "unconfirmed",
        ),
        # OCR misreadings are slips.
        ("Joumal of Physical Chemistry C", "The Journal of Physical Chemistry C", "same"),
    ],
)
def test_venue_short_forms_follow_rules_not_a_list(cited: str, found: str, kind: str) -> None:
    assert compare_venues(cited, found).kind == kind


def test_any_alias_of_the_record_confirms_the_venue() -> None:
    found = "Neural Information Processing Systems"
    assert compare_venues("NeurIPS", "Some Other Name").kind == "different"
    assert compare_venues("NeurIPS", "Some Other Name", found_aliases=[found]).kind == "acronym"


@pytest.mark.parametrize(
    ("cited", "kind"),
    [
        ("Crystal structurc of the Fab fragment of tbe human antibody", "typo"),
        ("Crystal structure of the Fab fragment of the mouse antibody", "different"),
    ],
)
def test_ocr_misread_letters_are_a_typo_not_another_word(cited: str, kind: str) -> None:
    found = "Crystal structure of the Fab fragment of the human antibody"
    assert compare_titles(cited, found).kind == kind


@pytest.mark.parametrize(
    ("cited", "found"),
    [
        ("Modcl order reduction", "Model order reduction"),
        ("Intclligence service : Schriften", "Intelligence service: Schriften"),
    ],
)
def test_a_misread_e_before_an_l_is_a_slip_not_another_word(cited: str, found: str) -> None:
    """OCR's "cl" for "el" also reads as the pair "cl" ("d"): still one misread letter."""
    assert compare_titles(cited, found).kind == "typo"


@pytest.mark.parametrize(
    ("found", "found_short", "aliases", "kind"),
    [
        # Semantic Scholar's record of a PMLR paper: its acronym spells the cited
        # name too, but its full names have no "Quantum".
        (
            "Proceedings of the 38th International Conference on Machine Learning",
            "ICML",
            (),
            "different",
        ),
        ("International Conference on Machine Learning", None, ("ICML",), "different"),
        # A record known only by its acronym cannot say which words its name has.
        ("ICML", None, (), "acronym"),
    ],
)
def test_a_records_acronym_does_not_vouch_for_a_word_its_names_lack(
    found: str, found_short: str | None, aliases: tuple[str, ...], kind: str
) -> None:
    cited = "International Conference on Quantum Machine Learning"
    result = compare_venues(cited, found, found_short=found_short, found_aliases=aliases)
    assert result.kind == kind


def test_a_skipped_word_the_records_name_holds_keeps_the_acronym() -> None:
    cited = "Conference on Knowledge Discovery and Data Mining"
    found = "Proceedings of the 27th Conference on Knowledge Discovery & Data Mining"
    assert compare_venues(cited, found, found_short="KDD").kind in {"same", "acronym"}


@pytest.mark.parametrize(
    ("cited", "kind"),
    [("NcurIPS", "acronym"), ("lCML", "different"), ("ICLR", "different")],
)
def test_a_misread_letter_in_a_known_acronym_is_repaired_against_the_found_venue(
    cited: str, kind: str
) -> None:
    # Only toward the found venue's own acronym: another conference stays another.
    assert compare_venues(cited, "Neural Information Processing Systems").kind == kind
