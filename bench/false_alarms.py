"""False alarms on faithful citations of random works from the benchmark world.

The labelled sets hold a few hundred valid references each; a 1 % false-alarm
target needs more than that to mean anything, and must hold for every kind of
work, not just ML papers. This script draws works at random from
../shared/bench/world.jsonl.gz (stratified by type: chapters, reports, theses,
datasets as well as articles), renders each as a faithful BibTeX entry in one of
the ways people write them (initials, "and others", short venue names, with or
without DOI), audits them through the real pipeline against scholarsim, and
reports how many are flagged, per type, with the evidence for each.

    python bench/false_alarms.py                  # 1,000 works, seed 1
    python bench/false_alarms.py --count 3000 --seed 7
    python bench/false_alarms.py --freetext       # \\bibitem lines in APA, Chicago, IEEE, Vancouver
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


def render(work: dict, key: str, rng: random.Random) -> str:
    """One faithful BibTeX entry for `work`, written the way some user would."""
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
    venue = work.get("venue_short") if rng.random() < 0.2 else None
    venue = venue or work.get("venue")
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
    return f"@{entry_type}{{{key},\n{body}}}\n"


def _initials(author: dict) -> str:
    return "".join(part[0] for part in (author.get("given") or "").split() if part[:1].isalpha())


def _style_name(author: dict, style: str) -> str:
    if "name" in author:
        return author["name"]
    family, given = author["family"], author.get("given") or ""
    if style == "vancouver":
        return f"{family} {_initials(author)}".strip()
    if style == "ieee":
        return " ".join([*(f"{c}." for c in _initials(author)), family])
    if style == "apa":
        return f"{family}, {' '.join(f'{c}.' for c in _initials(author))}".strip(", ")
    return f"{given} {family}".strip()


def _chicago_names(authors: list[dict]) -> str:
    """First author inverted, the others in natural order: "Xu, Minkai, Shitong Luo, and …"."""
    first = authors[0]
    names = [first["name"] if "name" in first else f"{first['family']}, {first.get('given') or ''}"]
    names += [_style_name(a, "chicago") for a in authors[1:]]
    if len(names) < 3:
        return " and ".join(n.strip(", ") for n in names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def render_text(work: dict, key: str, rng: random.Random) -> str:
    """One faithful \\bibitem in APA, Chicago, IEEE or Vancouver style."""
    style = rng.choice(["apa", "chicago", "ieee", "vancouver"])
    names = [_style_name(a, style) for a in work["authors"][:6]]
    etal = len(work["authors"]) > 6
    title, year = _latex(re.sub(r"<[^>]+>", "", work["title"])), work["year"]
    publisher = work.get("publisher") if work["type"] in ("book", "report", "thesis") else None
    venue = _latex(work.get("venue") or publisher or "")
    volume, pages = work.get("volume") or "", (work.get("pages") or "").replace("-", "--")
    if style == "vancouver":
        text = f"{', '.join(names)}{', et al' if etal else ''}. {title}. {venue}. {year}"
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
    else:
        authors = _chicago_names(work["authors"][:6])
        text = f"{authors}{' et al.' if etal else ''}. {year}. ``{title}.''"
        text += f" \\emph{{{venue}}}" + (f" {volume}" if volume else "")
        text += f": {pages}." if pages else "."
    if work.get("doi") and rng.random() < 0.3:
        text += f" https://doi.org/{work['doi']}."
    return f"\\bibitem{{{key}}} {text}\n"


def sample_text(works: list[dict], rng: random.Random, freetext: bool) -> tuple[str, str]:
    """A file name and its text: BibTeX entries, or a document of \\bibitem lines."""
    keys = [f"w{index}" for index in range(len(works))]
    if not freetext:
        return "sample.bib", "\n".join(render(w, k, rng) for w, k in zip(works, keys, strict=True))
    items = "\n".join(render_text(w, k, rng) for w, k in zip(works, keys, strict=True))
    return "sample.tex", (
        "\\documentclass{article}\n\\begin{document}\n\\nocite{*}\n"
        f"\\begin{{thebibliography}}{{{len(keys)}}}\n{items}\\end{{thebibliography}}\n"
        "\\end{document}\n"
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
    args = parser.parse_args()
    if not WORLD.exists():
        raise SystemExit(f"{WORLD} not found: the benchmark needs ../shared")

    rng = random.Random(args.seed)
    works = sample(citable_works(), args.count, rng)
    kinds = {f"w{index}": work["type"] for index, work in enumerate(works)}
    results = audit_text(*sample_text(works, rng, args.freetext), args.config)

    totals: collections.Counter[str] = collections.Counter()
    flagged: collections.Counter[str] = collections.Counter()
    for result in results:
        kind = kinds[result.reference.key]  # type: ignore[attr-defined]
        totals[kind] += 1
        if prediction(result)["flagged"]:
            flagged[kind] += 1
            errors = [f for f in result.findings if f.severity == "error"]  # type: ignore[attr-defined]
            print(f"flagged {result.reference.key} ({kind}): {result.verdict.value}")  # type: ignore[attr-defined]
            for finding in errors:
                print(f"    {finding.code}: cited {finding.cited!r} found {finding.found!r}")
    print(f"\n{'type':22} {'works':>6} {'flagged':>8} {'rate':>7}")
    for kind in sorted(totals):
        print(f"{kind:22} {totals[kind]:6} {flagged[kind]:8} {flagged[kind] / totals[kind]:7.2%}")
    total, bad = sum(totals.values()), sum(flagged.values())
    print(f"{'all':22} {total:6} {bad:8} {bad / max(1, total):7.2%}")


if __name__ == "__main__":
    main()
