"""CLI command groups, one module each; ``benchbox.cli`` assembles them."""
