"""Decoding ``application/vnd.kubernetes.protobuf`` request bodies into JSON-shaped objects.

kubectl's typed clients (``kubectl create configmap|secret|deployment|...``) and Go
controllers configured for protobuf send built-in objects in Kubernetes' protobuf
encoding. kube-apiserver decodes them into the Go struct, so a protobuf write is
equivalent to the JSON write of the same struct; this module produces that JSON form.

Format (k8s.io/apimachinery pkg/runtime/serializer/protobuf): the 4-byte magic
``k8s\\x00`` followed by a ``runtime.Unknown`` message {1: typeMeta {1: apiVersion,
2: kind}, 2: raw, 3: contentEncoding, 4: contentType}; ``raw`` is the object's message,
whose field numbers, JSON names and Go types come from :mod:`.kubetypes`.

JSON rendering follows encoding/json on the Go struct: scalars that are not pointers are
dropped when zero (what ``omitempty`` and JSON clients omitting them amount to), pointer
scalars keep their zero, embedded structs render even when empty (``{}``), zero
``metav1.Time`` is absent, ``[]byte`` is base64. Unknown field numbers are skipped, as
gogo-protobuf's generated Unmarshal does. Custom resources have no protobuf form: a
kind without a message here is answered 415, as the apiextensions-apiserver does.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from ...meta.time import format_micro_time, format_time
from .kubetypes import KINDS, MESSAGES, F

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_META_V1 = "io.k8s.apimachinery.pkg.apis.meta.v1."
# Kinds registered in every group version (metav1.AddToGroupVersion), any apiVersion.
_ANY_GROUP_KINDS = {"DeleteOptions": _META_V1 + "DeleteOptions"}
_SCALAR_ZERO: dict[str, Any] = {
    "string": "",
    "bytes": "",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "double": 0.0,
    "float": 0.0,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ProtobufError(ValueError):
    """The body is not a well-formed Kubernetes protobuf message."""


class UnsupportedKind(ProtobufError):
    """The body's kind has no protobuf form on this server (custom resources)."""


Wire = tuple[int, int, Any]  # (field number, wire type, value: int or bytes)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _wire(data: bytes) -> Iterator[Wire]:
    """The (number, wire type, value) triples of one message, in order."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire_type = key >> 3, key & 7
        value: Any
        if wire_type == 0:
            value, pos = _varint(data, pos)
        elif wire_type == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire_type == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire_type == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire_type}")
        if pos > len(data):
            raise ProtobufError("truncated message")
        yield number, wire_type, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, wire_type: int, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode("utf-8", errors="replace")
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "bool":
        return bool(value)
    if kind in ("int32", "int64"):
        return _signed(value)
    if kind == "double":
        return struct.unpack("<d", value)[0]
    if kind == "float":
        return struct.unpack("<f", value)[0]
    raise ProtobufError(f"unknown scalar type {kind}")


def _timestamp(data: bytes, micro: bool) -> str | None:
    if not data:
        return None
    seconds = nanos = 0
    for number, _, value in _wire(data):
        if number == 1:
            seconds = _signed(value)
        elif number == 2:
            nanos = _signed(value)
    when = _EPOCH + timedelta(seconds=seconds)
    if micro:
        when += timedelta(microseconds=nanos // 1000)
        return format_micro_time(when)
    return format_time(when)


def _duration(data: bytes) -> str:
    nanos = 0
    for number, _, value in _wire(data):
        if number == 1:
            nanos = _signed(value)
    return go_duration(nanos)


def go_duration(nanos: int) -> str:
    """Go's ``time.Duration.String()`` form (``1h2m3.5s``, ``150ms``) that metav1.Duration uses."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _fraction(nanos, size) + unit
    hours, rest = divmod(nanos, 3600 * 1_000_000_000)
    minutes, rest = divmod(rest, 60 * 1_000_000_000)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
    return sign + text + _fraction(rest, 1_000_000_000) + "s"


