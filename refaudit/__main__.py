"""`python -m refaudit` is the same as the `refaudit` command."""

from refaudit.cli import main

main()
