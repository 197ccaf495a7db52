"""A plugin module that fails at import time, as a plugin with a broken dependency would."""

raise RuntimeError("benchbox-badplugin's broken module fails at import, on purpose")
