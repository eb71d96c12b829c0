"""The one glob rule for paths: gitignore's (pathspec), relative to a folder.

`exclude`, `per_path_ignores` and `--exclude` all use it, and so does the walk's reading of
`.gitignore` files. A pattern without a slash (`migrations`, `*_pb2.py`) matches at any
depth; one with a slash (`tests/*`, `/scripts`) is anchored at the folder the pattern is
relative to (the profile's folder; the working directory for `--exclude`); a matched folder
covers everything below it; `**` spans folders and `!` re-includes.
"""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import pathspec


@functools.lru_cache(maxsize=256)
def compile_patterns(patterns: Tuple[str, ...]) -> "pathspec.PathSpec":
    import pathspec  # only once a profile or the command line has patterns to match

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def matches(patterns: Sequence[str], relpath: str, is_dir: bool = False) -> bool:
    """`relpath` uses `/`; a folder is matched as `name/` so `build/` patterns apply to it."""
    if not patterns or relpath is None:
        return False
    if is_dir and not relpath.endswith("/"):
        relpath += "/"
    return compile_patterns(tuple(patterns)).match_file(relpath)


def relative_path(path: str, root: str) -> Optional[str]:
    """`path` relative to `root` with `/` separators; None when it lies outside `root`."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if relative == os.curdir:
        return ""
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")
