"""Writing BibTeX: entries from source records, and corrections of the user's entries.

The one rule: nothing is fabricated. A field appears only when the user wrote it
and no source contradicts it, or when the matched record gives it. Values that
come from records are escaped for LaTeX; values the user wrote are kept as
written (they are already LaTeX).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from refaudit.braces import bibtex_is_one_group
from refaudit.findings import FIXABLE_CODES
from refaudit.models import Finding, Person, Reference, Result, Work
from refaudit.sources import registry

_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_SPECIAL_PATTERN = re.compile("|".join(re.escape(c) for c in _SPECIALS))
_WORD = re.compile(r"\S+")
_PAGE_DASH = re.compile(r"\s*[-\u2013\u2014]+\s*")
_KEY_WORD_BREAK = re.compile(r"[\s\-\u2010-\u2015/]+")
_KEY_STOPWORDS = frozenset(
    "a an the on of in for and to with from by at is are towards toward via using".split()
)

# Work.type (Crossref / CSL vocabulary) → BibTeX entry type.
_ENTRY_TYPES = {
    "journal-article": "article",
    "article": "article",
    "article-journal": "article",
    "proceedings-article": "inproceedings",
    "paper-conference": "inproceedings",
    "conference": "inproceedings",
    "book": "book",
    "monograph": "book",
    "edited-book": "book",
    "book-chapter": "incollection",
    "chapter": "incollection",
    "thesis": "phdthesis",
    "dissertation": "phdthesis",
    "report": "techreport",
    "preprint": "misc",
    "posted-content": "misc",
    "dataset": "misc",
}
# The work types that say journal or proceedings, unlike OpenAlex's generic "article".
_SPECIFIC_TYPES = {
    "journal-article": "article",
    "article-journal": "article",
    "proceedings-article": "inproceedings",
    "paper-conference": "inproceedings",
}
# Sources whose type vocabulary tells journal articles from proceedings papers
# (PubMed indexes journals). Semantic Scholar is not one: it tags many
# conference papers JournalArticle as well as Conference.
_TYPE_AUTHORITIES = registry.names_where("authoritative_type")
_VENUE_FIELD = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}

# BibTeX names of the report's fields where they differ (a venue is journal or booktitle).
_BIBTEX_FIELD = {"authors": "author", "arxiv": "eprint"}


def escape_latex(text: str) -> str:
    """Escape the ten characters LaTeX treats specially; everything else is kept (UTF-8)."""
    return _SPECIAL_PATTERN.sub(lambda m: _SPECIALS[m.group(0)], text)


def page_range(pages: str) -> str:
    """BibTeX's page range: any dash between the pages becomes `--`."""
    return _PAGE_DASH.sub("--", pages)


def protect_title(title: str) -> str:
    """Escape a title and brace words whose capitals a style must not lower-case.

    Acronyms and mixed case (BERT, ImageNet, GPT-3) are always protected. In a
    sentence-case title, a capitalised word after the first is a proper noun
    (Bayesian, Gaussian), so it is protected too; in Title Case nothing tells
    proper nouns apart, so only the acronyms are.
    """
    words = _WORD.findall(title)
    long_words = [w for w in words if len(w) >= 4 and w[0].isalpha()]
    sentence_case = (
        bool(long_words) and sum(w[0].isupper() for w in long_words[1:]) * 2 < len(long_words) - 1
    )

    def protect(match: re.Match[str]) -> str:
        lead, word, trail = _split_punctuation(match.group(0))
        letters = [c for c in word if c.isalpha()]
        # The last character before the word, spaces skipped (not a copy of the title so far).
        start = match.start()
        while start and title[start - 1].isspace():
            start -= 1
        starts_sentence = not start or title[start - 1] in ":.?!"
        inner_capital = any(c.isupper() for c in letters[1:])
        proper_noun = sentence_case and not starts_sentence and letters and letters[0].isupper()
        core = escape_latex(word)
        if inner_capital or proper_noun:
            core = "{" + core + "}"
        return escape_latex(lead) + core + escape_latex(trail)

    return _WORD.sub(protect, title)


_PUNCTUATED = re.compile(r"([(\[\"'`]*)(.*?)([)\]\"',.:;!?]*)")


def _split_punctuation(token: str) -> tuple[str, str, str]:
    """`(BERT):` → (`(`, `BERT`, `):`) so braces hug the word, not its punctuation."""
    match = _PUNCTUATED.fullmatch(token)
    assert match is not None  # the pattern matches any string
    return match.group(1), match.group(2), match.group(3)


