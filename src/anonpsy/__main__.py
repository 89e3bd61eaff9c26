"""``python -m anonpsy`` runs the command line."""

from anonpsy.cli import main

main()
