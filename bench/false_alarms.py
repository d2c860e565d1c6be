"""False alarms on faithful citations of random works from the benchmark world.

The labelled sets hold a few hundred valid references each; a 1 % false-alarm
target needs more than that to mean anything, and must hold for every kind of
work, not just ML papers. This script draws works at random from
../shared/bench/world.jsonl.gz (stratified by type: chapters, reports, theses,
datasets as well as articles), renders each as a faithful BibTeX entry in one of
the ways people write them (initials, "and others", with or without DOI, the
venue as each field writes it: full name, ISO 4 abbreviation with or without
dots, acronym, publisher's short name, cut after a series letter; see
venue_styles.py), audits them through the real pipeline against scholarsim, and
reports how many are flagged (false alarms) and how many are left unverified
(coverage lost) per type, per field and per venue style, with the evidence for each.

    python bench/false_alarms.py                  # 1,000 works, seed 1
    python bench/false_alarms.py --count 3000 --seed 7
    python bench/false_alarms.py --freetext       # \\bibitem lines in the styles of TEXT_STYLES
    python bench/false_alarms.py --docx           # a Word manuscript: Zotero, Mendeley and
                                                  # EndNote field codes holding the records
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import random
import re

from accuracy import prediction
from simulator import WORLD, audit_text
from venue_styles import field_of, iso4, pick_venue

ENTRY_TYPES = {
    "journal-article": "article",
    "review": "article",
    "editorial": "article",
    "letter": "article",
    "proceedings-article": "inproceedings",
    "book-chapter": "incollection",
    "book": "book",
    "report": "techreport",
    "thesis": "phdthesis",
}
VENUE_FIELDS = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}
PUBLISHER_FIELDS = {"book": "publisher", "techreport": "institution", "phdthesis": "school"}
# Share of the sample per work type; the rest is split evenly among the other types.
MAJOR_TYPES = {"journal-article": 0.45, "proceedings-article": 0.25}


def citable_works() -> dict[str, list[dict]]:
    """World works a person could cite faithfully, by type (no notices, nothing retracted)."""
    by_type: dict[str, list[dict]] = collections.defaultdict(list)
    with gzip.open(WORLD, "rt", encoding="utf-8") as lines:
        for line in lines:
            work = json.loads(line)
            if work["type"].endswith("notice") or work.get("updates"):
                continue
            if work.get("title") and work.get("year") and work.get("authors"):
                by_type[work["type"]].append(work)
    return by_type


def sample(by_type: dict[str, list[dict]], count: int, rng: random.Random) -> list[dict]:
    minor = [kind for kind in by_type if kind not in MAJOR_TYPES]
    picked: list[dict] = []
    for kind, works in sorted(by_type.items()):
        share = MAJOR_TYPES.get(kind, (1 - sum(MAJOR_TYPES.values())) / max(1, len(minor)))
        picked += rng.sample(works, min(len(works), round(count * share)))
    return picked


def _latex(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"([&%_#])", r"\\\1", text)


def _person(author: dict, initials: bool) -> str:
    if "name" in author:
        return "{" + _latex(author["name"]) + "}"
    given = author.get("given") or ""
    if initials:
        given = " ".join(f"{part[0]}." for part in given.split() if part[:1].isalpha())
    family = _latex(author["family"])
    return f"{family}, {_latex(given)}" if given else family


def render(work: dict, key: str, rng: random.Random) -> tuple[str, str]:
    """A faithful BibTeX entry for `work` as some user would write it, and its venue style."""
    entry_type = ENTRY_TYPES.get(work["type"], "misc")
    names = [_person(a, initials=rng.random() < 0.4) for a in work["authors"]]
    if len(names) > 6 and rng.random() < 0.5:
        names = names[:3] + ["others"]
    title = _latex(work["title"])
    if work.get("subtitle") and rng.random() < 0.5:
        title += ": " + _latex(work["subtitle"])
    fields = {
        "author": " and ".join(names),
        "title": "{" + title + "}" if rng.random() < 0.5 else title,
        "year": str(work["year"]),
    }
    style, venue = pick_venue(work, rng)
    if venue and entry_type in VENUE_FIELDS:
        fields[VENUE_FIELDS[entry_type]] = _latex(venue)
    elif venue and entry_type == "misc":
        fields["howpublished"] = _latex(venue)
    if work.get("publisher") and entry_type in PUBLISHER_FIELDS:
        fields[PUBLISHER_FIELDS[entry_type]] = _latex(work["publisher"])
    for name in ("volume", "pages"):
        if work.get(name) and rng.random() < 0.6:
            fields[name] = str(work[name]).replace("-", "--")
    if work.get("doi") and rng.random() < 0.5:
        fields["doi"] = work["doi"]
    elif work.get("arxiv_id") and rng.random() < 0.5:
        fields.update(eprint=work["arxiv_id"], archiveprefix="arXiv")
    body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields.items())
    return f"@{entry_type}{{{key},\n{body}}}\n", style


def _initials(author: dict) -> str:
    return "".join(part[0] for part in (author.get("given") or "").split() if part[:1].isalpha())


def _style_name(author: dict, style: str) -> str:
    if "name" in author:
        return author["name"]
    family, given = author["family"], author.get("given") or ""
    initials = _initials(author)
    if style in ("vancouver", "vancouver-nocomma"):
        return f"{family} {initials}".strip()
    if style in ("ieee", "aip", "rsc"):
        return " ".join([*(f"{c}." for c in initials), family])
    if style in ("apa", "apa7", "harvard", "acs"):
        return f"{family}, {' '.join(f'{c}.' for c in initials)}".strip(", ")
    return f"{given} {family}".strip()


def _chicago_names(authors: list[dict]) -> str:
    """First author inverted, the others in natural order: "Xu, Minkai, Shitong Luo, and …"."""
    first = authors[0]
    names = [first["name"] if "name" in first else f"{first['family']}, {first.get('given') or ''}"]
    names += [_style_name(a, "chicago") for a in authors[1:]]
    if len(names) < 3:
        return " and ".join(n.strip(", ") for n in names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def _apa7_names(authors: list[dict]) -> str:
    """APA 7: up to 20 names; beyond, the first nineteen, an ellipsis, and the last."""
    names = [_style_name(a, "apa7") for a in authors]
    if len(names) > 20:
        return ", ".join(names[:19]) + ", . . . " + names[-1]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + ", \\& " + names[-1]


# OCR confuses these; digits are left alone so years and pages stay what was printed.
_OCR_SWAPS = (("rn", "m"), ("l", "I"), ("fi", "ﬁ"), ("e", "c"), ("h", "b"), (". ", "."))


def _ocr_noise(text: str, rng: random.Random) -> str:
    """One or two OCR slips in the letters of a citation string."""
    for _ in range(rng.choice([1, 2])):
        swaps = [(a, b) for a, b in _OCR_SWAPS if a in text]
        if not swaps:
            break
        old, new = rng.choice(swaps)
        starts = [i for i in range(len(text)) if text.startswith(old, i)]
        at = rng.choice(starts)
        text = text[:at] + new + text[at + len(old) :]
    return text


TEXT_STYLES = (
    "apa",
    "apa7",
    "chicago",
    "ieee",
    "vancouver",
    "vancouver-nocomma",
    "harvard",
    "aip",
    "acs",
    "rsc",
    "ocr",
)
# Physics and chemistry styles print no title for a journal article.
TITLELESS_STYLES = frozenset({"aip", "acs", "rsc"})


def render_text(work: dict, key: str, rng: random.Random) -> tuple[str, str, str]:
    """One faithful \\bibitem in one of TEXT_STYLES: the line, its style and venue style."""
    style = rng.choice(TEXT_STYLES)
    noisy = style == "ocr"
    if noisy:
        style = rng.choice(["apa", "chicago", "ieee", "vancouver"])
    if style in TITLELESS_STYLES and work["type"] != "journal-article":
        style = "ieee"
    names = [_style_name(a, style) for a in work["authors"][:6]]
    etal = len(work["authors"]) > 6
    title, year = _latex(re.sub(r"<[^>]+>", "", work["title"])), work["year"]
    publisher = work.get("publisher") if work["type"] in ("book", "report", "thesis") else None
    venue_style, venue = pick_venue(work, rng)
    if style in TITLELESS_STYLES and work.get("venue"):
        venue_style, venue = "iso4", iso4(work["venue"])
    venue = _latex(venue or publisher or "")
    volume, pages = work.get("volume") or "", (work.get("pages") or "").replace("-", "--")
    first_page = pages.split("--")[0]
    if style == "vancouver":
        text = f"{', '.join(names)}{', et al' if etal else ''}. {title}. {venue}. {year}"
        text += f";{volume}" if volume else ""
        text += f":{pages}." if pages else "."
    elif style == "vancouver-nocomma":
        text = f"{' '.join(names)}{' et al' if etal else ''}. {title}. {venue}. {year}"
        text += f";{volume}" if volume else ""
        text += f":{pages}." if pages else "."
    elif style == "ieee":
        text = f"{', '.join(names)}{' et al.' if etal else ''}, ``{title},'' \\emph{{{venue}}}"
        text += f", vol. {volume}" if volume else ""
        text += f", pp. {pages}" if pages else ""
        text += f", {year}."
    elif style == "apa":
        text = (
            f"{', '.join(names)}{', et al.' if etal else ''} ({year}). {title}. \\emph{{{venue}}}"
        )
        text += f", \\emph{{{volume}}}" if volume else ""
        text += f", {pages}." if pages else "."
    elif style == "apa7":
        text = f"{_apa7_names(work['authors'])} ({year}). {title}. \\emph{{{venue}}}"
        text += f", \\emph{{{volume}}}" if volume else ""
        text += f", {pages}." if pages else "."
    elif style == "harvard":
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        text = f"{listed}{' et al.' if etal else ''} ({year}) `{title}', \\emph{{{venue}}}"
        text += f", {volume}" if volume else ""
        text += f", pp. {pages}." if pages else "."
    elif style == "aip":
        text = f"{', '.join(names)}{' et al.' if etal else ''}, {venue}"
        text += f" \\textbf{{{volume}}}" if volume else ""
        text += f", {first_page}" if first_page else ""
        text += f" ({year})."
    elif style == "acs":
        text = f"{'; '.join(names)}{' et al.' if etal else ''} \\emph{{{venue}}} \\textbf{{{year}}}"
        text += f", \\emph{{{volume}}}" if volume else ""
        text += f", {pages}." if pages else "."
    elif style == "rsc":
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        text = f"{listed}{' et al.' if etal else ''}, \\emph{{{venue}}}, {year}"
        text += f", \\textbf{{{volume}}}" if volume else ""
        text += f", {first_page}." if first_page else "."
    else:
        authors = _chicago_names(work["authors"][:6])
        text = f"{authors}{' et al.' if etal else ''}. {year}. ``{title}.''"
        text += f" \\emph{{{venue}}}" + (f" {volume}" if volume else "")
        text += f": {pages}." if pages else "."
    text = re.sub(r",?\s*\\emph\{\}", "", text)
    if noisy:
        text = _ocr_noise(text, rng)
    if work.get("doi") and rng.random() < 0.3:
        text += f" https://doi.org/{work['doi']}."
    return f"\\bibitem{{{key}}} {text}\n", "ocr" if noisy else style, venue_style


def sample_text(
    works: list[dict], rng: random.Random, freetext: bool
) -> tuple[str, str, dict[str, str], dict[str, str]]:
    """A file name, its text, and per key the citation style and the venue style."""
    keys = [f"w{index}" for index in range(len(works))]
    if not freetext:
        rendered = [render(w, k, rng) for w, k in zip(works, keys, strict=True)]
        venue_styles = {k: style for k, (_, style) in zip(keys, rendered, strict=True)}
        text = "\n".join(entry for entry, _ in rendered)
        return "sample.bib", text, {k: "bibtex" for k in keys}, venue_styles
    lines = [render_text(w, k, rng) for w, k in zip(works, keys, strict=True)]
    items = "".join(line for line, _, _ in lines)
    text_styles = {k: style for k, (_, style, _) in zip(keys, lines, strict=True)}
    venue_styles = {k: venue for k, (_, _, venue) in zip(keys, lines, strict=True)}
    return (
        "sample.tex",
        "\\documentclass{article}\n\\begin{document}\n\\nocite{*}\n"
        f"\\begin{{thebibliography}}{{{len(keys)}}}\n{items}\\end{{thebibliography}}\n"
        "\\end{document}\n",
        text_styles,
        venue_styles,
    )


# Work type → CSL type, as Zotero and Mendeley write them into field codes.
CSL_TYPES = {
    "journal-article": "article-journal",
    "review": "article-journal",
    "editorial": "article-journal",
    "letter": "article-journal",
    "proceedings-article": "paper-conference",
    "book-chapter": "chapter",
    "book": "book",
    "report": "report",
    "thesis": "thesis",
    "dataset": "dataset",
    "preprint": "article",
}


def csl_record(work: dict, number: int, rng: random.Random) -> dict:
    """The CSL-JSON a citation manager keeps for `work` (its DOI in most records)."""
    item: dict = {
        "id": number,
        "type": CSL_TYPES.get(work["type"], "document"),
        "title": re.sub(r"<[^>]+>", "", work["title"]),
        "author": [
            {"literal": a["name"]}
            if "name" in a
            else {"family": a["family"], "given": a.get("given") or ""}
            for a in work["authors"]
        ],
        "issued": {"date-parts": [[str(work["year"])]]},
    }
    for variable, name in (("container-title", "venue"), ("volume", "volume"), ("issue", "issue"),
                           ("page", "pages"), ("publisher", "publisher")):  # fmt: skip
        if work.get(name):
            item[variable] = str(work[name])
    if work.get("doi") and rng.random() < 0.8:
        item["DOI"] = work["doi"]
    return item


def sample_docx(works: list[dict], rng: random.Random) -> tuple[bytes, dict[str, str]]:
    """A Word manuscript citing each work once through a Zotero (half), Mendeley or
    EndNote field code, and per key which manager wrote it."""
    import io
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from refaudit.parsing.docx import parse_docx
    from tests.word import Manuscript, endnote_record

    doc, managers = Manuscript(), []
    for number, work in enumerate(works, start=1):
        record = csl_record(work, number, rng)
        manager = rng.choice(["zotero", "zotero", "mendeley", "endnote"])
        managers.append(manager)
        if manager == "zotero":
            doc.zotero([record], f"[{number}]")
        elif manager == "mendeley":
            doc.mendeley([record], f"[{number}]")
        else:
            people = [
                a["name"] if "name" in a else f"{a['family']}, {a.get('given') or ''}".strip(", ")
                for a in work["authors"]
            ]
            doc.endnote(
                [
                    endnote_record(
                        number,
                        title=record["title"],
                        authors=people,
                        year=work["year"],
                        journal=record.get("container-title", ""),
                        doi=record.get("DOI"),
                        volume=record.get("volume"),
                        pages=record.get("page"),
                    )
                ],
                f"[{number}]",
                as_data=rng.random() < 0.5,
            )
    buffer = io.BytesIO()
    doc.document.save(buffer)
    data = buffer.getvalue()
    keys = [r.key for r in parse_docx(data, file="sample.docx").references]
    return data, dict(zip(keys, managers, strict=True))


def _table(
    title: str,
    totals: collections.Counter[str],
    flagged: collections.Counter[str],
    unverified: collections.Counter[str],
) -> None:
    print(f"\n{title:22} {'works':>6} {'flagged':>8} {'rate':>7} {'unverified':>10} {'rate':>7}")
    for name in sorted(totals):
        total = totals[name]
        print(
            f"{name:22} {total:6} {flagged[name]:8} {flagged[name] / total:7.2%} "
            f"{unverified[name]:10} {unverified[name] / total:7.2%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--count", type=int, default=1000, help="works to sample")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config", default="no-limits", help="scholarsim config name")
    parser.add_argument(
        "--freetext", action="store_true", help="\\bibitem free text instead of BibTeX"
    )
    parser.add_argument(
        "--docx", action="store_true", help="a Word manuscript with citation-manager field codes"
    )
    args = parser.parse_args()
    if not WORLD.exists():
        raise SystemExit(f"{WORLD} not found: the benchmark needs ../shared")

    rng = random.Random(args.seed)
    works = sample(citable_works(), args.count, rng)
    if args.docx:
        data, managers = sample_docx(works, rng)
        keys = list(managers)
        groups = {
            "type": {k: w["type"] for k, w in zip(keys, works, strict=True)},
            "field": {k: field_of(w) for k, w in zip(keys, works, strict=True)},
            "field code": managers,
        }
        results = audit_text("sample.docx", data, args.config)
    else:
        filename, text, text_styles, venue_styles = sample_text(works, rng, args.freetext)
        groups = {
            "type": {f"w{i}": work["type"] for i, work in enumerate(works)},
            "field": {f"w{i}": field_of(work) for i, work in enumerate(works)},
            "venue style": venue_styles,
        }
        if args.freetext:
            groups["citation style"] = text_styles
        results = audit_text(filename, text, args.config)

    totals = {name: collections.Counter[str]() for name in groups}
    flagged = {name: collections.Counter[str]() for name in groups}
    unverified = {name: collections.Counter[str]() for name in groups}
    for result in results:
        key = result.reference.key  # type: ignore[attr-defined]
        for name, labels in groups.items():
            totals[name][labels[key]] += 1
        line = prediction(result)
        if not line["covered"]:
            # A faithful citation left unverified is coverage lost, not a false alarm.
            for name, labels in groups.items():
                unverified[name][labels[key]] += 1
            where = ", ".join(labels[key] for labels in groups.values())
            print(f"unverified {key} ({where}): {result.reason}")  # type: ignore[attr-defined]
            print(f"    as cited: {result.reference.free_text or result.reference.title!r}")  # type: ignore[attr-defined]
        if not line["flagged"]:
            continue
        for name, labels in groups.items():
            flagged[name][labels[key]] += 1
        errors = [f for f in result.findings if f.severity == "error"]  # type: ignore[attr-defined]
        where = ", ".join(labels[key] for labels in groups.values())
        print(f"flagged {key} ({where}): {result.verdict.value}")  # type: ignore[attr-defined]
        for finding in errors:
            print(f"    {finding.code}: cited {finding.cited!r} found {finding.found!r}")
        print(f"    as cited: {result.reference.free_text or result.reference.venue!r}")  # type: ignore[attr-defined]
    for name in groups:
        _table(name, totals[name], flagged[name], unverified[name])
    total, bad = sum(totals["type"].values()), sum(flagged["type"].values())
    lost = sum(unverified["type"].values())
    whole = max(1, total)
    print(f"\n{'all':22} {total:6} {bad:8} {bad / whole:7.2%} {lost:10} {lost / whole:7.2%}")


if __name__ == "__main__":
    main()
