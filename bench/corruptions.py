"""Detection on corrupted citations of random works from the benchmark world.

The companion of bench/false_alarms.py: the same random, type-stratified works,
each cited with one thing wrong the way hallucinated references are wrong (a
year off by two or more, another work's authors, the last authors dropped, a
title word swapped, a fabricated or chimeric title, another work's DOI or
venue, another real venue of the same field in any citation style, another
conference's acronym). Audited through the real pipeline against scholarsim; prints, per kind
of corruption, how many were flagged and how many named the corrupted field.

    python bench/corruptions.py                   # ~1,000 corrupted citations, seed 3
"""

from __future__ import annotations

import argparse
import collections
import copy
import random
import re
from collections.abc import Callable

from accuracy import FIELD_ALIASES, prediction
from false_alarms import citable_works, render, sample
from simulator import WORLD, audit_text
from venue_styles import acronym, field_of

from refaudit.match.abbreviations import same_iso4

Corruption = Callable[[dict, dict, random.Random], list[str] | None]


def _wrong_year(work: dict, _other: dict, rng: random.Random) -> list[str]:
    work["year"] += rng.choice([-5, -4, -3, -2, 2, 3, 4])
    return ["year"]


def _wrong_venue(work: dict, other: dict, _rng: random.Random) -> list[str] | None:
    if work["type"] not in ("journal-article", "proceedings-article"):
        return None
    if not work.get("venue") or not other.get("venue") or other["venue"] == work["venue"]:
        return None
    work["venue"] = other["venue"]
    work.pop("venue_short", None)
    return ["venue"]


def _same_field_venue(work: dict, other: dict, rng: random.Random) -> list[str] | None:
    """Another real venue of the same field and kind, written in any style (`other` is ignored)."""
    if work["type"] not in ("journal-article", "proceedings-article") or not work.get("venue"):
        return None
    peers = [
        w
        for w in _PEERS.get((work["type"], field_of(work)), [])
        if w.get("venue") and not _same_series(w, work)
    ]
    if not peers:
        return None
    peer = rng.choice(peers)
    work["venue"], work["venue_short"] = peer["venue"], peer.get("venue_short")
    return ["venue"]


def _same_series(a: dict, b: dict) -> bool:
    """Two editions or spellings of one venue ("9th … ICLR 2021", "11th … ICLR 2023")."""
    if same_iso4(a["venue"], b["venue"]):
        return True
    if _edition_free(a["venue"]) == _edition_free(b["venue"]):
        return True
    return any(a.get(name) and a.get(name) == b.get(name) for name in ("s2_venue", "dblp_venue"))


def _edition_free(venue: str) -> str:
    return " ".join(re.sub(r"\d+(?:st|nd|rd|th)?|[^\w\s]", " ", venue.lower()).split())


def _other_acronym(work: dict, other: dict, rng: random.Random) -> list[str] | None:
    """A conference paper cited with another conference's acronym."""
    if work["type"] != "proceedings-article" or not work.get("venue"):
        return None
    own = acronym(work)
    choices = [a for a in _ACRONYMS if a != own and a.lower() != (own or "").lower()]
    if not choices:
        return None
    short = rng.choice(choices)
    work["venue"] = work["venue_short"] = short
    return ["venue"]


def _swapped_authors(work: dict, other: dict, _rng: random.Random) -> list[str]:
    work["authors"] = other["authors"]
    return ["authors"]


def _partial_authors(work: dict, _other: dict, _rng: random.Random) -> list[str] | None:
    if not 3 <= len(work["authors"]) <= 6:
        return None
    work["authors"] = work["authors"][:-2]
    return ["authors"]


def _near_miss(work: dict, other: dict, rng: random.Random) -> list[str] | None:
    words = work["title"].split()
    long_words = [i for i, word in enumerate(words) if len(word) > 5 and word.isalpha()]
    spare = [w for w in other["title"].split() if len(w) > 5 and w.isalpha()]
    if len(words) < 5 or not long_words or not spare:
        return None
    index = rng.choice(long_words)
    replacement = rng.choice(spare)
    if replacement.lower() == words[index].lower():
        return None
    words[index] = replacement
    work["title"] = " ".join(words)
    return ["title"]


def _fabricated(work: dict, other: dict, rng: random.Random) -> list[str]:
    words = other["title"].split()
    work["title"] = " ".join(rng.sample(words, min(3, len(words))) + work["title"].split()[:4])
    work["authors"] = other["authors"]
    for identifier in ("doi", "arxiv_id"):
        work.pop(identifier, None)
    return []


