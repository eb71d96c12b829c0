"""Parsed inputs kept (marshalled) beside the results cache: the built-in catalog's YAML
(catalog/) and the `[tool.deadline-lint]` tables of pyproject.toml files (settings/).

Parsing the YAML files, and importing PyYAML to do it, is most of what building a checker
costs: a run that checks one changed file (pre-commit) would pay it every time. So a run with
a results cache reads the parsed documents from `catalog-<key>.marshal` in the cache folder,
keyed by the files' names and contents and the interpreter (marshal's format is the
interpreter's); any other run, or a missing, foreign or unreadable file, parses the YAML as
before and, with a folder, writes the file for the next run. What is read back is trusted
only when it is sealed (sealed.py) for exactly these inputs and has the shape the caller
checks (for the catalog: each file's document, in order, valid against its schema); an empty
list or a wrongly shaped document in its place is rebuilt, never used. It lives here, below
both of its users, so a run answered from the cache loads neither the catalog nor its readers.
"""
from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

from deadline_lint.support import sealed
from deadline_lint.support.regular_files import open_regular

Documents = List[Tuple[str, Any]]  # (file stem, parsed content), in file name order

_folder: Optional[str] = None


def keep_in(folder: Optional[str]) -> None:
    """Read and write the parsed catalog under `folder` (None: parse the YAML every run)."""
    global _folder
    _folder = folder


def documents(
    paths: List[Path], parse: Callable[[List[Tuple[Path, bytes]]], Documents], valid: Callable[[Documents], bool],
) -> Documents:
    """`parse(files)` of the YAML files at `paths`, or what an earlier run kept of it when
    `valid` accepts it."""
    files = [(path, path.read_bytes()) for path in paths]
    folder = _folder
    if folder is None:
        return parse(files)
    parts = [sys.version.encode()]
    for path, data in files:
        parts += [path.name.encode(), data]
    inputs = sealed.inputs_digest(*parts)
    target = os.path.join(folder, f"catalog-{inputs}.marshal")
    found = _read(target, inputs)
    if isinstance(found, list) and valid(found):
        return found
    parsed = parse(files)
    _write(folder, target, inputs, parsed)
    return parsed


def kept(kind: str, data: bytes, parse: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
    """`parse()`, whose result depends only on `data` (and the interpreter), or what an earlier
    run kept of it when `valid` accepts it: the `[tool.deadline-lint]` table of a
    pyproject.toml, which every run reads and whose parser (tomllib compiles its patterns on
    import) costs a one-file run more than the marshalled table does. Errors are raised by
    `parse` and never kept."""
    folder = _folder
    if folder is None:
        return parse()
    inputs = sealed.inputs_digest(sys.version.encode(), kind.encode(), data)
    target = os.path.join(folder, f"{kind}-{inputs}.marshal")
    found = _read(target, inputs)
    if isinstance(found, tuple) and len(found) == 1 and valid(found[0]):
        return found[0]
    parsed = parse()
    _write(folder, target, inputs, (parsed,))
    return parsed


_UNREADABLE = object()


def _read(target: str, inputs: str) -> Any:
    """The value kept at `target` for `inputs`, or _UNREADABLE (missing, foreign, damaged)."""
    try:
        with open_regular(target) as handle:
            payload = sealed.unseal(handle.read(), inputs)
        return _UNREADABLE if payload is None else marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return _UNREADABLE


def _write(folder: str, target: str, inputs: str, parsed: Any) -> None:
    """Best effort: a folder we cannot write only costs the next run a parse."""
    try:
        data = sealed.seal(inputs, marshal.dumps(parsed))
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
