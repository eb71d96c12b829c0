"""The built-in catalog's YAML, parsed once and kept (marshalled) beside the results cache.

Parsing the YAML files, and importing PyYAML to do it, is most of what building a checker
costs: a run that checks one changed file (pre-commit) would pay it every time. So a run with
a results cache reads the parsed documents from `catalog-<key>.marshal` in the cache folder,
keyed by the files' names and contents and the interpreter (marshal's format is the
interpreter's); any other run, or a missing, foreign or unreadable file, parses the YAML as
before and, with a folder, writes the file for the next run. Validation happens before a
file is written, so what is read back is as valid as what was parsed.
"""
from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

from deadline_lint.support import digests

Documents = List[Tuple[str, Any]]  # (file stem, parsed content), in file name order

_folder: Optional[str] = None


def keep_in(folder: Optional[str]) -> None:
    """Read and write the parsed catalog under `folder` (None: parse the YAML every run)."""
    global _folder
    _folder = folder


def documents(paths: List[Path], parse: Callable[[List[Tuple[Path, bytes]]], Documents]) -> Documents:
    """`parse(files)` of the YAML files at `paths`, or what an earlier run kept of it."""
    files = [(path, path.read_bytes()) for path in paths]
    folder = _folder
    if folder is None:
        return parse(files)
    digest = digests.blake2b(sys.version.encode(), digest_size=16)
    for path, data in files:
        digest.update(b"\0%s\0%d\0" % (path.name.encode(), len(data)))
        digest.update(data)
    kept = os.path.join(folder, f"catalog-{digest.hexdigest()}.marshal")
    try:
        with open(kept, "rb") as handle:
            found = marshal.load(handle)
        if isinstance(found, list):
            return found
    except (OSError, EOFError, ValueError, TypeError):
        pass
    parsed = parse(files)
    _write(folder, kept, parsed)
    return parsed


def kept(kind: str, data: bytes, parse: Callable[[], Any]) -> Any:
    """`parse()`, whose result depends only on `data` (and the interpreter), or what an earlier
    run kept of it: the `[tool.deadline-lint]` table of a pyproject.toml, which every run reads
    and whose parser (tomllib compiles its patterns on import) costs a one-file run more than
    the marshalled table does. Errors are raised by `parse` and never kept."""
    folder = _folder
    if folder is None:
        return parse()
    digest = digests.blake2b(b"%s\0%s\0" % (sys.version.encode(), kind.encode()), digest_size=16)
    digest.update(data)
    target = os.path.join(folder, f"{kind}-{digest.hexdigest()}.marshal")
    try:
        with open(target, "rb") as handle:
            found = marshal.load(handle)
        if isinstance(found, tuple) and len(found) == 1:
            return found[0]
    except (OSError, EOFError, ValueError, TypeError):
        pass
    parsed = parse()
    _write(folder, target, (parsed,))
    return parsed


def _write(folder: str, target: str, parsed: Any) -> None:
    """Best effort: a folder we cannot write only costs the next run a parse."""
    try:
        data = marshal.dumps(parsed)
    except ValueError:  # a value marshal cannot hold (a YAML timestamp): keep parsing
        return
    try:
        os.makedirs(folder, exist_ok=True)
        temporary = f"{target}.{os.getpid()}.tmp"  # one writer per name: replaced whole, never torn
        try:
            with open(temporary, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass
