"""LIST continue tokens as kube-apiserver's etcd3 storage writes and reads them
(k8s.io/apiserver pkg/storage/continue.go EncodeContinue/DecodeContinue): base64 (URL
alphabet, no padding) of ``{"v":"meta.k8s.io/v1","rv":<rv>,"start":"<key>\\u0000"}``,
the start key relative to the listed prefix (``namespace/name``, ``name`` of a
cluster-scoped kind, ``/name`` in a list of one namespace), and the
errors of a token that does not decode, in its words.
"""

from __future__ import annotations

import base64
import posixpath
import string
from typing import Any

import orjson

from .gojson import syntax_error, top_level_type_error

__all__ = ["InvalidToken", "decode_continue", "encode_continue"]

_VERSION = "meta.k8s.io/v1"
_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
_INVALID = "continue key is not valid"


class InvalidToken(ValueError):
    """A token DecodeContinue refuses; the text after "invalid continue token: "."""


def encode_continue(list_rv: int, namespace: str, name: str, in_namespace: bool = False) -> str:
    """The token that continues after ``namespace/name`` at ``list_rv`` (``in_namespace``:
    a list of one namespace, whose keys are relative to it: ``/name``)."""
    key = f"{namespace}/{name}" if namespace or in_namespace else name
    token = orjson.dumps({"v": _VERSION, "rv": list_rv, "start": key + "\x00"})
    return base64.urlsafe_b64encode(token).decode().rstrip("=")


def _raw_url_base64(token: str) -> bytes:
    """base64.RawURLEncoding.DecodeString, with Go's CorruptInputError offsets."""
    count = 0
    for index, char in enumerate(token):
        if char in "\r\n":
            continue
        if char not in _ALPHABET:
            raise InvalidToken(f"{_INVALID}: illegal base64 data at input byte {index}")
        count += 1
    if count % 4 == 1:
        raise InvalidToken(f"{_INVALID}: illegal base64 data at input byte {len(token) - 1}")
    clean = token.replace("\r", "").replace("\n", "")
    return base64.urlsafe_b64decode(clean + "=" * (-len(clean) % 4))


def _json(data: bytes) -> dict[str, Any]:
    problem = syntax_error(data) or top_level_type_error(data, "storage.continueToken")
    if problem is not None:
        raise InvalidToken(f"{_INVALID}: {problem}")
    decoded = orjson.loads(data)
    if decoded is None:
        return {}
    assert isinstance(decoded, dict)
    for field, go_type, python in (
        ("v", "string", str),
        ("rv", "int64", int),
        ("start", "string", str),
    ):
        value = decoded.get(field)
        if value is not None and (not isinstance(value, python) or isinstance(value, bool)):
            kind = {str: "string", bool: "bool", list: "array", dict: "object"}.get(
                type(value), "number"
            )
            raise InvalidToken(
                f"{_INVALID}: json: cannot unmarshal {kind} into Go struct field"
                f" continueToken.{field} of type {go_type}"
            )
    return decoded


def decode_continue(token: str) -> tuple[int, str, str]:
    """``(resourceVersion, namespace, name)`` of the key a token continues after;
    InvalidToken for a token kube-apiserver refuses."""
    data = _json(_raw_url_base64(token))
    version = data.get("v") or ""
    if version != _VERSION:
        raise InvalidToken(f"{_INVALID}: server does not recognize this encoded version {version}")
    list_rv, start = data.get("rv") or 0, data.get("start") or ""
    if list_rv == 0:
        raise InvalidToken(
            f"{_INVALID}: incorrect encoded start resourceVersion (version {_VERSION})"
        )
    if not start:
        raise InvalidToken(f"{_INVALID}: encoded start key empty (version {_VERSION})")
    key = start if start.startswith("/") else "/" + start
    if posixpath.normpath(key) != key:
        raise InvalidToken(f"{_INVALID}: {start}")
    namespace, _, name = key[1:].removesuffix("\x00").rpartition("/")
    return list_rv, namespace, name
