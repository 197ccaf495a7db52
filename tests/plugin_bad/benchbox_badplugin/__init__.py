"""benchbox-badplugin: a misbehaving plugin package for benchbox's plugin tests (see pyproject.toml)."""
