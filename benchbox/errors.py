"""The one exception type for errors a user can cause.

Missing data, malformed files, unknown names, bad checkpoints: each raises :class:`BenchboxError` with a
message that says what went wrong and what to do. The CLI prints the message on one line, without a
traceback, and exits non-zero.
"""


class BenchboxError(Exception):
    """An error the user can fix; the message says how."""
