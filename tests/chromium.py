"""Headless Chromium for end-to-end tests, driven by Playwright (the ``test`` extra) on Debian's ``chromium``.

:func:`open_page` launches the system browser (``executable_path``: Playwright's own browser download is never
used), loads a URL and returns a :class:`Page` that keeps every console message (browser log entries such as
failed resource loads and CSP violations arrive as console errors) and uncaught exception seen so far.
``evaluate`` runs a JavaScript expression; ``screenshot`` writes a PNG; ``set_viewport`` emulates a phone.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Page:
    """One tab, with the problems it reported."""

    def __init__(self, page: Any) -> None:
        self.page = page
        # DevTools commands through Playwright's session: Playwright switches to a mobile viewport only in a
        # new context, which would lose the page's state (the session lives as long as the page: detaching it
        # would undo its emulation)
        self.devtools = page.context.new_cdp_session(page)
        self.reported: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.reported.append(f"exception: {error}"))

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning", "assert"):
            self.reported.append(f"console.{message.type}: {message.text} {message.location.get('url', '')}")

    def evaluate(self, expression: str) -> Any:
        return self.page.evaluate(expression)

    def settle(self) -> None:
        """Process pending events (a round trip that flushes what the page logged so far)."""
        self.evaluate("1")

    def problems(self) -> list[str]:
        """Console errors and warnings (browser log entries included) and uncaught exceptions."""
        return list(self.reported)

    def set_viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        self.devtools.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                                  "deviceScaleFactor": 2 if mobile else 1,
                                                                  "mobile": mobile})

    def screenshot(self, path: Path, *, full_page: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=path, full_page=full_page)


@contextmanager
def open_page(url: str, *, binary: str, timeout: float = 60.0) -> Iterator[Page]:
    """Launch headless Chromium from ``binary``, open ``url`` in a new tab, wait for its load event and yield
    the page; the browser and its temporary profile are removed afterwards."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (pip install -e '.[test]')")
    with sync_api.sync_playwright() as playwright:
        # scrollbars shown, as a person sees the page (Playwright hides them by default)
        browser = playwright.chromium.launch(executable_path=binary, ignore_default_args=["--hide-scrollbars"],
                                             timeout=timeout * 1000)
        try:
            # no viewport of Playwright's own: set_viewport's emulation is the only one, as screenshots assume
            page = Page(browser.new_context(no_viewport=True).new_page())
            page.page.goto(url, wait_until="load", timeout=timeout * 1000)
            page.settle()
            yield page
        finally:
            browser.close()
