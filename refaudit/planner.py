"""The evidence planner: which source to ask about a reference, in what order, and when to stop.

Identifiers are resolved in batches first (evidence.py); what the planner
decides is the search for references whose identity is still open. From what
the citation says about itself (its entry type, year, venue, identifiers) it
reads what kind of work is cited and:

- leaves out every source that cannot hold that kind of work (`cannot_index`:
  an 1890 book is not on arXiv, a history journal is not in PubMed or DBLP);
- orders the others so that the cheapest source most likely to settle the
  identity goes first: Crossref's bibliographic matcher for journal articles
  and citation strings (a journal article's title is searched in OpenAlex just
  before it, `evidence._general_index_first`, as OpenAlex answers many titles in
  one request and a DOI it names brings Crossref's record without the matcher),
  OpenAlex for the rest, then the specialist indexes
  (DBLP for computing, PubMed for biomedicine, arXiv for preprints), and
  Semantic Scholar, whose shared 1 request/s pool sets the floor of a run,
  last;
- stops as soon as a convincing candidate settles the identity, or when the
  reference's search budget is spent; the sources it then did not reach are
  `not_asked: decided`.

Every decision is written on the reference's ledger with its reason, so the
JSON report and `check --details` show why a source was or was not asked.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from refaudit import match
from refaudit.models import Reference
from refaudit.sources import registry

#: Search requests one reference may cost (each source asked once per query).
SEARCH_BUDGET = 6
#: arXiv opened in August 1991; nothing older was posted there as a preprint.
ARXIV_FIRST_YEAR = 1991

_BOOK_TYPES = frozenset(
    {
        "book",
        "mvbook",
        "collection",
        "mvcollection",
        "reference",
        "mvreference",
        "periodical",
        "proceedings",
        "mvproceedings",
        "manual",
        "booklet",
    }
)
_CHAPTER_TYPES = frozenset(
    {"inbook", "bookinbook", "suppbook", "incollection", "suppcollection", "inreference"}
)
_THESIS_TYPES = frozenset({"thesis", "phdthesis", "mastersthesis"})
#: Entry types that describe things bibliographic databases rarely index: without an
#: identifier there is nothing to check them against, and no source is asked.
UNCHECKABLE_TYPES = frozenset({"online", "www", "webpage", "electronic", "software", "manual"})
#: Entry types a web page, dataset or model card is cited with when it has a URL.
_WEB_TYPES = frozenset({"misc", "online", "www", "webpage", "electronic"})
#: Hosts of publishers, repositories and indexes: a @misc pointing there cites a paper
#: (an OpenReview submission, an ACL Anthology page), which is searched for.
_SCHOLARLY_HOSTS = (
    "arxiv.org", "doi.org", "openreview.net", "aclanthology.org", "aclweb.org",
    "acm.org", "ieee.org", "springer.com", "sciencedirect.com", "elsevier.com",
    "nature.com", "science.org", "wiley.com", "tandfonline.com", "sagepub.com",
    "cambridge.org", "oup.com", "jstor.org", "ncbi.nlm.nih.gov", "europepmc.org",
    "biorxiv.org", "medrxiv.org", "ssrn.com", "researchgate.net", "semanticscholar.org",
    "scholar.google.com", "mlr.press", "neurips.cc", "nips.cc", "thecvf.com", "aaai.org",
    "ijcai.org", "usenix.org", "plos.org", "frontiersin.org", "mdpi.com", "pnas.org",
    "cell.com", "iop.org", "aps.org", "osf.io", "hal.science", "archives-ouvertes.fr",
    "zenodo.org", "figshare.com", "dblp.org", "jmlr.org", "iclr.cc", "icml.cc",
)  # fmt: skip
#: Words in a @misc's `howpublished`/`note` that say it is a paper after all.
_PAPER_NOTE = re.compile(
    r"arxiv|preprint|thesis|dissertation|report|proceedings|conference|journal|"
    r"workshop|symposium|rxiv|ssrn|submitted|in press|accepted",
    re.IGNORECASE,
)
#: Things no bibliographic index holds as works: asked of no search source.
_UNINDEXED_TYPES = frozenset({"patent", "set", "xdata", "artwork", "audio", "video", "music"})
_PREPRINT_TYPES = frozenset({"misc", "unpublished", "online", "techreport", "report"})

# Venue words that point to the biomedical literature PubMed indexes, and to the
# computer-science venues DBLP indexes. Matched on normalised venue words (prefixes).
_BIOMEDICAL = re.compile(
    r"\b(?:med|medic\w*|medicin\w*|clin\w*|health\w*|bio\w*|cell\w*|cancer|oncol\w*|"
    r"pharm\w*|nurs\w*|surg\w*|patholog\w*|physiol\w*|genet\w*|genom\w*|immun\w*|"
    r"neuro\w*|psychiatr\w*|epidemiol\w*|lancet|jama|bmj|nejm|plos|pediatr\w*|"
    r"paediatr\w*|cardio\w*|virol\w*|microbiol\w*|dental|dentistry|veterinar\w*|"
    r"endocrin\w*|diabet\w*|infect\w*|molecul\w*|radiol\w*|ophthalm\w*|dermat\w*|"
    r"gastro\w*|hepat\w*|nephrol\w*|obstet\w*|gynec\w*|toxicol\w*|nutri\w*|"
    r"psycho\w*|brain|blood|vaccin\w*|elife|embo|nucleic|protein\w*|bmc|anesth\w*|"
    r"anaesth\w*|orthop\w*|urol\w*|rheumat\w*|allerg\w*|respir\w*|thorac\w*|"
    r"transplant\w*|hospital\w*|nature|biorxiv|medrxiv|life sciences?)\b"
)
_COMPUTING = re.compile(
    r"\b(?:comput\w*|software|algorithm\w*|neural|learning|intelligen\w*|ieee|acm|"
    r"lncs|lecture notes|sig[a-z]+|informati\w*|robot\w*|vision|language processing|"
    r"linguistic\w*|data|database\w*|network\w*|programming|cyber\w*|semantic|web|"
    r"internet|graphics|security|cryptolog\w*|machine|automat\w*|arxiv|corr|usenix|"
    r"vldb|pmlr|neurips|nips|icml|iclr)\b"
)


_FIELD_NAMES = {"biomedicine": "biomedicine", "computing": "computer science"}

# Conference series whose proceedings are published with DOIs (IEEE, ACM, Springer
# LNCS, …): Crossref holds their papers as fully as it holds journals.
_DOI_PROCEEDINGS = re.compile(
    r"\b(?:ieee|acm|sig[a-z]+|lecture notes|lncs|springer|cvpr|iccv|eccv|wacv|icra|iros|"
    r"icassp|kdd|chi|uist|icde|icdm|cikm|recsys|wsdm|miccai)\b"
)


@dataclass(frozen=True)
class Kind:
    """What a citation says about the kind of work it cites."""

    #: article, conference, book, chapter, thesis, report, preprint or dataset
    work: str
    #: fields the venue (or an identifier) points to: "biomedicine", "computing"
    fields: frozenset[str]
    #: a paper without a venue to read the field from: any field index may hold it
    field_unknown: bool
    #: an entry type no bibliographic index holds as a work (patents, sets)
    unindexed: bool
    #: a conference whose proceedings carry DOIs (IEEE, ACM, Springer, …)
    doi_proceedings: bool
    year: int | None
    #: the work kind was guessed from a citation string that shows none of its
    #: marks: "Title. Vilnius University. 2016" may be a thesis or report as well
    #: as a journal article (a journal article is cited with volume or pages), and
    #: a string whose venue could not be read may be anything
    guessed: bool = False

    @property
    def preprint(self) -> bool:
        return self.work == "preprint"

    @property
    def journal(self) -> bool:
        return self.work == "article"


def kind_of(reference: Reference) -> Kind:
    """Read the kind of work from entry type, venue, identifiers and year."""
    entry_type = (reference.entry_type or "misc").lower()
    venue = match.normalize_text(reference.venue or "")
    preprint_venue = match.is_preprint_venue(reference.venue)
    if entry_type in _BOOK_TYPES:
        work = "book"
    elif entry_type in _CHAPTER_TYPES:
        work = "chapter"
    elif entry_type in _THESIS_TYPES:
        work = "thesis"
    elif preprint_venue or (not venue and (reference.arxiv_id or entry_type in _PREPRINT_TYPES)):
        work = "preprint"
    elif entry_type == "inproceedings" or match.is_conference_venue(reference.venue):
        work = "conference"
    elif entry_type in ("techreport", "report"):
        work = "report"
    elif entry_type in ("dataset", "software"):
        work = "dataset"
    else:
        work = "article"
    fields = set()
    if reference.pmid or reference.pmcid or (venue and _BIOMEDICAL.search(venue)):
        fields.add("biomedicine")
    if venue and (_COMPUTING.search(venue) or _is_known_computing(venue)):
        fields.add("computing")
    return Kind(
        work=work,
        fields=frozenset(fields),
        field_unknown=not venue and work in ("article", "conference", "report", "preprint"),
        unindexed=entry_type in _UNINDEXED_TYPES,
        doi_proceedings=work == "conference" and bool(_DOI_PROCEEDINGS.search(venue)),
        year=reference.year,
        guessed=bool(reference.free_text)
        and (
            not venue
            or (work == "article" and not (reference.volume or reference.number or reference.pages))
        ),
    )


def _is_known_computing(venue: str) -> bool:
    """A conference in refaudit's venue table (machine learning, vision, NLP, databases, …)."""
    return bool(venue) and match.is_conference_venue(venue) and not _BIOMEDICAL.search(venue)


