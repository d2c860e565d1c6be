"""The cyclic garbage collector, set for the processes refaudit runs itself.

An audit allocates millions of short-lived containers (decoded records, names,
findings) that form no cycles, beside what lives for the whole run (the modules,
the LTWA table, the results kept for the report). With Python's default thresholds
the collector's passes over the long-lived objects took a quarter of a mirror-only
audit's CPU. Only processes refaudit owns call this: the command, a long audit's
worker processes, a batch's worker processes and Ray workers; the library leaves
its caller's collector as it found it.
"""

from __future__ import annotations

import gc

#: Container allocations between two collections of the youngest generation
#: (Python's default is 700): a young collection finds next to nothing here.
YOUNG_THRESHOLD = 50_000


def collect_less() -> None:
    """Keep what exists now (modules, tables built at start) out of every later pass,
    and collect young objects less often."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
