"""Deprecated: the encoder protocol is :mod:`benchbox.encoding.protocol`. ``from benchbox.encoder import Encoder``
still works for one release, with one warning saying what to write (docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from benchbox.registry import moved

__getattr__ = moved(__name__, "benchbox.encoding.protocol")
