"""Cache files sealed with what they were built from and a digest of their own bytes.

A cache file's name says what it should hold, but a name proves nothing: a file copied or
written there by hand (an empty catalog, another project's results) would be read as the
real thing and change findings without a word. So every kept artefact (the compiled catalog,
the `[tool.deadline-lint]` table, the results cache, the module summaries) is written as

    deadline-lint sealed 1\\n<digest of its inputs> <digest of the payload>\\n<payload>

and read back only when the seal is there, names the inputs this run would build it from,
and matches the payload's bytes; anything else is a miss, and the caller rebuilds. The reader
then checks the payload's shape before using it. This guards against damage and mix-ups,
not against someone who recomputes the digests on purpose (they can edit the tool too).
"""
from __future__ import annotations

import hashlib
from typing import Optional

_MAGIC = b"deadline-lint sealed 1\n"


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
