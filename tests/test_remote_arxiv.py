"""arXiv papers: the e-print as arxiv.org answers it, unpacked safely, read as a checkout."""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.errors import InputError
from refaudit.parsing.archives import MAX_SOURCE_BYTES, MAX_SOURCE_MEMBERS
from refaudit.remote.arxiv import parse_spec, read_paper
from tests.adversarial.helpers import finishes_within

pytestmark = pytest.mark.anyio

MAIN_TEX = rb"""\documentclass{article}
\usepackage{graphicx}
\begin{document}
\input{sections/intro}
Low-rank adapters \cite{hu2021lora} build on attention \cite{vaswani2017attention}.
\includegraphics{figures/plot.png}
\bibliographystyle{plainnat}
\bibliography{refs}
\end{document}
"""
CITED_INTRO = rb"\input{sections/intro}"
INTRO_TEX = rb"\section{Introduction} Deep networks \cite{lecun2015deep} changed everything."
REFS_BIB = rb"""@article{lecun2015deep,
  author = {LeCun, Yann and Bengio, Yoshua and Hinton, Geoffrey},
  title = {Deep learning}, journal = {Nature}, year = {2015}, volume = {521}, pages = {436--444},
  doi = {10.1038/nature14539}}
@inproceedings{vaswani2017attention, author = {Vaswani, Ashish and Shazeer, Noam},
  title = {Attention is All you Need}, booktitle = {NeurIPS}, year = {2017}}
@misc{hu2021lora, author = {Hu, Edward J. and Shen, Yelong}, title = {{LoRA}: Low-Rank
  Adaptation of Large Language Models}, year = {2021}, eprint = {2106.09685},
  archiveprefix = {arXiv}}
@misc{uncited2020, title = {Never cited in the paper}, year = {2020}}
"""
BBL = rb"""\begin{thebibliography}{1}
\bibitem{lecun2015deep} Y.~LeCun, Y.~Bengio, and G.~Hinton.
\newblock Deep learning.
\newblock \emph{Nature}, 521:436--444, 2015.
\end{thebibliography}
"""


def tarball(
    members: dict[str, bytes], *, links: dict[str, tuple[str, bytes]] | None = None
) -> bytes:
    """A gzip'd tar as arXiv builds one (links: name → (type, target))."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1623900000
            archive.addfile(info, io.BytesIO(data))
        for name, (kind, target) in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
            info.linkname = target.decode()
            archive.addfile(info)
    return buffer.getvalue()


PAPER = {
    "main.tex": MAIN_TEX,
    "sections/intro.tex": INTRO_TEX,
    "refs.bib": REFS_BIB,
    "figures/plot.png": b"\x89PNG\r\n\x1a\n" + bytes(200),
    "neurips_2021.sty": rb"\ProvidesPackage{neurips_2021}",
}


class FakeArxiv:
    """arxiv.org's /e-print answers (current headers unless told otherwise)."""

    def __init__(self, body: bytes, *, content_type: str = "application/gzip", **headers: str):
        self.body = body
        self.headers = {"Content-Type": content_type, **headers}
        self.requests: list[httpx.Request] = []

    def transport(self) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            if request.url.path.endswith("/9999.99999"):
                return httpx.Response(
                    404, text="Article not found", headers={"Content-Type": "text/html"}
                )
            return httpx.Response(200, content=self.body, headers=self.headers)

        return httpx.MockTransport(handle)


@pytest.fixture
def settings(tmp_path: Path):
    settings = load_settings(env={"REFAUDIT_CACHE_DIR": str(tmp_path / "cache")})
    settings.rate_limits = {name: 1000.0 for name in settings.sources}
    return settings