def format_person(person: Person) -> str:
    """`Family, Given` (with particle and suffix); organisations in braces, never split."""
    if person.is_organisation:
        return "{" + escape_latex(person.family) + "}"
    family = escape_latex(person.full_family)
    if person.suffix:
        return f"{family}, {escape_latex(person.suffix)}, {escape_latex(person.given)}"
    return f"{family}, {escape_latex(person.given)}" if person.given else family


def format_people(people: list[Person]) -> str:
    return " and ".join(format_person(person) for person in people)


def entry_type_for(work: Work) -> str | None:
    """The BibTeX type for a record; OpenAlex's and S2's generic "article" by its venue."""
    from refaudit.match import is_conference_venue

    kind = (work.type or "").lower()
    if kind == "article" and is_conference_venue(work.venue):
        return "inproceedings"
    return _ENTRY_TYPES.get(kind)


def make_key(work: Work, existing: set[str]) -> str:
    """`{family}{year}{firstword}`, ASCII, lower case, made unique with a, b, c….

    The first word is the title's own (a publisher's "RETRACTED: " mark is not part of it),
    and a hyphen ends it: "Ileal-lymphoid-nodular hyperplasia" gives "ileal".
    """
    from refaudit.match import strip_notice_prefix

    family = _ascii_word(work.authors[0].family) if work.authors else ""
    year = str(work.year) if work.year else ""
    title = strip_notice_prefix(work.title or "")
    title_words = [_ascii_word(w) for w in _KEY_WORD_BREAK.split(title)]
    first = next((w for w in title_words if w and w not in _KEY_STOPWORDS), "")
    base = f"{family}{year}{first}" or "ref"
    key, suffix = base, 0
    while key in existing:
        key = base + _letters(suffix)
        suffix += 1
    return key


def _letters(index: int) -> str:
    """0 → a, 25 → z, 26 → aa: suffixes for clashing keys."""
    text = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        text = chr(ord("a") + remainder) + text
    return text


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def work_fields(work: Work, entry_type: str) -> dict[str, str]:
    """Every BibTeX field `work` gives, already escaped; absent data stays absent."""
    fields: dict[str, str] = {}
    if work.title:
        title = f"{work.title}: {work.subtitle}" if work.subtitle else work.title
        fields["title"] = protect_title(title)
    if work.authors:
        fields["author"] = format_people(work.authors)
    if work.venue:
        fields[_VENUE_FIELD.get(entry_type, "howpublished")] = escape_latex(work.venue)
    if work.year:
        fields["year"] = str(work.year)
    for name, value in (("volume", work.volume), ("number", work.issue)):
        if value:
            fields[name] = escape_latex(value)
    if work.pages:
        fields["pages"] = escape_latex(page_range(work.pages))
    if work.publisher and entry_type in ("book", "incollection", "techreport", "misc"):
        fields["publisher"] = escape_latex(work.publisher)
    if work.doi:
        fields["doi"] = work.doi
    if work.arxiv_id:
        fields["eprint"] = work.arxiv_id
        fields["archiveprefix"] = "arXiv"
    if work.pmid:
        fields["pmid"] = work.pmid
    return fields


def format_entry(entry_type: str, key: str, fields: dict[str, str]) -> str:
    """One entry in the layout refaudit writes: two-space indent, braces, trailing comma."""
    lines = [f"@{entry_type}{{{key},"]
    lines += [f"  {name} = {_delimited(value)}," for name, value in fields.items()]
    return "\n".join(lines) + "\n}\n"


def _delimited(value: str) -> str:
    """`{value}`; a value whose braces do not balance (`"preprint {v2"`) keeps its quotes."""
    braced = f"{{{value}}}"
    if bibtex_is_one_group(braced):
        return braced
    if '"' not in value:
        return f'"{value}"'
    return "{" + value.replace("{", r"\{").replace("}", r"\}") + "}"


def work_to_entry(work: Work, *, key: str | None = None, entry_type: str | None = None) -> str:
    """A BibTeX entry describing `work` alone (key made up from it when not given)."""
    entry_type = entry_type or entry_type_for(work) or "misc"
    return format_entry(entry_type, key or make_key(work, set()), work_fields(work, entry_type))


