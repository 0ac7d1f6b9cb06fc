"""Rendezvous (highest random weight) hashing: which member of a ring owns a key.

Rendezvous hashing (Thaler & Ravishankar, "Using name-based mappings to increase hit
rates", IEEE/ACM ToN 1998): every member gets a pseudo-random weight for the key, and the
member with the highest weight owns it. The assignment depends only on the key and the set
of members (not on their order or on history), and when a member joins or leaves only the
keys it wins or held move: about ``1/n`` of them, the minimum.

Pure functions: no I/O, no state. Weights are the first 8 bytes of BLAKE2b over
``member NUL key``, so every replica (and every Python process, whatever its hash seed)
computes the same assignment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

__all__ = ["assign", "object_key", "owner", "weight"]


def object_key(namespace: str | None, name: str) -> str:
    """The key an object is hashed by: ``namespace/name`` (``/name`` when cluster-scoped).
    The sharder and a member handing its objects over must hash alike."""
    return f"{namespace or ''}/{name}"


def weight(member: str, key: str) -> int:
    """The weight of ``member`` for ``key``: an unsigned 64-bit integer."""
    digest = hashlib.blake2b(f"{member}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def owner(key: str, members: Iterable[str]) -> str | None:
    """The member owning ``key`` (the highest weight; ties, which need a 64-bit hash
    collision, go to the greater name), or None when ``members`` is empty."""
    best: tuple[int, str] | None = None
    for member in members:
        candidate = (weight(member, key), member)
        if best is None or candidate > best:
            best = candidate
    return best[1] if best is not None else None


def assign(keys: Iterable[str], members: Iterable[str]) -> Mapping[str, str | None]:
    """``{key: owner(key, members)}`` for every key (None for all when no members)."""
    ring = sorted(set(members))
    return {key: owner(key, ring) for key in keys}