async def test_a_tarball_is_read_as_a_checkout_cited_entries_only(settings) -> None:
    fake = FakeArxiv(
        tarball(PAPER),
        **{"Content-Disposition": 'attachment; filename="arXiv-2106.09685v2.tar.gz"'},
    )

    bibliography = await read_paper("arXiv:2106.09685", settings, transport=fake.transport())

    keys = sorted(r.key for r in bibliography.references)
    assert keys == ["hu2021lora", "lecun2015deep", "vaswani2017attention"]  # as cited
    lecun = next(r for r in bibliography.references if r.key == "lecun2015deep")
    assert lecun.file == "arXiv:2106.09685/refs.bib" and lecun.doi == "10.1038/nature14539"
    assert bibliography.files[0] == "arXiv:2106.09685/main.tex"
    (request,) = fake.requests
    assert str(request.url) == "https://arxiv.org/e-print/2106.09685"
    assert request.headers["User-Agent"].startswith("refaudit")


async def test_the_answer_is_cached_so_arxiv_is_asked_once(settings) -> None:
    fake = FakeArxiv(tarball(PAPER))
    for _ in range(2):
        await read_paper("arXiv:2106.09685v2", settings, transport=fake.transport())
    assert [r.url.path for r in fake.requests] == ["/e-print/2106.09685v2"]


async def test_an_old_style_answer_decoded_by_its_content_encoding_is_read_too(settings) -> None:
    # Older arXiv answers: application/x-eprint-tar with Content-Encoding x-gzip.
    fake = FakeArxiv(
        tarball(PAPER), content_type="application/x-eprint-tar", **{"Content-Encoding": "x-gzip"}
    )
    bibliography = await read_paper("arXiv:hep-th/9901001", settings, transport=fake.transport())
    assert len(bibliography.references) == 3
    assert fake.requests[0].url.path == "/e-print/hep-th/9901001"


async def test_a_single_gzipped_tex_with_its_own_bibliography_is_read(settings) -> None:
    tex = MAIN_TEX.replace(rb"\bibliography{refs}", BBL).replace(
        CITED_INTRO, rb"\cite{lecun2015deep}"
    )
    fake = FakeArxiv(
        gzip.compress(tex),
        **{"Content-Disposition": 'attachment; filename="arXiv-1501.00001v1.gz"'},
    )

    bibliography = await read_paper("arXiv:1501.00001", settings, transport=fake.transport())

    (reference,) = bibliography.references
    assert (reference.key, reference.title, reference.year) == (
        "lecun2015deep",
        "Deep learning",
        2015,
    )
    assert reference.file == "arXiv:1501.00001/main.tex"


async def test_a_source_without_its_bib_is_read_from_its_bbl(settings) -> None:
    members = {"ms.tex": MAIN_TEX.replace(CITED_INTRO, rb"\cite{lecun2015deep}"), "ms.bbl": BBL}
    fake = FakeArxiv(tarball(members))

    bibliography = await read_paper("arXiv:2106.09685", settings, transport=fake.transport())

    assert [r.key for r in bibliography.references] == ["lecun2015deep"]
    assert any(p.code == "missing-bib-file" for p in bibliography.problems)


async def test_a_withheld_source_is_read_from_the_pdf_arxiv_answers_with(settings) -> None:
    from tests import pdfbytes

    pdf = pdfbytes.text_page(
        [
            "References",
            '[1] Y. LeCun, Y. Bengio, and G. Hinton, "Deep learning," Nature, vol. 521, '
            "pp. 436-444, 2015.",
        ]
    )
    fake = FakeArxiv(pdf, content_type="application/pdf")

    bibliography = await read_paper("arXiv:2106.09685", settings, transport=fake.transport())

    (reference,) = bibliography.references
    assert reference.title == "Deep learning" and reference.year == 2015
    assert reference.file == "arXiv:2106.09685/paper.pdf"
    assert [r.url.path for r in fake.requests] == ["/e-print/2106.09685"]  # no second request


