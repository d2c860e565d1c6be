"""Zotero libraries: the desktop's local API and the web API v3, answered as Zotero answers."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.errors import InputError
from refaudit.models import Verdict
from refaudit.remote.zotero import parse_spec, read_library

pytestmark = pytest.mark.anyio
LOCAL = "http://localhost:23119/api"
WEB = "https://api.zotero.org"


def zotero_item(
    key: str,
    item_type: str,
    title: str,
    creators: list[tuple[str, str]],
    date: str,
    *,
    csl: bool = True,
    extra: str = "",
    **fields: str,
) -> dict[str, Any]:
    """An item as `GET …/items?include=data,csljson` returns it (links and meta trimmed)."""
    data: dict[str, Any] = {
        "key": key,
        "version": 1021,
        "itemType": item_type,
        "title": title,
        "creators": [
            {"creatorType": "author", "firstName": given, "lastName": family}
            for family, given in creators
        ],
        "date": date,
        "extra": extra,
        "tags": [],
        "collections": ["QX7TQDMN"],
        "relations": {},
        "dateAdded": "2024-02-11T09:14:03Z",
        "dateModified": "2024-02-11T09:14:03Z",
        **fields,
    }
    item: dict[str, Any] = {
        "key": key,
        "version": 1021,
        "library": {"type": "user", "id": 0, "name": ""},
        "links": {"self": {"href": f"{LOCAL}/users/0/items/{key}", "type": "application/json"}},
        "meta": {"creatorSummary": creators[0][0] if creators else "", "numChildren": 0},
        "data": data,
    }
    if csl:
        year, *rest = date.split("-")
        csl_types = {"journalArticle": "article-journal", "conferencePaper": "paper-conference"}
        item["csljson"] = {
            "id": f"0/{key}",
            "type": csl_types.get(item_type, "article"),
            "title": title,
            "container-title": fields.get("publicationTitle") or fields.get("proceedingsTitle"),
            "page": fields.get("pages"),
            "volume": fields.get("volume"),
            "issue": fields.get("issue"),
            "DOI": fields.get("DOI"),
            "note": extra,
            "author": [{"family": family, "given": given} for family, given in creators],
            "issued": {"date-parts": [[year, *[int(part) for part in rest]]]},
        }
        item["csljson"] = {k: v for k, v in item["csljson"].items() if v}
    return item


LECUN = zotero_item(
    "X42A7DEB",
    "journalArticle",
    "Deep learning",
    [("LeCun", "Yann"), ("Bengio", "Yoshua"), ("Hinton", "Geoffrey")],
    "2015-05-28",
    extra="Citation Key: lecun2015deep\nPMID: 26017442",
    publicationTitle="Nature",
    volume="521",
    issue="7553",
    pages="436-444",
    DOI="10.1038/nature14539",
)
VASWANI = zotero_item(
    "9KQ3UW2M",
    "conferencePaper",
    "Attention is all you need",
    [("Vaswani", "Ashish"), ("Shazeer", "Noam")],
    "2017",
    proceedingsTitle="Advances in Neural Information Processing Systems",
    volume="30",
)
LORA = zotero_item(
    "RB8F2KCX",
    "preprint",
    "LoRA: Low-Rank Adaptation of Large Language Models",
    [("Hu", "Edward J."), ("Shen", "Yelong")],
    "2021-06-17",
    csl=False,  # Zotero's JSON alone: the CSL shape is made from it
    archiveID="arXiv:2106.09685",
    repository="arXiv",
    DOI="10.48550/arXiv.2106.09685",
)
NOTE = {"key": "NOTE0001", "version": 3, "data": {"key": "NOTE0001", "itemType": "note"}}
ATTACHMENT = {
    "key": "ATT00001",
    "version": 3,
    "data": {"key": "ATT00001", "itemType": "attachment", "title": "Full Text PDF"},
}
COLLECTIONS = [
    {"key": "QX7TQDMN", "version": 9, "data": {"key": "QX7TQDMN", "name": "Thesis"}},
    {"key": "H2UJ3B7Z", "version": 9, "data": {"key": "H2UJ3B7Z", "name": "Reading group"}},
    {"key": "P9DSN4TE", "version": 9, "data": {"key": "P9DSN4TE", "name": "reading group"}},
]


class FakeZotero:
    """Zotero's API: paged lists with Total-Results (and, on the web, Link and Backoff)."""

    def __init__(self, items: list[dict[str, Any]], *, web: bool = False) -> None:
        self.items = items
        self.web = web
        self.requests: list[httpx.Request] = []
        self.status: int | None = None
        self.throttle: list[httpx.Response] = []
        self.backoff: str | None = None

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.throttle:
            return self.throttle.pop(0)
        if self.status == 403:
            text = "Local API is not enabled" if not self.web else "Forbidden"
            return httpx.Response(403, text=text, headers={"Content-Type": "text/plain"})
        path = urlsplit(str(request.url)).path.removeprefix("/api")
        query = {k: v[0] for k, v in parse_qs(request.url.query.decode()).items()}
        if path.endswith("/collections"):
            listing = COLLECTIONS
        elif "/collections/" in path:
            key = path.split("/collections/")[1].split("/")[0]
            listing = [i for i in self.items if key in i.get("data", {}).get("collections", [])]
        else:
            listing = self.items
        start, limit = int(query.get("start", 0)), int(query.get("limit", 25))
        page = listing[start : start + limit]
        headers = {
            "Content-Type": "application/json",
            "Zotero-API-Version": "3",
            "Zotero-Schema-Version": "29",
            "Total-Results": str(len(listing)),
            "Last-Modified-Version": "1021",
        }
        if self.web and start + limit < len(listing):
            following = request.url.copy_set_param("start", str(start + limit))
            last = request.url.copy_set_param("start", str(len(listing) - 1))
            headers["Link"] = f'<{following}>; rel="next", <{last}>; rel="last"'
        if self.backoff:
            headers["Backoff"] = self.backoff
        return httpx.Response(200, content=json.dumps(page).encode(), headers=headers)


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch):
    settings = load_settings(env={"ZOTERO_API_KEY": "P9NiFoyLeZu2bZNvvuQPDWsd"})
    settings.rate_limits = {name: 1000.0 for name in settings.sources}
    return settings


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds the reader slept (it is asked to wait; the test does not)."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("refaudit.remote.zotero.asyncio.sleep", sleep)
    return slept