def _chimeric(work: dict, other: dict, _rng: random.Random) -> list[str] | None:
    first, second = work["title"].split(), other["title"].split()
    if len(first) < 4 or len(second) < 4:
        return None
    work["title"] = " ".join(first[: len(first) // 2] + second[len(second) // 2 :])
    for identifier in ("doi", "arxiv_id"):
        work.pop(identifier, None)
    return []


def _wrong_doi(work: dict, other: dict, _rng: random.Random) -> list[str] | None:
    if not work.get("doi") or not other.get("doi"):
        return None
    work["doi"] = other["doi"]
    return ["doi"]


# Filled by corrupted_entries: works by (type, field), and the conference acronyms in the world.
_PEERS: dict[tuple[str, str], list[dict]] = {}
_ACRONYMS: list[str] = []

CORRUPTIONS: dict[str, Corruption] = {
    "wrong_year": _wrong_year,
    "wrong_venue": _wrong_venue,
    "same_field_venue": _same_field_venue,
    "other_acronym": _other_acronym,
    "swapped_authors": _swapped_authors,
    "partial_authors": _partial_authors,
    "near_miss_title": _near_miss,
    "fabricated": _fabricated,
    "chimeric_title": _chimeric,
    "wrong_doi": _wrong_doi,
}


def corrupted_entries(count: int, rng: random.Random) -> tuple[list[str], dict[str, tuple]]:
    """BibTeX entries, and for each key its corruption and the fields it made wrong."""
    by_type = citable_works()
    pool = [work for works in by_type.values() for work in works]
    for work in pool:
        _PEERS.setdefault((work["type"], field_of(work)), []).append(work)
    _ACRONYMS[:] = sorted({a for w in by_type.get("proceedings-article", []) if (a := acronym(w))})
    entries: list[str] = []
    labels: dict[str, tuple] = {}
    kinds = list(CORRUPTIONS)
    for index, original in enumerate(sample(by_type, count, rng)):
        kind = kinds[index % len(kinds)]
        work = copy.deepcopy(original)
        fields = CORRUPTIONS[kind](work, rng.choice(pool), rng)
        if fields is None:
            continue
        key = f"c{index}"
        entry, _ = render(work, key, random.Random(index))
        if kind == "wrong_doi" and "doi = " not in entry:
            entry = entry[: entry.rindex("}")] + f"  doi = {{{work['doi']}}},\n}}\n"
        entries.append(entry)
        labels[key] = (kind, fields)
    return entries, labels


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--count", type=int, default=1400, help="works to sample")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--config", default="no-limits", help="scholarsim config name")
    args = parser.parse_args()
    if not WORLD.exists():
        raise SystemExit(f"{WORLD} not found: the benchmark needs ../shared")

    entries, labels = corrupted_entries(args.count, random.Random(args.seed))
    results = audit_text("corrupted.bib", "\n".join(entries), args.config)

    totals: collections.Counter[str] = collections.Counter()
    flagged: collections.Counter[str] = collections.Counter()
    named: collections.Counter[str] = collections.Counter()
    for result in results:
        kind, fields = labels[result.reference.key]  # type: ignore[attr-defined]
        predicted = prediction(result)
        totals[kind] += 1
        flagged[kind] += bool(predicted["flagged"])
        found = {FIELD_ALIASES.get(f, f) for f in predicted["fields"]}  # type: ignore[union-attr]
        named[kind] += bool(fields) and set(fields) <= found
        if not predicted["flagged"]:
            matched = result.matched  # type: ignore[attr-defined]
            print(f"missed {result.reference.key} ({kind}): {result.verdict.value}")  # type: ignore[attr-defined]
            if "venue" in fields and matched is not None:
                print(f"    cited venue {result.reference.venue!r} record {matched.venue!r}")  # type: ignore[attr-defined]
    print(f"\n{'corruption':18} {'refs':>5} {'flagged':>8} {'field named':>12}")
    for kind in CORRUPTIONS:
        if totals[kind]:
            field_rate = f"{named[kind] / totals[kind]:.1%}" if kind not in _NO_FIELD else "—"
            print(
                f"{kind:18} {totals[kind]:5} {flagged[kind] / totals[kind]:8.1%} {field_rate:>12}"
            )
    total, caught = sum(totals.values()), sum(flagged.values())
    print(f"{'all':18} {total:5} {caught / max(1, total):8.1%}")


# No real counterpart, so no field to name: `not_found` is the right verdict.
_NO_FIELD = frozenset({"fabricated", "chimeric_title"})


if __name__ == "__main__":
    main()
