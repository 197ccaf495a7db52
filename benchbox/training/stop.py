"""Stopping a training run on SIGINT/SIGTERM within a second, even inside long tensor work.

The training loop polls :meth:`StopRequest.check` after every step; a signal makes it return True, and the
loop writes its checkpoint and stops cleanly. A Python signal handler, though, runs only between bytecodes of
the main thread: while one step sits in a long C++ call (a huge batch, a very long caption) it does not run
at all, and SIGTERM once had no effect for half an hour. So the C-level handler also writes the signal number
to a wake-up socket (:func:`signal.set_wakeup_fd`), which a watcher thread reads at once. If the loop has not
reached its check ``grace`` seconds (default 1) after the signal, the watcher ends the process with status
128 + signal number, saying what exists on disk: the last checkpoint (valid for ``--resume``), or that none
was written yet. A second signal ends it at once.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: seconds the loop has to reach its check after a signal before the process is ended
GRACE_SECONDS = 1.0


class StopRequest:
    """SIGINT/SIGTERM ask the loop to stop at its next :meth:`check`; see the module docstring. ``checkpoint``:
    the run's resumable checkpoint file (None: the run keeps none), named when the process is cut short."""

    def __init__(self, grace: float = GRACE_SECONDS, checkpoint: Path | None = None) -> None:
        self.grace = grace
        self.checkpoint = checkpoint
        self.requested = False
        #: the signal that asked for the stop (None: no signal); the CLI exits 128 + it after saving
        self.signum: int | None = None
        self._seen = threading.Event()

    def check(self) -> bool:
        """Whether a stop was requested; the loop calls this after every step (it also tells the watcher
        that the loop is stopping cleanly)."""
        if self.requested:
            self._seen.set()
        return self.requested

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Handlers and watcher for the ``with`` block (only in the main thread; elsewhere nothing)."""
        previous: dict[int, Any] = {}
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        old_fd = None
        try:
            for sig in SIGNALS:
                previous[sig] = signal.signal(sig, self._handle)
            old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main thread: no handlers
            pass
        watcher = threading.Thread(target=self._watch, args=(reader,), daemon=True, name="benchbox-stop-watcher")
        watcher.start()
        try:
            yield
        finally:
            if old_fd is not None:
                signal.set_wakeup_fd(old_fd)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._seen.set()
            writer.send(b"\0")  # wakes the watcher, which ends on the 0 byte
            watcher.join()
            reader.close()
            writer.close()

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested = True
        if self.signum is None:
            self.signum = signum

    def _watch(self, reader: socket.socket) -> None:
        signals = 0
        while True:
            data = reader.recv(64)
            for signum in data:
                if signum == 0:
                    return
                if signum not in SIGNALS:
                    continue
                signals += 1
                self.requested = True
                if self.signum is None:
                    self.signum = signum
                if signals == 1 and self._seen.wait(self.grace):
                    continue  # the loop reached its check: it stops cleanly, with a checkpoint
                os.write(2, f"benchbox: signal {signum} during a training step: stopped without a new "
                            f"checkpoint ({self._on_disk()})\n".encode())
                os._exit(128 + signum)

    def _on_disk(self) -> str:
        """What a cut-short run leaves to resume from."""
        if self.checkpoint is None:
            return "this run keeps no checkpoint: run it again to start over"
        if self.checkpoint.is_file():
            return f"the last one, {self.checkpoint}, stays valid for --resume"
        return "none had been written yet: run the same command again to start over"