def _fraction(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + f"{frac:0{digits}d}".rstrip("0")


def _special(kind: str, data: bytes) -> Any:
    """Decode the messages with a JSON form of their own (meta Time, Quantity, ...)."""
    if kind in ("Time", "MicroTime"):
        return _timestamp(data, kind == "MicroTime")
    if kind == "Duration":
        return _duration(data)
    fields = {number: value for number, _, value in _wire(data)}
    if kind == "Quantity":
        return bytes(fields.get(1, b"")).decode()
    if kind == "IntOrString":
        if _signed(fields.get(1, 0)) == 1:
            return bytes(fields.get(3, b"")).decode()
        return _signed(fields.get(2, 0))
    if kind in ("RawExtension", "FieldsV1", "JSON"):
        raw = bytes(fields.get(1, b""))
        try:
            return orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError as exc:
            raise ProtobufError(f"{kind} does not hold JSON: {exc}") from exc
    raise UnsupportedKind(f"{kind} has no protobuf decoding here")


_SPECIALS = (
    "Time",
    "MicroTime",
    "Duration",
    "Quantity",
    "IntOrString",
    "RawExtension",
    "FieldsV1",
    "JSON",
    "JSONSchemaPropsOrArray",
    "JSONSchemaPropsOrBool",
    "JSONSchemaPropsOrStringArray",
)


def _element(kind: str, wire_type: int, value: Any) -> Any:
    """One value of type ``kind`` (no ``[]``/``map[]`` prefix)."""
    if kind in _SCALAR_ZERO:
        return _scalar(kind, wire_type, value)
    if kind in _SPECIALS:
        return _special(kind, bytes(value))
    return decode_message(kind, bytes(value))


def _is_zero(kind: str, value: Any) -> bool:
    if value is None:
        return True
    if kind in _SCALAR_ZERO:
        return bool(value == _SCALAR_ZERO[kind])
    return kind == "IntOrString" and value in (0, "")


def _packed(kind: str, data: bytes) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(data):
        if kind in ("double", "float"):
            size = 8 if kind == "double" else 4
            out.append(_scalar(kind, 1, data[pos : pos + size]))
            pos += size
        else:
            value, pos = _varint(data, pos)
            out.append(_scalar(kind, 0, value))
    return out


def _map_entry(kind: str, data: bytes) -> tuple[str, Any]:
    key: str = ""
    value: Any = _SCALAR_ZERO.get(kind)
    for number, wire_type, item in _wire(data):
        if number == 1:
            key = bytes(item).decode("utf-8", errors="replace")
        elif number == 2:
            value = _element(kind, wire_type, item)
    if value is None and kind not in _SCALAR_ZERO and kind not in _SPECIALS:
        value = {}
    return key, value


def decode_message(message: str, data: bytes) -> dict[str, Any]:
    """Decode one message of the :mod:`.kubetypes` table into its JSON object form."""
    spec = MESSAGES.get(message)
    if spec is None:
        raise UnsupportedKind(f"no protobuf schema for {message}")
    by_number: dict[int, F] = {f.number: f for f in spec if f.number}
    seen: dict[int, list[tuple[int, Any]]] = {}
    for number, wire_type, value in _wire(data):
        if number in by_number:
            seen.setdefault(number, []).append((wire_type, value))
    out: dict[str, Any] = {}
    for f in spec:
        values = seen.get(f.number)
        if not values:
            continue
        if "i" in f.flags:
            out.update(decode_message(f.type, bytes(values[-1][1])))
        elif f.type.startswith("map[]"):
            kind = f.type[len("map[]") :]
            out[f.name] = dict(_map_entry(kind, bytes(v)) for _, v in values)
        elif f.type.startswith("[]"):
            kind = f.type[2:]
            items: list[Any] = []
            for wire_type, value in values:
                if wire_type == 2 and kind in _SCALAR_ZERO and kind not in ("string", "bytes"):
                    items.extend(_packed(kind, bytes(value)))
                else:
                    items.append(_element(kind, wire_type, value))
            out[f.name] = items
        else:
            wire_type, value = values[-1]
            decoded = _element(f.type, wire_type, value)
            if "p" not in f.flags and _is_zero(f.type, decoded):
                continue
            if decoded is None:
                continue
            out[f.name] = decoded
    return out


def decode(body: bytes) -> dict[str, Any]:
    """Decode a protobuf request body (magic + runtime.Unknown) into a JSON-shaped object.

    Raises :class:`UnsupportedKind` for kinds without a protobuf form here and
    :class:`ProtobufError` for malformed bodies.
    """
    if not body.startswith(MAGIC):
        raise ProtobufError(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        )
    api_version = kind = ""
    raw = b""
    content_type = ""
    for number, _, value in _wire(body[len(MAGIC) :]):
        if number == 1:
            for sub, _, item in _wire(bytes(value)):
                if sub == 1:
                    api_version = bytes(item).decode()
                elif sub == 2:
                    kind = bytes(item).decode()
        elif number == 2:
            raw = bytes(value)
        elif number == 4:
            content_type = bytes(value).decode()
    if content_type and content_type != MEDIA_TYPE:
        raise ProtobufError(f"unsupported embedded content type {content_type!r}")
    message = KINDS.get((api_version, kind)) or _ANY_GROUP_KINDS.get(kind)
    if message is None:
        raise UnsupportedKind(f"no protobuf form for {kind} in {api_version or 'v1'}")
    obj = decode_message(message, raw)
    return (
        {"apiVersion": api_version, "kind": kind, **obj} if api_version else {"kind": kind, **obj}
    )
