"""Works cited across scripts and languages, and organisations as authors.

The records are shaped as the sources send them: Crossref's split family/given
names in Latin letters, OpenAlex's display names in the original script.
"""

from __future__ import annotations

import pytest

from refaudit.identifiers import parse_arxiv_id
from refaudit.match import compare_authors, compare_titles, is_preprint_venue
from refaudit.models import Person
from refaudit.names import display_name_to_person, parse_names
from refaudit.sources import crossref, openalex


def cited(value: str) -> list[Person]:
    return parse_names(value)[0]


def openalex_authors(*names: str) -> list[Person]:
    item = {
        "id": "https://openalex.org/W4321",
        "display_name": "x",
        "authorships": [{"author": {"display_name": name}} for name in names],
    }
    return openalex.to_work(item).authors


def crossref_authors(*names: tuple[str, str]) -> list[Person]:
    item = {
        "DOI": "10.5370/kiee.2018.31.2.663",
        "title": ["x"],
        "author": [{"given": given, "family": family} for family, given in names],
    }
    return crossref.to_work(item).authors


@pytest.mark.parametrize(
    ("citation", "record", "kind"),
    [
        # Native script against a record that splits family and given name.
        ("{박은지} and {송재영}", crossref_authors(("박", "은지"), ("송", "재영")), "ok"),
        ("{罗浩然}", crossref_authors(("罗", "浩然")), "ok"),
        # OpenAlex keeps the whole native name in one field, in either order.
        ("加藤, 翔太 and 鈴木, 陽菜", openalex_authors("加藤 翔太", "鈴木 陽菜"), "ok"),
        # Pinyin, with or without a hyphen, in either order.
        ("Luo, Haoran", openalex_authors("罗浩然"), "ok"),
        ("Hao-Ran Luo", crossref_authors(("罗", "浩然")), "ok"),
        # Korean: the family name has customary spellings (박 = Park); the given name decides.
        ("Park, Eun-ji and Song, Jae-young", openalex_authors("박은지", "송재영"), "ok"),
        # Cyrillic in any common scheme.
        (
            "Grigorieva, S. N. and Ivanov, M.",
            crossref_authors(("Григорьева", "Светлана Николаевна"), ("Иванов", "Михаил")),
            "ok",
        ),
        ("Kuznecova, Irina", crossref_authors(("Кузнецова", "Ирина")), "ok"),
    ],
)
def test_names_agree_across_scripts(citation: str, record: list[Person], kind: str) -> None:
    assert compare_authors(cited(citation), record).kind == kind


def test_another_person_in_cyrillic_is_a_different_author() -> None:
    comparison = compare_authors(cited("Petrova, S."), crossref_authors(("Григорьева", "Светлана")))
    assert comparison.kind == "different"
    assert comparison.extra == ("Petrova",)


def test_another_person_in_the_same_native_script_is_a_different_author() -> None:
    record = crossref_authors(("徐", "立新"), ("刘", "文博"))
    assert compare_authors(cited("{张国强} and {郭丽娟}"), record).kind == "different"


@pytest.mark.parametrize(
    ("citation", "record"),
    [
        # Kanji are read as Chinese by any transliteration: no proof either way.
        ("Yamada, Tomoko", openalex_authors("山田 智子")),
        # Hangul family names romanise by custom, not by rule.
        ("Kim, Min-su", openalex_authors("박은지")),
    ],
)
def test_an_unreliable_transliteration_neither_confirms_nor_contradicts(
    citation: str, record: list[Person]
) -> None:
    assert compare_authors(cited(citation), record).kind == "unknown"


def test_a_collaboration_cited_for_a_record_that_lists_members_and_the_collaboration() -> None:
    record = crossref_authors(("Ahmadi", "Rahul"), ("Allen", "Nadia")) + [
        display_name_to_person("ATLAS Collaboration")
    ]
    comparison = compare_authors(cited("{ATLAS Collaboration}"), record)
    assert comparison.kind in ("exact", "ok")
    assert comparison.missing == ()


def test_a_consortium_cited_without_its_article_matches() -> None:
    record = [display_name_to_person("The Gene Ontology Consortium")] + crossref_authors(
        ("White", "Jing"), ("Moradi", "Emily")
    )
    assert compare_authors(cited("{Gene Ontology Consortium}"), record).kind in ("exact", "ok")


def test_an_organisation_for_a_record_listing_only_people_is_unknown_not_wrong() -> None:
    record = crossref_authors(("Achiam", "Josh"), ("Adler", "Steven"), ("Agarwal", "Sandhini"))
    assert compare_authors(cited("{OpenAI}"), record).kind == "unknown"


@pytest.mark.parametrize(
    "citation",
    ["OpenAI", "{{OpenAI}}", "Meta", "Google DeepMind", "{Google DeepMind}", "Meta AI"],
)
def test_a_report_cited_by_its_organisation_is_not_an_author_mismatch(citation: str) -> None:
    # Written without braces, "Google DeepMind" would be Mr DeepMind and "Meta" a
    # family name: the record's individual authors would be "missing" and Meta "added".
    record = crossref_authors(("Dubey", "Abhimanyu"), ("Jauhri", "Abhinav"), ("Pandey", "Abhinav"))
    assert compare_authors(cited(citation), record).kind == "unknown"


@pytest.mark.parametrize(
    "citation",
    ["ATLAS Collaboration", "{The ATLAS Collaboration}", "The ATLAS Collaboration"],
)
def test_a_collaboration_written_without_braces_is_one_author(citation: str) -> None:
    people = cited(citation)
    assert [p.is_organisation for p in people] == [True]
    record = crossref_authors(("Ahmadi", "Rahul"), ("Allen", "Nadia")) + [
        display_name_to_person("ATLAS Collaboration")
    ]
    assert compare_authors(people, record).kind in ("exact", "ok")