def nothing_to_check(reference: Reference) -> str | None:
    """Why a reference is skipped (no source is asked about it), or None to check it."""
    if reference.doi or reference.arxiv_id or reference.pmid:
        return None
    if reference.entry_type in UNCHECKABLE_TYPES:
        return f"@{reference.entry_type} without DOI, arXiv id or PMID: nothing to check against"
    if is_web_resource(reference):
        return "not a scholarly work: a web resource cited by its URL, not in the indexes"
    if not (reference.title or reference.free_text):
        return "no title and no identifier: nothing to check against"
    return None


def is_web_resource(reference: Reference) -> bool:
    """A blog post, benchmark page, dataset or model card: a @misc with a URL and nothing
    that makes it a paper (no identifier, no venue or institution, a URL that is not a
    publisher's or repository's, no "preprint"/"report" note).

    A @misc without a URL is still searched: an invented paper is often cited that way.
    """
    if reference.entry_type not in _WEB_TYPES or not reference.url or reference.free_text:
        return False
    if reference.doi or reference.arxiv_id or reference.pmid or reference.venue:
        return False
    fields = reference.fields
    if fields.get("institution") or fields.get("school"):
        return False
    if any(_PAPER_NOTE.search(fields.get(name, "")) for name in ("howpublished", "note", "type")):
        return False
    host = (urlsplit(reference.url).hostname or "").lower()
    return bool(host) and not any(
        host == scholarly or host.endswith("." + scholarly) for scholarly in _SCHOLARLY_HOSTS
    )


