"""The editor server's stdin, bounded: what one LSP message may make the server hold.

pygls reads a message as `stdin.read(Content-Length)`, so a header claiming 100 TB asks for
100 TB at once (a MemoryError, and the server is gone). Here a body over `MAX_MESSAGE_BYTES`
is read in chunks and dropped, which keeps the stream in step with the client, and pygls is
handed a `SKIPPED` notification in its place: the server logs one line naming the size and
the limit, and serves on. A header line is read at most `MAX_HEADER_BYTES` at a time (a
longer piece is no header pygls knows, and it reads on to the blank line).
"""
from __future__ import annotations

import json
from typing import BinaryIO

from deadline_lint.run.buffers import MAX_FILE_BYTES

# A file well over the 2 MiB the checker reads still arrives, JSON-escaped (quotes,
# backslashes and newlines grow), so that the editor is told DL004 for it; a body this size
# is some 100 MB once decoded.
MAX_MESSAGE_BYTES = 16 * MAX_FILE_BYTES
MAX_HEADER_BYTES = 64 * 1024
SKIPPED = "deadline-lint/skippedMessage"  # the notification standing in for a dropped body
_CHUNK = 1024 * 1024


class BoundedReader:
    """stdin as pygls reads it (`readline`, `read(n)`), holding at most one bounded message."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.stream = stream
        self.limit = limit

    def readline(self) -> bytes:
        return self.stream.readline(MAX_HEADER_BYTES)

    def read(self, size: int) -> bytes:
        if size <= self.limit:
            return self.stream.read(size)
        left = size
        while left > 0:
            chunk = self.stream.read(min(left, _CHUNK))
            if not chunk:
                return b""  # the client went away mid-message: pygls ends the session
            left -= len(chunk)
        return json.dumps(
            {"jsonrpc": "2.0", "method": SKIPPED, "params": {"size": size, "limit": self.limit}}
        ).encode()


def skipped_message(params: object) -> str:
    """The one log line for a dropped message."""
    size = getattr(params, "size", "?")
    limit = getattr(params, "limit", MAX_MESSAGE_BYTES)
    return (f"skipped a message of {size} bytes (Content-Length); "
            f"the limit is {limit} bytes")
