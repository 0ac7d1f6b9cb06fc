"""Secret decoding as kube-apiserver does it: ``data`` values are base64 (a value that is not
is a 400 at decode, worded as Go's encoding/base64 error) and ``stringData`` is folded into
``data`` and never stored (k8s.io/kubernetes pkg/registry/core/secret strategy)."""

from __future__ import annotations

import base64
import string

from . import errors
from .store import Obj

__all__ = ["decode_secret"]

_ALPHABET = frozenset(string.ascii_letters + string.digits + "+/")


def decode_secret(obj: Obj, version: str) -> None:
    """Check ``data`` and fold ``stringData`` into it (in place); APIError 400 for data
    that is not base64."""
    data = obj.get("data")
    if isinstance(data, dict):
        for value in data.values():
            at = base64_error(value) if isinstance(value, str) else None
            if at is not None:
                raise errors.bad_request(
                    f'Secret in version "{version}" cannot be handled as a Secret:'
                    f" illegal base64 data at input byte {at}"
                )
    plain = obj.pop("stringData", None)
    if isinstance(plain, dict) and plain:
        folded = dict(data) if isinstance(data, dict) else {}
        for key, value in plain.items():
            folded[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = folded


def base64_error(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding`` stops decoding ``text`` (its CorruptInputError
    offset), or None when it decodes: an illegal character, padding out of place, or an
    incomplete last quantum (reported at its start)."""
    text = text.replace("\r", "").replace("\n", "")
    i = 0
    while i < len(text):
        start = i
        for position in range(4):
            if i >= len(text):
                return start if position else None
            char = text[i]
            if char == "=":
                return _padding_error(text, i, position)
            if char not in _ALPHABET:
                return i
            i += 1
    return None


def _padding_error(text: str, i: int, position: int) -> int | None:
    if position < 2:
        return i
    if position == 2:
        if i + 1 >= len(text) or text[i + 1] != "=":
            return i
        i += 1
    return i + 1 if i + 1 < len(text) else None
