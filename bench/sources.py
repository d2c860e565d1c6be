"""Sources benchmark: what resolving a bibliography's identifiers costs, per upstream.

Starts ../shared/scholarsim on the benchmark world, points refaudit at it with
every source URL at it (`simulator_env`) and a throw-away cache, pulls the DOIs and arXiv ids
out of a .bib file, and resolves them through every enabled source that can
look that kind of id up, all sources at once (DataCite as the pipeline asks
it: arXiv DOIs, then the DOIs Crossref and OpenAlex do not know). Prints, per
source, requests sent, 429s received, failed calls, wall time and cache hits:
first cold, then warm (same cache), where no request may be sent.

    python bench/sources.py                                   # scale-1000, realistic
    python bench/sources.py --bib ../shared/bench/public/scale-5000.bib --config no-limits
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from simulator import SHARED, simulator_env, start_simulator

DEFAULT_BIB = SHARED / "bench" / "public" / "scale-1000.bib"
_DOI_FIELD = re.compile(r"^\s*doi\s*=\s*[{\"](.+?)[}\"]\s*,?\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class SourceCost:
    """One source's share of one run."""

    asked: int = 0
    found: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


def identifiers_in(bib: Path) -> tuple[list[str], list[str]]:
    """DOIs (doi fields) and arXiv ids (entries that mention arXiv) of a .bib file, crudely."""
    from refaudit.identifiers import arxiv_id_from_doi, find_arxiv_id, normalize_doi

    dois: dict[str, None] = {}
    arxiv_ids: dict[str, None] = {}
    for entry in bib.read_text(encoding="utf-8").split("\n@")[1:]:
        for raw in _DOI_FIELD.findall(entry):
            doi = normalize_doi(raw)
            if doi:
                dois[doi] = None
                from_doi = arxiv_id_from_doi(doi)
                if from_doi:
                    arxiv_ids[from_doi] = None
        found = find_arxiv_id(entry)
        if found:
            arxiv_ids[found[0]] = None
    return list(dois), list(arxiv_ids)


async def resolve_all(
    dois: list[str], arxiv_ids: list[str]
) -> tuple[object, dict[str, SourceCost]]:
    """Look every id up in every source able to, all sources concurrently.

    DataCite, one request per DOI, is asked as the pipeline asks it: arXiv's 10.48550
    DOIs alongside the others, then the DOIs neither Crossref nor OpenAlex knows.
    """
    from refaudit.config import load_settings
    from refaudit.identifiers import is_datacite_arxiv_doi
    from refaudit.models import RunStats
    from refaudit.sources import open_sources, registry

    settings = load_settings()
    stats = RunStats()
    costs: dict[str, SourceCost] = {}
    known: set[str] = set()

    async def run(name: str, source: object, doi_list: list[str]) -> None:
        cost = costs.setdefault(name, SourceCost())
        started = time.monotonic()
        for capability, ids, method in (
            ("doi", doi_list, "lookup_dois"),
            ("arxiv", [] if name == "datacite" else arxiv_ids, "lookup_arxiv"),
        ):
            if capability not in source.capabilities or not ids:  # type: ignore[attr-defined]
                continue
            cost.asked += len(ids)
            try:
                found = await getattr(source, method)(ids)
                cost.found += len(found)
                if name in registry.resolvers("doi", 0) and method == "lookup_dois":
                    known.update(found)
            except Exception as exc:  # noqa: BLE001 - the bench reports every failure
                cost.errors.append(f"{type(exc).__name__}: {exc}")
        cost.seconds += time.monotonic() - started

    started = time.monotonic()
    async with open_sources(settings, stats) as sources:
        present = [(name, sources.get(name)) for name in sources.enabled if sources.get(name)]
        arxiv_dois = [doi for doi in dois if is_datacite_arxiv_doi(doi)]
        await asyncio.gather(
            *(run(name, src, arxiv_dois if name == "datacite" else dois) for name, src in present)
        )
        unknown = [doi for doi in dois if doi not in known and not is_datacite_arxiv_doi(doi)]
        await asyncio.gather(
            *(run(name, src, unknown) for name, src in present if name == "datacite")
        )
    stats.elapsed_s = time.monotonic() - started
    return stats, costs


def report(title: str, stats: object, costs: dict[str, SourceCost]) -> None:
    print(f"\n{title} (wall {stats.elapsed_s:.1f} s)")  # type: ignore[attr-defined]
    header = f"{'source':<16}{'asked':>7}{'found':>7}{'requests':>10}{'429s':>6}"
    print(header + f"{'failed':>8}{'wall s':>9}{'cache hits':>12}")
    for name, cost in sorted(costs.items()):
        requests = stats.requests.get(name, 0)  # type: ignore[attr-defined]
        limited = stats.rate_limited.get(name, 0)  # type: ignore[attr-defined]
        hits = stats.cache_hits.get(name, 0)  # type: ignore[attr-defined]
        print(
            f"{name:<16}{cost.asked:>7}{cost.found:>7}{requests:>10}{limited:>6}"
            f"{len(cost.errors):>8}{cost.seconds:>9.1f}{hits:>12}"
        )
        for error in cost.errors[:3]:
            print(f"    ! {error[:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bib", type=Path, default=DEFAULT_BIB)
    parser.add_argument("--config", default="realistic", help="scholarsim config name or file")
    args = parser.parse_args()

    dois, arxiv_ids = identifiers_in(args.bib)
    print(f"{args.bib.name}: {len(dois)} DOIs, {len(arxiv_ids)} arXiv ids; config {args.config}")
    with tempfile.TemporaryDirectory(prefix="refaudit-bench-") as scratch:
        log = Path(scratch) / "requests.jsonl"
        process, url = start_simulator(args.config, log)
        os.environ.update(simulator_env(url))
        os.environ["REFAUDIT_CACHE_DIR"] = str(Path(scratch) / "cache")
        try:
            cold = asyncio.run(resolve_all(dois, arxiv_ids))
            report("cold cache", *cold)
            warm = asyncio.run(resolve_all(dois, arxiv_ids))
            report("warm cache", *warm)
            sent_warm = sum(warm[0].requests.values())  # type: ignore[attr-defined]
            print(f"\nsimulator log: {len(log.read_text().splitlines())} requests in total")
            if sent_warm:
                raise SystemExit(f"warm run sent {sent_warm} requests; expected none")
        finally:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
