"""The bounds of what the tools take: a citation's fields, each with its one limit.

Every tool that takes a citation's title, year or identifiers declares them with
these types, so a field is bounded the same way wherever a calling model sends it,
and hostile input is refused with pydantic's message instead of being held.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

#: Longest free-text citation, title or identifier a tool takes.
MAX_CITATION_CHARS = 2_000

CitationText = Annotated[str, Field(max_length=MAX_CITATION_CHARS)]
#: a citation string, identifier or title where one must be given
GivenText = Annotated[str, Field(min_length=1, max_length=MAX_CITATION_CHARS)]
Year = Annotated[int, Field(ge=1000, le=2999)]
Doi = Annotated[str, Field(max_length=300)]
ArxivId = Annotated[str, Field(max_length=100)]
Pmid = Annotated[str, Field(max_length=20)]
Url = Annotated[str, Field(max_length=2_000)]
