"""What the supervisor tells every worker: one byte in a file both map, 1 while every worker is ready.

A health check lands on whichever worker the kernel gave the connection to (SO_REUSEPORT), so each worker
answers from this shared byte, not from its own state alone: SERVING from any worker means all are ready.
Only the supervisor writes it.
"""

from __future__ import annotations

import mmap
from pathlib import Path


class Board:
    def __init__(self, path: Path, *, create: bool = False) -> None:
        if create:
            path.write_bytes(b"\0")
        self._file = path.open("r+b" if create else "rb")
        access = mmap.ACCESS_WRITE if create else mmap.ACCESS_READ
        self._map = mmap.mmap(self._file.fileno(), 1, access=access)

    def all_ready(self) -> bool:
        return self._map[0] == 1

    def set_all_ready(self, ready: bool) -> None:
        self._map[0] = 1 if ready else 0

    def close(self) -> None:
        self._map.close()
        self._file.close()
