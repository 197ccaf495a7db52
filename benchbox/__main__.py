"""``python -m benchbox`` runs the command line."""

from benchbox.cli import main

main()