def still_needed(
    source: str,
    kind: Kind,
    searched: Collection[str],
    *,
    identified: bool,
    disproved: bool = False,
    searchable: Collection[str] = (),
) -> str | None:
    """Why searching `source` could no longer change the verdict, or None to search it.

    `searched`: the sources whose search answered; `identified`: a convincing
    candidate is already in hand (its fields disagree, or it would have settled);
    `disproved`: an identifier look-up showed the cited identifier does not exist;
    `searchable`: every source the run may search.

    - A source that merely might hold this kind of work adds nothing once two
      sources that index it have answered; but when the kind is only guessed from
      a citation string, the reference matcher, which reads whole strings, is.
    - Once the work is identified, a second record of it is all the comparison
      needs: after a general index (OpenAlex, exact titles) and a ranked search
      over an index covering the kind (Crossref's matcher for journals and books,
      Semantic Scholar for anything; both still find a changed or misspelt word),
      nothing else is asked.
    - A journal article, book or chapter outside computing is settled by Crossref's
      matcher, OpenAlex and one further index that can hold it, or by the two alone
      when the cited identifier is known not to exist: such works are registered
      with DOIs, but a title either index tokenises badly, a regional journal or a
      recent paper may be missing from both, and "not found" is the worst error to
      make. The further index is a ranked one (Semantic Scholar) when the run may
      search one: it still finds a title with a changed word, in one request
      (PubMed's word search takes two to say it has nothing).
      Theses and reports are not registered (Crossref does not cover them), so
      every source that holds them is asked before their absence is believed; so
      is a citation string read as a journal article although it gives no volume
      or pages.
    - Otherwise, until it is identified, every source that indexes the kind is
      asked: the cited venue may be invented (a conference paper cited as a
      journal), and only they can say the work does not exist;
      except arXiv (3 s a request) once Semantic Scholar, which holds arXiv's
      papers, has answered.
    """
    entry = _entry(source)
    entries = [_entry(n) for n in searched if n != source]
    covering = [e.title for e in entries if covers(e.name, kind)]
    if not covers(source, kind) and len(covering) >= 2 and not (kind.guessed and entry.matcher):
        return (
            f"{' and '.join(covering)}, which index {describe(kind)}, answered; "
            f"{entry.title} only might hold it"
        )
    general = next((e for e in entries if _is_general(e) and not e.ranked), None)
    ranked = next((e for e in entries if e.ranked and covers(e.name, kind)), None)
    if identified and general and ranked:
        return f"the work is identified; {general.title} and {ranked.title} gave its records"
    if (
        general
        and ranked
        and ranked.matcher
        and not kind.guessed
        and "computing" not in kind.fields
    ):
        # Journals and books outside computing are registered with DOIs: the matcher's
        # registry, a general index and one more index that can hold the work have
        # searched it. (Computing papers are often conference papers without DOIs,
        # whatever venue the citation claims.)
        further = next(
            (
                e
                for e in entries
                if e not in (general, ranked) and cannot_index(e.name, kind) is None
            ),
            None,
        )
        if further is not None:
            return (
                f"{ranked.title}, which registers {describe(kind)}, {general.title} and "
                f"{further.title} answered"
            )
        if disproved:
            return (
                f"{ranked.title}, which registers {describe(kind)}, and {general.title} "
                "answered, and the cited identifier does not exist"
            )
        further_ranked = next(
            (
                _entry(n)
                for n in searchable
                if n not in searched and _entry(n).ranked and cannot_index(n, kind) is None
            ),
            None,
        )
        if not entry.ranked and further_ranked is not None:
            return (
                f"{ranked.title}, which registers {describe(kind)}, and {general.title} "
                f"answered; {further_ranked.title} is the further index asked"
            )
    broad = next((e for e in entries if _is_general(e) and e.ranked and e.last_resort), None)
    if broad and entry.covers is not None and entry.covers <= {"preprint"}:
        return f"{broad.title}, which holds {entry.title}'s papers, answered"
    return None


