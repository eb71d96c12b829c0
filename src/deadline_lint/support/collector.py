"""The cyclic garbage collector, paused while a tree is built and analysed."""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """A file's tree and findings are millions of objects in a large file, none of them in a
    reference cycle that must go before the file is done; each run of the cyclic collector
    walks them all (and every project module parsed so far), which made checking
    super-linear in file size and the project prefilter's reads of modules slow."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