def test_an_organisation_named_by_the_record_among_its_members_matches() -> None:
    # arXiv and OpenAlex list "OpenAI" as the first of the report's authors.
    record = [display_name_to_person("OpenAI")] + crossref_authors(
        ("Wijayagunawardhana", "W. A. Hasindu N.")
    )
    comparison = compare_authors(cited("OpenAI"), record)
    assert comparison.kind in ("exact", "ok") and comparison.missing == ()


@pytest.mark.parametrize("citation", ["LeCun, Yann", "Yann LeCun", "David J. C. MacKay"])
def test_family_names_with_an_inner_capital_stay_people(citation: str) -> None:
    assert [p.is_organisation for p in cited(citation)] == [False]


def test_a_sole_person_not_among_the_authors_is_still_different() -> None:
    record = crossref_authors(("Achiam", "Josh"), ("Adler", "Steven"), ("Agarwal", "Sandhini"))
    assert compare_authors(cited("Smith, John"), record).kind == "different"


def test_an_invented_organisation_for_a_record_naming_another_is_different() -> None:
    record = [display_name_to_person("The 1000 Genomes Project Consortium")] + crossref_authors(
        ("Kim", "Emily")
    )
    comparison = compare_authors(
        cited("{International Alliance for Reproducible Genomics}"), record
    )
    assert comparison.kind == "different"


ZH = "长短期记忆网络在工业设备健康状态估计中的应用"
EN = "Application of long short-term memory networks to state-of-health estimation"


@pytest.mark.parametrize(
    ("citation", "record"),
    [
        (f"{ZH} [{EN}]", EN),
        (f"{ZH} [{EN}]", ZH),
        (f"{EN} ({ZH})", ZH),
        ("Метод оптимизации = A method for optimization", "A method for optimization"),
        # Full-width letters and CJK punctuation are the same characters.
        ("Ｄｅｅｐ　ｌｅａｒｎｉｎｇ：ａ　ｓｕｒｖｅｙ", "Deep learning: a survey"),
        ("深度学习：综述", "深度学习:综述"),
    ],
)
def test_a_title_in_either_language_or_both_is_the_title(citation: str, record: str) -> None:
    assert compare_titles(citation, record).kind == "exact"


def test_a_bracketed_part_in_the_same_script_is_still_part_of_the_title() -> None:
    assert compare_titles("Deep learning (a survey)", "Deep learning").kind != "exact"


def test_a_bilingual_citation_with_a_wrong_translation_is_different() -> None:
    comparison = compare_titles(f"{ZH} [Deep learning for crop disease detection]", EN)
    assert comparison.kind == "different"


def test_crossref_original_title_is_an_alias_of_the_work() -> None:
    item = {
        "DOI": "10.2208/jscejj.20-53773",
        "title": ["Anomaly detection of civil infrastructure using reinforcement learning"],
        "original-title": ["強化学習を用いた土木構造物の異常検知"],
    }
    work = crossref.to_work(item)
    assert work.title_aliases == ["強化学習を用いた土木構造物の異常検知"]


@pytest.mark.parametrize(
    ("cited", "expected"),
    [
        ("math.CO/0211346", ("math/0211346", None)),
        ("arXiv:hep-th/9901001v2", ("hep-th/9901001", 2)),
        ("https://arxiv.org/abs/2404.02109v2", ("2404.02109", 2)),
    ],
)
def test_arxiv_ids_in_every_form_name_the_same_paper(
    cited: str, expected: tuple[str, int | None]
) -> None:
    assert parse_arxiv_id(cited) == expected


@pytest.mark.parametrize(
    "venue",
    [
        "CoRR abs/2301.01234",
        "arXiv preprint arXiv:2301.14091",
        "ArXiv",
        "Preprint",
        "bioRxiv",
        "medRxiv",
        "PsyArXiv",
        "TechRxiv",
        "SSRN Electronic Journal",
        "Social Science Research Network",
        "Social Sci. Res. Network",
        "Research Square",
        "Authorea",
    ],
)
def test_preprint_servers_are_recognised_in_every_spelling(venue: str) -> None:
    assert is_preprint_venue(venue)


@pytest.mark.parametrize(
    "venue",
    ["Nature", "Research Policy", "Journal of Social Science", "Soc. Sci. Res.", "A Review"],
)
def test_journals_are_not_preprint_servers(venue: str) -> None:
    assert not is_preprint_venue(venue)


@pytest.mark.parametrize(
    ("citation", "record"),
    [
        (r"$\alpha$-Synuclein aggregation in neurons", "α-Synuclein aggregation in neurons"),
        ("Capture of CO$_2$ by amine scrubbing", "Capture of CO<sub>2</sub> by amine scrubbing"),
        ("Capture of CO2 by amine scrubbing", "Capture of CO<sub>2</sub> by amine scrubbing"),
        ("Ca$^{2+}$ waves in astrocytes", "Ca<sup>2+</sup> waves in astrocytes"),
        ("Risk & resilience in dairy systems", "Risk &amp; resilience in dairy systems"),
        ("Risk and resilience in dairy systems", "Risk &amp;amp; resilience in dairy systems"),
        ("Learning---a survey", "Learning — a survey"),
        ("“Quoted” words in titles", '"Quoted" words in titles'),
        (
            "The K-means method",
            "The <mml:math><mml:mi>K</mml:mi></mml:math>-means method",
        ),
    ],
)
def test_markup_symbols_and_entities_compare_equal_to_plain_forms(
    citation: str, record: str
) -> None:
    assert compare_titles(citation, record).kind == "exact"