async def test_the_local_library_is_read_as_records_skipping_notes_and_attachments(
    settings,
) -> None:
    fake = FakeZotero([LECUN, NOTE, VASWANI, ATTACHMENT, LORA])

    bibliography = await read_library(parse_spec("zotero:"), settings, transport=fake.transport())

    refs = {r.key: r for r in bibliography.references}
    assert list(refs) == ["lecun2015deep", "9KQ3UW2M", "RB8F2KCX"]  # BBT key, else item key
    assert {r.origin for r in refs.values()} == {"zotero library"}
    lecun = refs["lecun2015deep"]
    assert (lecun.title, lecun.year, lecun.month, lecun.venue) == (
        "Deep learning",
        2015,
        5,
        "Nature",
    )
    assert (lecun.doi, lecun.pmid, lecun.volume, lecun.number, lecun.pages) == (
        "10.1038/nature14539",
        "26017442",
        "521",
        "7553",
        "436-444",
    )
    assert refs["9KQ3UW2M"].entry_type == "inproceedings"
    lora = refs["RB8F2KCX"]
    assert (lora.arxiv_id, lora.year, [a.family for a in lora.authors]) == (
        "2106.09685",
        2021,
        ["Hu", "Shen"],
    )
    (request,) = fake.requests
    assert request.method == "GET" and request.url.path == "/api/users/0/items/top"
    assert request.headers["Zotero-API-Version"] == "3"
    assert "Zotero-API-Key" not in request.headers  # the local API takes no key
    assert request.url.params["include"] == "data,csljson"
    assert request.url.params["limit"] == "100"
    assert bibliography.files == ["zotero:"]


async def test_a_long_local_library_is_read_100_items_a_request(settings) -> None:
    items = [
        zotero_item(f"K{n:07d}", "journalArticle", f"Study {n}", [("Doe", "J.")], "2020")
        for n in range(230)
    ]
    fake = FakeZotero(items)

    bibliography = await read_library(parse_spec("zotero:"), settings, transport=fake.transport())

    assert len(bibliography.references) == 230
    assert [r.url.params.get("start", "0") for r in fake.requests] == ["0", "100", "200"]


async def test_a_collection_is_found_by_its_name_in_any_case_or_by_its_key(settings) -> None:
    fake = FakeZotero([LECUN, VASWANI])
    by_name = await read_library(
        parse_spec("zotero:collection/thesis"), settings, transport=fake.transport()
    )
    by_key = await read_library(
        parse_spec("zotero:collection/QX7TQDMN"), settings, transport=fake.transport()
    )
    assert len(by_name.references) == len(by_key.references) == 2
    assert fake.requests[-1].url.path == "/api/users/0/collections/QX7TQDMN/items/top"

    with pytest.raises(InputError, match="2 Zotero collections are named") as twice:
        await read_library(
            parse_spec("zotero:collection/Reading group"), settings, transport=fake.transport()
        )
    assert "H2UJ3B7Z" in (twice.value.hint or "")
    with pytest.raises(InputError, match="no Zotero collection named") as missing:
        await read_library(
            parse_spec("zotero:collection/Nope"), settings, transport=fake.transport()
        )
    assert "Thesis" in (missing.value.hint or "")


