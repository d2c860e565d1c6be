"""An arXiv paper as references: its source, read as a local checkout would be.

`GET https://arxiv.org/e-print/ID[vN]` answers with the paper's source: a gzip'd
tarball (`application/gzip`, `arXiv-ID.tar.gz`), a single gzip'd `.tex`
(`arXiv-ID.gz`), or, when the authors withheld the source, the PDF
(`application/pdf`). Older answers said `application/x-eprint-tar` with
`Content-Encoding: x-gzip`; the body is therefore recognised by its bytes, not by
its headers. The request goes through a `SourceClient` (arXiv's one request every
three seconds, the response cache, the circuit breaker, offline mode).

The source is unpacked into a temporary folder (only TeX, BibTeX and .bbl files; no
links, nothing outside; bounded, see `refaudit.parsing.archives`), the main file
(the `.tex` with `\\documentclass` and `\\begin{document}`) is read with the `.bib`
or `.bbl` it names, and the file names in the report read `arXiv:ID/main.tex`. A
withheld source, answered with the PDF, is read by the PDF reader.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.errors import InputError
from refaudit.identifiers import parse_arxiv_id
from refaudit.models import Bibliography, RunStats

if TYPE_CHECKING:
    import httpx

    from refaudit.config import Settings

MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024
"""an answer larger than this is not read (arXiv caps a submission at 50 MB)"""
_SPEC = re.compile(
    r"^(?:arxiv:\s*|https?:/{1,2}(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|e-print)/)(?P<id>.+)$",
    re.IGNORECASE,
)
_DOCUMENT = re.compile(r"\\documentclass\b.*?\\begin\s*\{document\}", re.DOTALL)
_MAIN_NAMES = ("main.tex", "ms.tex", "paper.tex", "article.tex")


def is_arxiv(spec: str) -> bool:
    return _SPEC.match(spec.strip()) is not None


def parse_spec(spec: str) -> str:
    """`arXiv:2106.09685`, `…v2`, `hep-th/9901001`, an arxiv.org abs / pdf URL → the id
    as arXiv serves it (with its version when one was named).

    Raises:
        InputError: no arXiv id in it.
    """
    match = _SPEC.match(spec.strip())
    parsed = parse_arxiv_id(match.group("id").removesuffix(".pdf")) if match else None
    if parsed is None:
        raise InputError(
            f"not an arXiv paper: {spec!r}",
            hint="arXiv:2106.09685, arXiv:hep-th/9901001v2 or https://arxiv.org/abs/2106.09685",
        )
    identifier, version = parsed
    return f"{identifier}v{version}" if version else identifier


async def read_paper(
    spec: str, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> Bibliography:
    """The references of an arXiv paper, from its source (or its PDF when that is all).

    Raises:
        InputError: no such paper, arXiv unreachable, or a source that cannot be read.
    """
    identifier = parse_spec(spec)
    label = f"arXiv:{identifier}"
    data = await _download(identifier, settings, transport)
    with tempfile.TemporaryDirectory(prefix="refaudit-arxiv-") as folder:
        root = Path(folder).resolve()
        try:
            bibliography = _read_source(data, root, label=label)
        except InputError as error:
            # The temporary folder means nothing to the user: name the paper instead.
            raise InputError(error.message.replace(str(root), label), hint=error.hint) from None
        return _relabelled(bibliography, root, label)


async def _download(
    identifier: str, settings: Settings, transport: httpx.AsyncBaseTransport | None
) -> bytes:
    from refaudit.cache import open_cache
    from refaudit.errors import SourceError
    from refaudit.sources.arxiv import RATE_LIMIT
    from refaudit.sources.client import SourceClient

    cache, _problem = (
        open_cache(settings.resolved_cache_dir())
        if settings.use_cache
        else (
            None,
            None,
        )
    )
    client = SourceClient(
        "arxiv_eprint",
        settings.base_urls["arxiv_eprint"],
        settings=settings,
        stats=RunStats(),
        limits={"default": RATE_LIMIT},
        cache=cache,
        transport=transport,
        binary=True,
    )
    label = f"arXiv:{identifier}"
    try:
        fetched = await client.get(f"/e-print/{identifier}", accept=(200, 404))
    except SourceError as error:
        raise InputError(
            f"arXiv did not give the paper's source: {error.message}", file=label
        ) from None
    finally:
        await client.aclose()
        if cache is not None:
            cache.close()
    if fetched.status == 404:
        raise InputError("arXiv has no such paper (404)", file=label)
    if len(fetched.text) > MAX_DOWNLOAD_BYTES:
        raise InputError("arXiv's answer is larger than 100 MB; not read", file=label)
    return fetched.content


def _read_source(data: bytes, root: Path, *, label: str) -> Bibliography:
    """What the answer holds: a PDF, a gzip'd tarball or .tex, or (decoded already) either."""
    # Here, not at the top: `check` asks every input whether it names a paper (`is_arxiv`),
    # and a file's check needs neither the archive readers nor their XML parser.
    from refaudit.parsing.archives import extract_sources, gunzip
    from refaudit.parsing.files import parse_file

    if data.startswith(b"%PDF"):  # the authors withheld the source: read the PDF's list
        (root / "paper.pdf").write_bytes(data)
        return parse_file(root / "paper.pdf")
    if data.startswith(b"\x1f\x8b"):
        data = gunzip(data, file=label)
    if len(data) > 262 and data[257:262] == b"ustar":
        files = extract_sources(data, root, file=label)
    elif _looks_like_tex(data):
        (root / "main.tex").write_bytes(data)
        files = [root / "main.tex"]
    else:
        raise InputError("arXiv's answer is neither a TeX source nor a PDF", file=label)
    return parse_file(_main_file(files, label=label))


def _looks_like_tex(data: bytes) -> bool:
    head = data[:65536].decode("utf-8", "replace")
    return "\\documentclass" in head or "\\begin{thebibliography}" in head or "\\input" in head


def _main_file(files: list[Path], *, label: str) -> Path:
    """The document to read: a .tex with \\documentclass and \\begin{document}; else a
    .bbl; else a .bib."""
    documents = [
        path
        for path in files
        if path.suffix.lower() in (".tex", ".ltx")
        and _DOCUMENT.search(path.read_text(encoding="utf-8", errors="replace"))
    ]
    if documents:
        documents.sort(key=lambda p: (p.name.lower() not in _MAIN_NAMES, len(p.parts), p.name))
        return documents[0]
    for suffix in (".bbl", ".bib"):
        found = sorted(p for p in files if p.suffix.lower() == suffix)
        if found:
            return found[0]
    raise InputError("the paper's source holds no LaTeX document, .bbl or .bib", file=label)


def _relabelled(bibliography: Bibliography, root: Path, label: str) -> Bibliography:
    """File names under the temporary folder read as `arXiv:ID/…`."""
    prefix = str(root)

    def named(file: str | None) -> str | None:
        if file is None or not file.startswith(prefix):
            return file
        return label + file[len(prefix) :]

    for reference in bibliography.references:
        reference.file = named(reference.file)
    bibliography.problems = [
        replace(problem, file=named(problem.file) or problem.file)
        for problem in bibliography.problems
    ]
    bibliography.files = [named(file) or file for file in bibliography.files]
    return bibliography
