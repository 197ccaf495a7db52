"""Task plugins (registered through the ``benchbox.tasks`` entry-point group)."""