def cannot_index(source: str, kind: Kind) -> str | None:
    """Why `source` cannot hold the cited kind of work, or None when it might."""
    entry = _entry(source)
    if kind.unindexed:
        return "bibliographic indexes do not hold this entry type"
    if entry.first_year and kind.year is not None and kind.year < entry.first_year:
        return f"{entry.title} holds nothing from before {entry.first_year}"
    if entry.holds and kind.work not in entry.holds:
        return f"{entry.title} does not hold a {_WORK_NAMES[kind.work]}"
    if entry.field and entry.field not in kind.fields and not kind.field_unknown:
        return f"{entry.title} indexes {_FIELD_NAMES[entry.field]}; nothing cited points there"
    return None


def covers(source: str, kind: Kind) -> bool:
    """The source indexes this kind of work so fully that its silence means absence.

    General indexes (OpenAlex, Semantic Scholar) cover everything they hold; a
    field index covers its field; Crossref, journals and books; arXiv, preprints.
    A reference none of the sources asked covers is "not in the sources asked",
    never "not found".
    """
    entry = _entry(source)
    if cannot_index(source, kind) is not None:
        return False
    if entry.field and entry.field not in kind.fields:
        return False
    if entry.covers is None or kind.work in entry.covers:
        return True
    return entry.registers_dois and kind.doi_proceedings


