"""Small bulk files in the exact public layouts, for the mirror tests.

`write_dumps(folder)` writes a Crossref public-data-file part (gzip'd JSON Lines,
one `/works` message per line, with two malformed lines), an OpenAlex snapshot
(`data/works/updated_date=…/part_000.gz`, one work in two partitions), a Semantic
Scholar `papers` release part (one malformed line) and a Retraction Watch CSV, built
from the same body builders as the API fakes. `build_test_mirror` leaves the
Semantic Scholar part out.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

from tests.fakes import FIXTURES, crossref_work, openalex_work

WAKEFIELD_DOI = "10.1016/s0140-6736(97)11096-0"
WAKEFIELD_TITLE = (
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental"
    " disorder in children"
)
RESNET_DOI = "10.1109/cvpr.2016.90"
RESNET_TITLE = "Deep Residual Learning for Image Recognition"
FILLER_TITLES = [
    "Long short-term memory",
    "Learning representations by back-propagating errors",
    "Gradient-based learning applied to document recognition",
    "A mathematical theory of communication",
    "Molecular structure of nucleic acids",
    "ImageNet classification with deep convolutional neural networks",
    "Dropout: a simple way to prevent neural networks from overfitting",
    "Batch normalization: accelerating deep network training",
]


def crossref_records() -> list[dict[str, Any]]:
    resnet = crossref_work(
        RESNET_DOI,
        RESNET_TITLE,
        authors=[("Kaiming", "He"), ("Xiangyu", "Zhang"), ("Shaoqing", "Ren"), ("Jian", "Sun")],
        year=2016,
        venue="2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
        type="proceedings-article",
        page="770-778",
        indexed={"date-time": "2026-10-20T08:00:00Z"},
    )
    fillers = [
        crossref_work(f"10.5555/filler.{n}", title, authors=[("Ann", f"Author{n}")], year=1990 + n)
        for n, title in enumerate(FILLER_TITLES)
    ]
    # The Wakefield record as Crossref serves it (recorded), with its retraction notices.
    wakefield = json.loads((FIXTURES / "crossref" / "work_with_notices.json").read_text())
    return [resnet, wakefield.get("message", wakefield), *fillers]


def openalex_records() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(older partition, newer partition); W1 is in both, with its title fixed in the newer."""
    older = [
        openalex_work("W1", "Deep residual learning for image recogniton (draft)", doi=RESNET_DOI),
    ]
    newer = [
        openalex_work(
            "W1",
            RESNET_TITLE,
            doi=RESNET_DOI,
            authors=["Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"],
            year=2016,
            venue="Computer Vision and Pattern Recognition",
        ),
        openalex_work(
            "W2",
            "Attention Is All You Need",
            doi="10.48550/arxiv.1706.03762",
            authors=["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"],
            year=2017,
            venue="arXiv (Cornell University)",
            locations=[{"id": "arxiv:1706.03762", "landing_page_url": None, "source": None}],
            type="preprint",
        ),
        openalex_work(
            "W3",
            WAKEFIELD_TITLE,
            doi=WAKEFIELD_DOI,
            pmid="9500320",
            authors=["A. J. Wakefield", "S. H. Murch"],
            year=1998,
            venue="The Lancet",
            is_retracted=True,
        ),
    ]
    return older, newer


SLOT_MACHINES_TITLE = (
    "Slot Machines: Discovering Winning Combinations of Random Weights in Neural Networks"
)


