"""Encoder plugins (registered through the ``benchbox.encoders`` entry-point group)."""