def search_order(reference: Reference, enabled: Collection[str]) -> list[str]:
    """The sources to search for one reference, in the order to ask them.

    Sources that cannot hold the work are left out (see `cannot_index`). The
    reference matcher (Crossref) goes first for journal articles and citation
    strings without a title; then the sources that index this kind of work, the
    slowest pools (Semantic Scholar, DBLP, arXiv) after the others; then those
    that merely might hold it.
    """
    kind = kind_of(reference)
    stages = registry.stages("title" if reference.title else "free_text")
    names = [n for stage in stages for n in stage if n in enabled]
    names = [n for n in names if cannot_index(n, kind) is None]
    matcher_first = kind.journal or not reference.title

    def rank(name: str) -> tuple[bool, bool, bool]:
        entry = _entry(name)
        return (not (matcher_first and entry.matcher), not covers(name, kind), entry.last_resort)

    return sorted(names, key=rank)  # stable: the registry's stage order within each group


def search_skipped(
    reference: Reference,
    source: str,
    kind: Kind,
    searched: Collection[str],
    searchable: Collection[str],
    identified: bool,
    disproved: bool = False,
) -> str | None:
    """Why the plan does not search `source` now, after `searched` found nothing (None:
    it does): a preprint-only source this citation gives no reason to ask, or a search
    that could no longer change the verdict."""
    return preprint_search_needed(reference, source, searchable) or still_needed(
        source, kind, searched, identified=identified, disproved=disproved, searchable=searchable
    )


def preprint_search_needed(
    reference: Reference, source: str, enabled: Collection[str]
) -> str | None:
    """Why a preprint-only source is not searched for this citation, or None to search it.

    arXiv allows one request every 3 s: it is searched for citations that look like
    preprints, or when no general index is enabled to find the work another way.
    """
    entry = _entry(source)
    if entry.covers is None or "preprint" not in entry.covers:
        return None
    kind = kind_of(reference)
    if kind.preprint or not reference.venue:
        return None
    if not any(_is_general(_entry(n)) for n in enabled):
        return None
    return f"cited as published, not as a preprint; {entry.title} is searched for preprints"


def _entry(source: str) -> registry.SourceEntry:
    """The registry entry of a source, the local mirror included (it holds general indexes)."""
    return registry.MIRROR if source == registry.MIRROR.name else registry.entry(source)


def is_general(source: str) -> bool:
    """A general index (OpenAlex, Semantic Scholar): every field and every kind of work."""
    return _is_general(_entry(source))


def _is_general(entry: registry.SourceEntry) -> bool:
    """A general index: every field, and its silence means absence for all it holds."""
    return not entry.field and entry.covers is None


def describe(kind: Kind) -> str:
    """The kind of work in words: "conference papers in computer science"."""
    noun = _WORK_NAMES[kind.work]
    plural = noun + ("" if noun.endswith("s") else "s")
    fields = " and ".join(_FIELD_NAMES[f] for f in sorted(kind.fields))
    return f"{plural} in {fields}" if fields else plural


_WORK_NAMES = {
    "article": "journal article",
    "conference": "conference paper",
    "book": "book",
    "chapter": "book chapter",
    "thesis": "thesis",
    "report": "report",
    "preprint": "preprint",
    "dataset": "dataset",
}
