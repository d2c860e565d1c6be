"""What the MCP server publishes besides tools: resources and the prompt.

`refaudit://sources` (each source: enabled or why not, key set, limits, quota left, and
the health this process has seen),
`refaudit://policy` (verdicts, fail policy, finding codes), `refaudit://guide` (how
an agent should use the tools together) and the `verify-before-citing` prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from refaudit.config import OTHER_ENDPOINTS, Settings
from refaudit.models import Verdict
from refaudit.server.state import ServerState, SourceHealth
from refaudit.sources import registry


def sources_overview(state: ServerState) -> dict[str, Any]:
    """The `refaudit://sources` document: `refaudit sources` plus this process's health."""
    from refaudit.sources.status import describe_sources

    settings = state.settings
    health = {}
    for name in registry.SOURCE_NAMES:
        seen = state.health.get(name, SourceHealth())
        client = state.sources.clients.get(name) if state.sources else None
        health[name] = {
            "state": seen.last_state,
            "reason": seen.last_reason,
            "last_seen": seen.last_seen,
            "requests": state.totals.requests.get(name, 0),
            "cache_hits": state.totals.cache_hits.get(name, 0),
            "rate_limited": state.totals.rate_limited.get(name, 0),
            "failures": state.totals.failures.get(name, 0),
            "circuit": client.health if client else None,
        }
    return {
        "offline": settings.offline,
        "cache": settings.use_cache,
        "mailto_configured": settings.mailto is not None,
        "sources": describe_sources(settings, health),
        "endpoints": {name: settings.base_urls.get(name) for name in OTHER_ENDPOINTS},
    }


VERDICT_MEANINGS: Mapping[str, str] = {
    Verdict.VERIFIED.value: "a source has the work and the cited fields agree",
    Verdict.MISMATCH.value: "the work exists but some cited fields differ (see findings)",
    Verdict.NOT_FOUND.value: "every source answered and none knows the work: likely fabricated",
    Verdict.UNVERIFIED.value: (
        "a source failed (outage, rate limit, offline cache miss): no conclusion either way; "
        "this is NOT not_found"
    ),
    Verdict.SKIPPED.value: "ignored by configuration (the reason says why)",
}


def policy_overview(settings: Settings) -> dict[str, Any]:
    """The `refaudit://policy` document: the same vocabulary `refaudit check --fail-on` uses."""
    from refaudit.findings import FAIL_ON_CHOICES, FINDING_CODES, INTEGRITY_CODES, RETRACTION_CODES

    return {
        "verdicts": dict(VERDICT_MEANINGS),
        "severities": {
            "error": "the citation is wrong or unusable",
            "warning": "probably a mistake worth fixing",
            "info": "cosmetic or informative (a better form, a newer version)",
        },
        "flagged": "a reference is flagged when it fails the fail_on policy below, exactly "
        "when `refaudit check` with the same configuration would exit 1 for it",
        "fail_on": {
            word: FAIL_ON_CHOICES.get(word) or f"findings with code {word.replace('_', '-')}"
            for word in settings.fail_on
        },
        "fail_on_choices": dict(FAIL_ON_CHOICES),
        "retraction_policy": dict(settings.retraction_policy),
        "finding_codes": {
            entry.code: {
                "severity": entry.severity or "set by retraction_policy",
                "fields": list(entry.fields),
                "makes_mismatch": entry.mismatch,
                "fixable": entry.fixable,
                "when": entry.when,
            }
            for entry in FINDING_CODES.values()
        },
        "integrity_codes": sorted(INTEGRITY_CODES),
        "retraction_codes": sorted(RETRACTION_CODES),
    }


VERIFY_BEFORE_CITING = """\
Before you cite anything, verify it with refaudit.

1. Check every reference you intend to cite: verify_reference for one citation (free text or
   fields), verify_bibliography for a whole .bib. Do not rely on memory for titles, authors,
   years, venues or DOIs.
2. Read the verdict:
   - verified: safe to cite; prefer the matched record's fields and corrected_bibtex.
   - mismatch: the work exists but the citation is wrong somewhere. Fix each finding
     using its `found` value and name the `source` it came from.
   - not_found: every source answered and none knows the work. Do not cite it; it may be
     fabricated. Search (search_references) for the work you meant.
   - unverified: a source failed or was unreachable. This is NOT evidence the work is
     missing; say it could not be checked, and retry later.
   - skipped: the user's configuration ignores this reference.
3. If retracted is true (a retraction, partial retraction, withdrawal or removal), do not
   cite the work as support; mention the notice if you discuss it. Expressions of concern
   and corrections are worth mentioning too.
4. Never invent a DOI, page range or author. Use get_bibtex for the exact entry, and quote
   only fields refaudit returned.
"""


GUIDE = """\
# Using refaudit's tools together

refaudit answers from the scholarly databases (Crossref, OpenAlex, Semantic Scholar, arXiv,
DataCite, PubMed, DBLP) and the Retraction Watch data. It never guesses a field.

## Before citing
1. Verify every reference before you cite it: verify_reference for one (free text or fields),
   verify_references for a list (objects or free-text strings, up to 500 in one call),
   verify_bibliography for BibTeX text or a file inside the server's root.
2. Read the verdict:
   - verified: cite it, preferably with corrected_bibtex or the matched record's fields.
   - mismatch: the work exists but the citation is wrong; each finding names the field,
     the value the source records (`found`) and the source. Use the corrected entry.
   - not_found: every source answered and none knows the work. Do not cite it.
   - unverified: a source failed. This is UNKNOWN, not missing: say it could not be
     checked, and try again later. Never report it as fabricated.
   - flagged: true means the reference fails the server's fail policy (`fail_on`, see
     refaudit://policy), exactly what makes `refaudit check` exit 1 under the same
     configuration. Read the verdict and findings for why; flagged: false with a
     mismatch means the policy tolerates those findings, not that they are absent.
3. retracted: true means a retraction, withdrawal or removal applies. Do not cite the work
   as support. An expression of concern or a correction is worth mentioning.

## Fixing and writing bibliographies
- correct_bibliography takes BibTeX text and returns the corrected text and a unified
  diff. Only fields a source contradicts are changed; every other byte is kept.
  Prefer the corrected entry over your own memory.
- get_bibtex writes BibTeX for identifiers (DOIs, arXiv ids, PMIDs, titles) from the
  databases, or for metadata objects that search_references or paper_details returned,
  with keys like lecun2015deep.

## Finding and judging literature
- search_references finds works (up to 100), with a short abstract and citation count.
- paper_details shows one work in full, its references and citations (up to 500 each).
- assess_novelty says how much of a research idea one existing paper already covers.
  `status: unverified` means the searches failed: not evidence that the idea is new.
- The retraction tools (check_retractions, retractions_by_author, recent_retractions,
  search_retractions, get_notice) screen DOIs and search the Retraction Watch data.
"""
