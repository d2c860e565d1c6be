"""The headings around a printed reference list, in a Word document or a PDF alike.

Both readers find the list the way a reader does: after the heading that opens
it ("References", "7. Bibliography", "Literaturverzeichnis"), until the heading of
the section that follows it (an appendix, the acknowledgements, the authors'
biographies). One vocabulary serves both, in the languages refaudit reads.
"""

from __future__ import annotations

import re

#: A section's number before its heading: "7", "7.2.", "VII.", "A".
_SECTION_NUMBER = r"(?:(?:\d+|[IVXLC]+|[A-Z])(?:\.\d+)*[.:)]?\s+)?"

LIST_HEADING = re.compile(
    rf"^{_SECTION_NUMBER}(?:references?(?:\s+(?:cited|list|and\s+notes))?|notes\s+and\s+references"
    r"|bibliography|literature(?:\s+cited)?|works\s+cited|cited\s+literature"
    r"|literatur(?:verzeichnis)?|références(?:\s+bibliographiques)?|bibliographie|referencias"
    r"|bibliografía|bibliografia|riferimenti\s+bibliografici)\s*[.:]?$",
    re.IGNORECASE,
)
"""The heading alone on its line that opens the list."""

LIST_END = re.compile(
    rf"^{_SECTION_NUMBER}(?:appendix|appendices|supplementary|supplemental|supporting\s+information"
    r"|acknowledge?ments?\b|author\s+contributions?|biograph|about\s+the\s+authors?\b"
    r"|checklist|index\b|glossary)",
    re.IGNORECASE,
)
"""The start of a section that follows the list (its line must also look like a heading)."""
