"""What a mirror-only audit's fork server prepares before it forks the workers.

The fork server imports this module once (`set_forkserver_preload`); every worker
it forks inherits what the import built, instead of building it again per
process. Only work that every worker would otherwise repeat belongs here.
"""

from refaudit.collector import collect_less
from refaudit.match import abbreviations

abbreviations.warm()
# The workers inherit the frozen table and modules, and the collector's settings.
collect_less()
