"""Cache files sealed with what they were built from and a digest of their own bytes.

A cache file's name says what it should hold, but a name proves nothing: a file copied or
written there by hand (an empty catalog, another project's results) would be read as the
real thing and change findings without a word. So every kept artefact (the compiled catalog,
the `[tool.deadline-lint]` table, the results cache, the module summaries) is written as

    deadline-lint sealed 1\\n<digest of its inputs> <digest of the payload>\\n<payload>

and read back only when the seal is there, names the inputs this run would build it from,
and matches the payload's bytes; anything else is a miss, and the caller rebuilds. The reader
then checks the payload's shape before using it. A file most of whose readers need only its
first part (the results cache: a run where nothing changed reads its findings, not what they
depend on) is sealed in two parts (`seal_parts`): the seal names both parts' digests, and the
second part is hashed only when it is read. This guards against damage and mix-ups,
not against someone who recomputes the digests on purpose (they can edit the tool too).
"""
from __future__ import annotations

import hashlib
from typing import Optional, Tuple

_MAGIC = b"deadline-lint sealed 1\n"
_PARTS = b"deadline-lint sealed in parts 1\n"


def _digest(data: "bytes | memoryview") -> bytes:
    return hashlib.blake2b(data, digest_size=16).hexdigest().encode()


def _encoded(inputs: str) -> bytes:
    return inputs.encode("utf-8", "surrogatepass")  # a module named by a file name that is not UTF-8


def inputs_digest(*parts: bytes) -> str:
    """One digest for what an artefact is built from (each part framed by its length)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(b"%d\0" % len(part))
        digest.update(part)
    return digest.hexdigest()


def seal(inputs: str, payload: bytes) -> bytes:
    return b"".join((_MAGIC, _encoded(inputs), b" ", _digest(payload), b"\n", payload))


def unseal(data: bytes, inputs: str) -> Optional[bytes]:
    """The payload of a file written by `seal(inputs, payload)`; None for anything else."""
    payload = unseal_view(data, inputs)
    return None if payload is None else payload.tobytes()


def unseal_view(data: bytes, inputs: str) -> Optional[memoryview]:
    """`unseal`'s payload as a view into `data`, for a reader that takes any bytes-like
    value (`marshal.loads`): the results file of a large project is megabytes, copied for
    nothing on every warm run."""
    if not data.startswith(_MAGIC):
        return None
    end = data.find(b"\n", len(_MAGIC))
    if end < 0:
        return None
    header = data[len(_MAGIC):end].rsplit(b" ", 1)  # the inputs may hold a space (a module name)
    payload = memoryview(data)[end + 1:]
    if len(header) != 2 or header[0] != _encoded(inputs) or header[1] != _digest(payload):
        return None
    return payload


def seal_parts(inputs: str, head: bytes, tail: bytes) -> bytes:
    """`seal` for a payload in two parts, `head` then `tail`, each with its own digest:

        deadline-lint sealed in parts 1\\n<inputs> <head's digest> <tail's digest> <head's size>\\n<head><tail>
    """
    return b"".join((
        _PARTS, _encoded(inputs), b" ", _digest(head), b" ", _digest(tail), b" %d\n" % len(head), head, tail,
    ))


def parts_size(data: bytes) -> Optional[int]:
    """From the first bytes of a file written by `seal_parts`, how many hold its seal line
    and head (a reader needs no more for the head); None for anything else, or when the
    seal line is not all in `data`."""
    if not data.startswith(_PARTS):
        return None
    end = data.find(b"\n", len(_PARTS))
    size = data[len(_PARTS):end].rsplit(b" ", 1)[-1]
    return end + 1 + int(size) if end >= 0 and size.isdigit() else None


def unseal_head(data: bytes, inputs: str) -> Optional[Tuple[memoryview, memoryview, bytes]]:
    """The head of a file written by `seal_parts(inputs, head, tail)`, checked, as a view into
    `data`; with the tail, not yet checked, and the digest it must have (`tail_holds`).
    None for anything else."""
    if not data.startswith(_PARTS):
        return None
    end = data.find(b"\n", len(_PARTS))
    if end < 0:
        return None
    header = data[len(_PARTS):end].rsplit(b" ", 3)  # the inputs may hold a space
    if len(header) != 4 or header[0] != _encoded(inputs) or not header[3].isdigit():
        return None
    size = int(header[3])
    payload = memoryview(data)[end + 1:]
    head = payload[:size]
    if len(head) != size or header[1] != _digest(head):
        return None
    return head, payload[size:], header[2]


def tail_holds(tail: "bytes | memoryview", digest: bytes) -> bool:
    """The tail `unseal_head` gave is the one its seal names."""
    return _digest(tail) == digest
