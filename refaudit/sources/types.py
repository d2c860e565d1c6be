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
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType


@functools.cache
def _vocabularies() -> dict[str, dict[str, str]]:
    text = resources.files(__package__).joinpath("types.json").read_text("utf-8")
    vocabularies: dict[str, dict[str, str]] = json.loads(text)
    return vocabularies


def work_types(vocabulary: str) -> Mapping[str, str]:
    """`vocabulary`'s type names → refaudit's work types, in the file's order."""
    return MappingProxyType(_vocabularies()[vocabulary])
