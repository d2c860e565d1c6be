"""Each upstream's type vocabulary mapped to refaudit's work types, read once from types.json.

The maps are facts about the APIs, not logic, so they live together in one data file
that can be checked against each API's documentation; a record's `to_work` looks its
type up here. Keyed by source name; "scopus aggregation" is Scopus's coarser
aggregation type, and "zotero" maps Zotero's item types to CSL types (what a Zotero
item's CSL-JSON would say). Order matters where a record carries several types: the
first entry found wins.
"""

from __future__ import annotations

import functools
import json
from importlib import resources


@functools.cache
def _vocabularies() -> dict[str, dict[str, str]]:
    text = resources.files(__package__).joinpath("types.json").read_text("utf-8")
    vocabularies: dict[str, dict[str, str]] = json.loads(text)
    return vocabularies


def work_type(vocabulary: str, *given: object) -> str | None:
    """The work type of a record that gives the type names `given`, in `vocabulary`'s terms.

    A record that gives several (PubMed's publication types, Semantic Scholar's) takes the
    first of the vocabulary's entries it carries, in the file's order; None when the
    vocabulary knows none of them.
    """
    names = {str(name) for name in given}
    types = _vocabularies()[vocabulary]
    return next((kind for name, kind in types.items() if name in names), None)
