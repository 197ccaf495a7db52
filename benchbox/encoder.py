"""Deprecated: the encoder protocol is :mod:`benchbox.encoding.protocol`. ``from benchbox.encoder import Encoder``
still works for one release, with one warning saying what to write (docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.encoding import protocol
    from benchbox.registry import renamed

    value = getattr(protocol, name)  # an unknown name: AttributeError, as for any module
    renamed(f"benchbox.encoder.{name}", f"benchbox.encoding.protocol.{name}")
    return value