async def test_the_local_api_switched_off_says_which_setting_turns_it_on(settings) -> None:
    fake = FakeZotero([LECUN])
    fake.status = 403
    with pytest.raises(InputError, match="local API is off") as error:
        await read_library(parse_spec("zotero:"), settings, transport=fake.transport())
    assert "Allow other applications on this computer to communicate with Zotero" in (
        error.value.hint or ""
    )


def test_zotero_not_running_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("REFAUDIT_ZOTERO_LOCAL_URL", f"http://127.0.0.1:{port}/api")

    result = CliRunner().invoke(app, ["check", "zotero:", "--offline"])

    assert result.exit_code == 2
    assert "Zotero is not running" in result.output and "Traceback" not in result.output


async def test_the_web_api_pages_by_link_with_the_key_and_honours_backoff(
    settings, waits: list[float]
) -> None:
    items = [
        zotero_item(f"W{n:07d}", "journalArticle", f"Paper {n}", [("Roe", "A.")], "2019")
        for n in range(150)
    ]
    fake = FakeZotero(items, web=True)
    fake.backoff = "7"
    fake.throttle = [httpx.Response(429, headers={"Retry-After": "4"}, text="Too Many Requests")]

    bibliography = await read_library(
        parse_spec("zotero://users/475425"), settings, transport=fake.transport()
    )

    assert len(bibliography.references) == 150
    assert {r.url.path for r in fake.requests} == {"/users/475425/items/top"}
    assert [r.url.params.get("start", "0") for r in fake.requests] == ["0", "0", "100"]
    assert {r.headers["Zotero-API-Key"] for r in fake.requests} == {"P9NiFoyLeZu2bZNvvuQPDWsd"}
    assert waits == [4.0, 7.0]  # Retry-After once, then Backoff before the next page


async def test_a_refused_key_names_the_variable_to_set(settings) -> None:
    fake = FakeZotero([LECUN], web=True)
    fake.status = 403
    with pytest.raises(InputError, match="refused access") as error:
        await read_library(
            parse_spec("zotero://users/475425"), settings, transport=fake.transport()
        )
    assert "ZOTERO_API_KEY" in (error.value.hint or "")


@pytest.mark.parametrize("spec", ["zotero:collections", "zotero://users/abc", "zotero:/x/y"])
def test_other_spellings_are_refused_with_the_accepted_ones(spec: str) -> None:
    with pytest.raises(InputError, match="not a Zotero library") as error:
        parse_spec(spec)
    assert "zotero:collection/NAME" in (error.value.hint or "")


# The whole pipeline on a library: a faithful record verifies with no false alarm.


async def test_a_library_is_audited_and_fix_writes_a_new_bib(
    settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refaudit.audit import audit_paths
    from refaudit.bibtex import entries_of_results
    from refaudit.parsing import parse_bibtex
    from tests.fakes import FakeUpstreams, crossref_work, empty_searches

    lecun_work = crossref_work(
        "10.1038/nature14539",
        "Deep learning",
        authors=[("Yann", "LeCun"), ("Yoshua", "Bengio"), ("Geoffrey", "Hinton")],
        year=2015,
        month=5,
        venue="Nature",
        volume="521",
        issue="7553",
        page="436-444",
    )
    upstreams = FakeUpstreams()
    empty_searches(upstreams)
    upstreams.serve_crossref([lecun_work])
    upstreams.json("openalex", r"/works", {"meta": {"count": 0}, "results": []})
    upstreams.json("pubmed", r"/esummary.fcgi", {"result": {"uids": []}})
    zotero = FakeZotero([LECUN])

    def both(request: httpx.Request) -> httpx.Response:
        if request.url.host == "localhost":
            return zotero.handle(request)
        return upstreams.handler(request)

    settings.use_cache = False
    report = await audit_paths([Path("zotero:")], settings, transport=httpx.MockTransport(both))

    (result,) = report.results
    assert result.verdict == Verdict.VERIFIED
    assert [f.code for f in result.findings if f.severity != "info"] == []
    assert report.files == ["zotero:"]
    text = entries_of_results(report.results)
    assert text.startswith("% lecun2015deep: verified (zotero library)\n@article{lecun2015deep,")
    (entry,) = parse_bibtex(text).references
    assert (entry.doi, entry.year, entry.title) == ("10.1038/nature14539", 2015, "Deep learning")


def test_fix_never_writes_into_zotero(tmp_path: Path) -> None:
    runner = CliRunner()
    in_place = runner.invoke(app, ["fix", "zotero:", "--in-place"])
    assert in_place.exit_code == 2 and "cannot write into this input" in in_place.output
    existing = tmp_path / "refs.bib"
    existing.write_text("@misc{a, title = {Kept}}\n")
    taken = runner.invoke(app, ["fix", "zotero:", "-o", str(existing)])
    assert taken.exit_code == 2 and "already exists" in taken.output
    assert existing.read_text() == "@misc{a, title = {Kept}}\n"