async def test_an_unknown_paper_is_not_found_in_one_line(settings) -> None:
    with pytest.raises(InputError, match="no such paper"):
        await read_paper("arXiv:9999.99999", settings, transport=FakeArxiv(b"").transport())


@pytest.mark.parametrize(
    ("spec", "identifier"),
    [
        ("arXiv:2106.09685", "2106.09685"),
        ("arxiv:2106.09685v2", "2106.09685v2"),
        ("https://arxiv.org/abs/2106.09685v2", "2106.09685v2"),
        ("https:/arxiv.org/pdf/2106.09685v1.pdf", "2106.09685v1"),  # as a shell Path gives it
        ("arXiv:hep-th/9901001", "hep-th/9901001"),
        ("https://arxiv.org/abs/math.GT/0309136", "math/0309136"),
    ],
)
def test_ids_urls_versions_and_old_style_ids(spec: str, identifier: str) -> None:
    assert parse_spec(spec) == identifier


def test_offline_without_the_paper_cached_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["check", "arXiv:2106.09685", "--offline"], env={"REFAUDIT_CACHE_DIR": str(tmp_path)}
    )
    assert result.exit_code == 2
    assert "arXiv:2106.09685" in result.output and "not in the cache" in result.output
    assert "Traceback" not in result.output


# Hostile sources: nothing written outside, no links, bounded, refused in one line.


@pytest.mark.parametrize("name", ["../evil.tex", "/etc/cron.d/evil.tex", "a/../../evil.tex"])
async def test_a_member_leading_outside_refuses_the_archive(settings, name: str) -> None:
    fake = FakeArxiv(tarball({"main.tex": MAIN_TEX, name: b"\\documentclass{x}"}))
    with pytest.raises(InputError, match="points outside the archive"):
        await read_paper("arXiv:2106.09685", settings, transport=fake.transport())


async def test_links_are_never_created(settings, tmp_path: Path) -> None:
    secret = tmp_path / "secret.bib"
    secret.write_text("@misc{stolen, title = {Read from outside the paper}}\n")
    fake = FakeArxiv(
        tarball(
            {"main.tex": MAIN_TEX.replace(rb"\input{sections/intro}", b"")},
            links={
                "refs.bib": ("symlink", str(secret).encode()),
                "other.bib": ("hard", b"/etc/passwd"),
            },
        )
    )

    with pytest.raises(InputError) as error:
        await read_paper("arXiv:2106.09685", settings, transport=fake.transport())

    assert error.value.message == (
        "arXiv:2106.09685/main.tex: no references found: bibliography file 'refs.bib' "
        "not found (looked in arXiv:2106.09685)"
    )


async def test_a_gzip_bomb_stops_at_the_cap(settings) -> None:
    deflater = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    body = b"".join(deflater.compress(chunk) for _ in range(MAX_SOURCE_BYTES // len(chunk) + 8))
    body += deflater.flush()
    assert len(body) < 4 << 20
    with finishes_within(60), pytest.raises(InputError, match="refused as a gzip bomb"):
        await read_paper("arXiv:2106.09685", settings, transport=FakeArxiv(body).transport())


async def test_a_member_declaring_more_than_the_cap_refuses_the_tar(settings) -> None:
    header = tarfile.TarInfo("huge.tex")
    header.size = MAX_SOURCE_BYTES + 1
    body = gzip.compress(header.tobuf() + b"\\documentclass{article}" + bytes(512))
    with pytest.raises(InputError, match="refused as a tar bomb"):
        await read_paper("arXiv:2106.09685", settings, transport=FakeArxiv(body).transport())


async def test_a_flood_of_members_is_refused(settings) -> None:
    members = {f"f{n}.txt": b"" for n in range(MAX_SOURCE_MEMBERS + 1)}
    with pytest.raises(InputError, match=f"more than {MAX_SOURCE_MEMBERS} files"):
        await read_paper(
            "arXiv:2106.09685", settings, transport=FakeArxiv(tarball(members)).transport()
        )
