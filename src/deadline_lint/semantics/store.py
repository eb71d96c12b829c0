"""Module summaries and facts' local values kept in the results cache, content-addressed: one
small JSON file per module content (and name), under `<cache>/v1/summaries/<tool>/`, so a
later run (a pre-commit run over one changed file) reads what an unchanged module says instead
of parsing it. The tool's fingerprint is in the path: another build never reads them.

Only data derived from one module's text is stored (names, and facts' local values), so an
entry never goes stale; a damaged or foreign file is a miss, never an error (each is sealed
with its key and a digest of its bytes, sealed.py, and each reader checks the shape of the
fields it reads), and entries are written atomically (a temporary file, then `os.replace`).

Other builds' folders beside this one are dropped when this build first writes, unless one was
used within `KEEP_OTHER_BUILDS_SECONDS` (two installs of different versions, say pre-commit's
and the editor's, may take turns): an upgrade does not leave every older build's summaries
behind."""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Dict, Optional, Set

from deadline_lint.semantics.session import current
from deadline_lint.support import sealed
from deadline_lint.support.regular_files import open_regular

KEEP_OTHER_BUILDS_SECONDS = 7 * 24 * 3600
_USED = ".used"  # touched by every run that writes: when the build last wrote here


class Store:
    """The run's store: where entries live (None: nothing is stored, no results cache), the
    entries read or written this run by key, and those not written yet."""

    def __init__(self) -> None:
        self.folder: Optional[str] = None
        self.entries: Dict[str, Optional[Dict[str, Any]]] = {}
        self.dirty: Set[str] = set()


def _store() -> Store:
    return current().state(Store, lasting=True)


def use_store(folder: Optional[str]) -> None:
    held = _store()
    if folder != held.folder:
        held.folder = folder
        held.entries.clear()
        held.dirty.clear()


def _path(folder: str, key: str) -> str:
    return os.path.join(folder, key[:2], f"{key}.json")


def entry(key: str) -> Optional[Dict[str, Any]]:
    """The stored entry for a module content, or None (no store, or nothing stored yet)."""
    held = _store()
    if held.folder is None:
        return None
    if key not in held.entries:
        found = None
        try:
            with open_regular(_path(held.folder, key)) as handle:
                payload = sealed.unseal(handle.read(), key)
            data = json.loads(payload) if payload is not None else None
            if isinstance(data, dict) and data.get("key") == key:
                found = data
        except (OSError, ValueError):
            found = None
        held.entries[key] = found
    return held.entries[key]


def put(key: str, field: str, value: Any) -> None:
    """Record `value` under `field` of the module's entry; written by `flush`."""
    held = _store()
    if held.folder is None:
        return
    found = entry(key)
    if found is None:
        found = held.entries[key] = {"key": key}
    found[field] = value
    held.dirty.add(key)


def flush() -> None:
    """Write the entries changed since the last flush (between files, never mid-check)."""
    held = _store()
    if held.folder is None or not held.dirty:
        return
    _mark_used(held.folder)
    for key in sorted(held.dirty):
        data = held.entries.get(key)
        if data is None:
            continue
        path = _path(held.folder, key)
        temporary = None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # One writer per name (not tempfile: importing it loads shutil, random, bz2, lzma).
            temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            payload = json.dumps(data, separators=(",", ":")).encode("utf-8")
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(handle, "wb") as out:
                out.write(sealed.seal(key, payload))
            os.replace(temporary, path)
        except (OSError, TypeError, ValueError):
            if temporary is not None and os.path.exists(temporary):
                os.unlink(temporary)
            break  # a folder we may not write: the run goes on without storing
    held.dirty.clear()


def _mark_used(folder: str) -> None:
    marker = os.path.join(folder, _USED)
    first = not os.path.exists(marker)
    try:
        os.makedirs(folder, exist_ok=True)
        with open(marker, "a"):
            pass
        os.utime(marker)
    except OSError:
        return
    if first:
        _drop_other_builds(folder)


def _drop_other_builds(folder: str) -> None:
    """Remove the other builds' folders beside `folder` that no run wrote to lately."""
    parent = os.path.dirname(folder)
    now = time.time()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        other = os.path.join(parent, name)
        if other == folder or not os.path.isdir(other):
            continue
        try:
            used = os.stat(os.path.join(other, _USED)).st_mtime
        except OSError:
            used = 0.0  # never marked (an older layout): as old as can be
        if now - used > KEEP_OTHER_BUILDS_SECONDS:
            import shutil  # here: a warm run keeps its builds and need not load it

            shutil.rmtree(other, ignore_errors=True)
