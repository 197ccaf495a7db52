"""Report rendering: markdown and self-contained HTML with figures."""
