"""The digests the package keys things by, from the interpreter's own implementations:
`hashlib` loads OpenSSL (`_hashlib`) on import, which a one-file run otherwise never needs.
The digests are the same bytes either way."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import blake2b, sha1
else:
    try:
        from _blake2 import blake2b
        from _sha1 import sha1
    except ImportError:  # an interpreter built without them
        from hashlib import blake2b, sha1

__all__ = ["blake2b", "sha1"]