def corrected_entry(reference: Reference, work: Work, findings: list[Finding]) -> str:
    """The user's entry with the fields sources contradict replaced, and missing ids added.

    The key, the entry type (unless clearly wrong), the field order and every
    field no finding contradicts are the user's. Wrong fields take the matched
    record's value; a contradicted field the record cannot fill is dropped rather
    than guessed. A citation read from a printed list has no fields of its own: its
    entry is the record's, or only the corrected fields would be written.
    """
    entry_type = _corrected_type(reference.entry_type, work)
    if not reference.fields:
        return format_entry(entry_type, reference.key, work_fields(work, entry_type))
    fields = dict(_lower_keys(reference.fields))
    if entry_type != reference.entry_type.lower():
        fields = _rename_venue_field(fields, entry_type)
    venue_field = _VENUE_FIELD.get(entry_type, "howpublished")

    @functools.cache
    def from_work() -> dict[str, str]:
        # Written only when a finding takes a field from the record: most take none.
        return work_fields(work, entry_type)

    for finding in findings:
        if finding.suppressed or finding.code not in FIXABLE_CODES:
            continue
        reported = finding.field or ""
        name = _BIBTEX_FIELD.get(reported, reported)
        if name == "year":
            _correct_year(fields, _stated_year(finding) or from_work().get("year"))
            continue
        if name == "venue":
            name = next((n for n in ("journal", "booktitle") if n in fields), venue_field)
            replacement = escape_latex(work.venue) if work.venue else None
        else:
            replacement = from_work().get(name)
        if not name:
            continue
        if replacement:
            fields[name] = replacement
            if name == "eprint":
                fields.setdefault("archiveprefix", "arXiv")
        else:
            fields.pop(name, None)

    # Identifiers are added only where the check reported them missing (`doi-available`).
    doi = addable_doi(reference, findings)
    if doi and "doi" not in fields:
        fields["doi"] = escape_latex(doi)
    return format_entry(entry_type, reference.key, fields)


def addable_doi(reference: Reference, findings: list[Finding]) -> str | None:
    """The DOI a `doi-available` finding offers, unless it is a preprint's for a published work.

    An arXiv DOI (10.48550/arXiv.…) belongs to the preprint; an entry citing a
    journal or proceedings is the published version, so it never gets one.
    """
    offered = next(
        (f.found for f in findings if f.code == "doi-available" and not f.suppressed and f.found),
        None,
    )
    if offered is None:
        return None
    fields = _lower_keys(reference.fields)
    venue = " ".join(fields.get(name, "") for name in ("journal", "booktitle")).lower()
    published = venue.strip() and not any(word in venue for word in ("arxiv", "corr"))
    if offered.lower().startswith("10.48550/arxiv.") and published:
        return None
    return offered


def _stated_year(finding: Finding) -> str | None:
    """The year a year finding says is right (the first of the records' years it lists)."""
    found = re.search(r"\b\d{4}\b", finding.found or "")
    return found.group() if found else None


def _correct_year(fields: dict[str, str], year: str | None) -> None:
    """Write `year` where the entry keeps its year (biblatex `date` too); no year, no change."""
    if not year:
        return
    if "date" in fields:
        fields["date"] = year
    if "year" in fields or "date" not in fields:
        fields["year"] = year


def _lower_keys(fields: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in fields.items()}


def _corrected_type(cited: str, work: Work) -> str:
    """Keep the user's type unless a source that tells journals from proceedings disagrees.

    Only @article ⇄ @inproceedings is ever corrected, and only on a journal or
    proceedings type from one of `_TYPE_AUTHORITIES`: OpenAlex's generic
    "article" covers conference papers too, so it is no evidence against
    @inproceedings. A merged record's type is its primary source's when that
    source gives one (`merge_records`).
    """
    cited = cited.lower()
    if work.source not in _TYPE_AUTHORITIES:
        return cited
    found = _SPECIFIC_TYPES.get((work.type or "").lower())
    clash = {("article", "inproceedings"), ("inproceedings", "article")}
    if (cited, found) in clash or (cited == "conference" and found == "article"):
        return found or cited
    return cited


def _rename_venue_field(fields: dict[str, str], entry_type: str) -> dict[str, str]:
    target = _VENUE_FIELD.get(entry_type)
    if not target:
        return fields
    renamed: dict[str, str] = {}
    for name, value in fields.items():
        renamed[target if name in ("journal", "booktitle") else name] = value
    return renamed


def entries_of_results(results: list[Result]) -> str:
    """A .bib of every audited reference, for an input refaudit cannot write into (a Word
    file, a Zotero library): the corrected entry where a record was matched, the cited
    fields unchanged where none was, and a free-text citation as a `@misc` note. Each entry
    follows a `%` line giving its verdict, which BibTeX ignores."""
    parts = []
    for result in results:
        reference = result.reference
        if result.corrected_bibtex:
            entry = result.corrected_bibtex
        elif reference.fields:
            entry = format_entry(reference.entry_type, reference.key, dict(reference.fields))
        else:
            note = escape_latex(reference.free_text or reference.title or "")
            entry = format_entry("misc", reference.key, {"note": note})
        origin = f" ({reference.origin})" if reference.origin else ""
        parts.append(f"% {reference.key}: {result.verdict.value}{origin}\n{entry.rstrip()}\n")
    return "\n".join(parts)
