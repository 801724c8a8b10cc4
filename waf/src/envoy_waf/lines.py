"""One log line, one write(2). The supervisor and every worker share the container's stdout: a line written
in pieces (print writes the text and the newline separately when stdout is unbuffered) can interleave with
another process's, and a log collector then sees two JSON objects on one line. A single write of a line
under PIPE_BUF (4 KiB) to a pipe, or to a file through the shared file offset, is not split."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any


def emit(line: str) -> None:
    sys.stdout.flush()  # anything buffered before goes first
    os.write(sys.stdout.fileno(), (line + "\n").encode())


def event(name: str, **fields: Any) -> None:
    emit(json.dumps({"event": name, **fields}))


class Handler(logging.Handler):
    """logging's records as single-write lines on stdout."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            emit(self.format(record))
        except (OSError, ValueError, TypeError):
            self.handleError(record)


def configure(level: int = logging.INFO) -> None:
    handler = Handler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
