"""Write a scholarsim corpus as a Semantic Scholar Datasets `papers` release.

    python bench/export_s2.py --corpus FILE.jsonl[.gz]|demo --out DIR [--part-size N]

`../shared/scholarsim/export_dumps.py` writes the Crossref and OpenAlex bulk layouts;
Semantic Scholar publishes its graph as the Datasets API's `papers` release (gzip'd
JSON Lines, one paper per line, the Graph API's fields with lower-case keys and the
venue named by `publicationvenueid`). This script renders each paper the simulated
S2 holds with the simulator's own renderer (`src_s2.render_paper`, imported from
../shared at run time) and writes it in that layout, so a mirror built from it must
agree with the simulated `/graph/v1/paper` answers, as it does for the other two.

DIR/papers/part_NNN.jsonl.gz   one paper per line
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SCHOLARSIM = Path(__file__).resolve().parents[2] / "shared" / "scholarsim"

#: Graph API fields rendered, and the key each has in the `papers` dataset.
DATASET_KEYS = {
    "corpusId": "corpusid",
    "externalIds": "externalids",
    "url": "url",
    "title": "title",
    "authors": "authors",
    "venue": "venue",
    "year": "year",
    "referenceCount": "referencecount",
    "citationCount": "citationcount",
    "influentialCitationCount": "influentialcitationcount",
    "isOpenAccess": "isopenaccess",
    "s2FieldsOfStudy": "s2fieldsofstudy",
    "publicationTypes": "publicationtypes",
    "publicationDate": "publicationdate",
    "journal": "journal",
}


def papers(corpus: str) -> Iterator[dict[str, Any]]:
    """Every paper the simulated Semantic Scholar holds, as a `papers` dataset line."""
    sys.path.insert(0, str(SCHOLARSIM))
    import corpus_tools
    import src_s2
    from store import Store

    if corpus == "demo":
        store = Store(records=list(enumerate(corpus_tools.demo_records(), 1)))
    else:
        store = Store(corpus)
    fields = [*DATASET_KEYS, "publicationVenue"]
    for doc in store.all_docs(src_s2.SOURCE):
        paper = src_s2.render_paper(store, doc, fields, {})
        line = {key: paper.get(field) for field, key in DATASET_KEYS.items()}
        venue = paper.get("publicationVenue") or {}
        line["publicationvenueid"] = venue.get("id")
        yield line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--part-size", type=int, default=5000)
    args = parser.parse_args()
    folder = args.out / "papers"
    folder.mkdir(parents=True, exist_ok=True)
    count, out = 0, None
    for line in papers(args.corpus):
        if count % args.part_size == 0:
            if out is not None:
                out.close()
            out = gzip.open(folder / f"part_{count // args.part_size:03d}.jsonl.gz", "wt")
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        count += 1
    if out is not None:
        out.close()
    print(json.dumps({"papers": count, "folder": str(folder)}))


if __name__ == "__main__":
    main()