def s2_papers() -> list[dict[str, Any]]:
    """`papers` dataset lines (Semantic Scholar Datasets API): a conference paper with no
    DOI, which neither Crossref nor OpenAlex holds, and ResNet, which they hold too."""
    return [
        {
            "corpusid": 231632936,
            "externalids": {"DBLP": "conf/icml/AladagoT21", "CorpusId": 231632936},
            "url": "https://www.semanticscholar.org/paper/2a1e7b0f6d8c3e4f5a6b7c8d9e0f1a2b3c4d5e6f",
            "title": SLOT_MACHINES_TITLE,
            "authors": [
                {"authorId": "2047590132", "name": "Maxwell Mbabilla Aladago"},
                {"authorId": "1732879", "name": "L. Torresani"},
            ],
            "venue": "International Conference on Machine Learning",
            "publicationvenueid": "fc0a208c-acb7-47dc-a0d4-af8190e21d29",
            "year": 2021,
            "citationcount": 21,
            "isopenaccess": False,
            "publicationtypes": ["JournalArticle", "Conference"],
            "publicationdate": "2021-01-16",
            "journal": {"name": "", "pages": "163-174"},
        },
        {
            "corpusid": 206594692,
            "externalids": {"DOI": "10.1109/CVPR.2016.90", "CorpusId": 206594692},
            "url": "https://www.semanticscholar.org/paper/2c03df8b48bf3fa39054345bafabfeff15bfd11d",
            "title": RESNET_TITLE,
            "authors": [{"authorId": "39353098", "name": "Kaiming He"}],
            "venue": "Computer Vision and Pattern Recognition",
            "year": 2016,
            "publicationtypes": ["JournalArticle", "Conference"],
        },
    ]


def write_dumps(folder: Path) -> dict[str, Path]:
    """Write the three inputs below `folder`; returns their paths as `mirror build` takes them."""
    crossref_dir = folder / "crossref"
    crossref_dir.mkdir(parents=True)
    lines = [json.dumps(record) for record in crossref_records()]
    lines.insert(2, '{"DOI": "10.5555/broken", "title": ["cut short')
    lines.insert(5, json.dumps({"DOI": None, "title": ["no DOI"]}))
    with gzip.open(crossref_dir / "0000.jsonl.gz", "wt", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    works = folder / "openalex" / "data" / "works"
    for day, records in zip(("2026-10-01", "2026-11-01"), openalex_records(), strict=True):
        partition = works / f"updated_date={day}"
        partition.mkdir(parents=True)
        with gzip.open(partition / "part_000.gz", "wt", encoding="utf-8") as out:
            out.write(
                "".join(json.dumps(r | {"updated_date": f"{day}T00:00:00"}) + "\n" for r in records)
            )
    s2_dir = folder / "s2" / "papers"
    s2_dir.mkdir(parents=True)
    lines = [json.dumps(paper) for paper in s2_papers()]
    lines.append(json.dumps({"corpusid": 1, "title": "a line without the paper's url"}))
    with gzip.open(s2_dir / "part_000.jsonl.gz", "wt", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    csv_path = folder / "retraction_watch.csv"
    shutil.copyfile(FIXTURES / "retractionwatch" / "sample.csv", csv_path)
    return {
        "crossref": crossref_dir,
        "openalex": folder / "openalex",
        "s2": folder / "s2",
        "retractions": csv_path,
    }


def build_test_mirror(folder: Path, location: str | None = None) -> str:
    """Write the dumps below `folder` and build a mirror from them (default: a SQLite file)."""
    from refaudit.mirror.build import build_mirror

    dumps = write_dumps(folder / "dumps")
    target = location or str(folder / "mirror.sqlite3")
    build_mirror(
        target,
        inputs={"crossref": [dumps["crossref"]], "openalex": [dumps["openalex"]]},
        retractions=dumps["retractions"],
    )
    return target


BIBLIOGRAPHY = r"""
@inproceedings{he2016,
  title = {Deep Residual Learning for Image Recognition},
  author = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  booktitle = {CVPR}, year = {2016}, doi = {10.1109/CVPR.2016.90}
}
@inproceedings{he2016typo,
  title = {Deep Residual Learning for Image Recogntion},
  author = {He, Kaiming and Zhang, Xiangyu},
  booktitle = {CVPR}, year = {2016}
}
@article{wakefield1998,
  title = {Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive
           developmental disorder in children},
  author = {Wakefield, A. J. and Murch, S. H.},
  journal = {The Lancet}, volume = {351}, pages = {637--641}, year = {1998},
  doi = {10.1016/S0140-6736(97)11096-0}
}
@misc{vaswani2017,
  title = {Attention Is All You Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  year = {2017}, eprint = {1706.03762}, archivePrefix = {arXiv}
}
@article{invented2021,
  title = {Quantum gravitational lensing of sparse transformer attention maps},
  author = {Nobody, Imaginary},
  journal = {Journal of Tests}, year = {2021}
}
"""
