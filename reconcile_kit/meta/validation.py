"""Kubernetes value rules: DNS-1123 and DNS-1035 names, qualified names, label values.

Rules, limits and messages are those of k8s.io/apimachinery ``pkg/util/validation``
(validation.go as in v0.32: ``IsDNS1123Subdomain``, ``IsDNS1123Label``, ``IsDNS1035Label``,
``IsQualifiedName``, ``IsValidLabelValue``, ``MaxLenError``, ``RegexError``,
``EmptyError``). Each ``*_errors`` function returns what its Go counterpart returns: no
messages for a valid value, else the messages kube-apiserver puts after
``Invalid value: "...": `` (one field error each). Clients compare them with a real API
server's byte for byte, so the wording stays Go's, down to the doubled space before
``or`` in the examples.

Lengths count UTF-8 bytes, as Go's ``len(string)`` does. The ``*_FMT`` patterns are
unanchored like Go's; the compiled ``*_RE`` patterns must be used with ``fullmatch``
(Go anchors them with ``^...$``, and Python's ``$`` would also accept a trailing newline).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "DNS1035_LABEL_FMT",
    "DNS1035_LABEL_MAX_LENGTH",
    "DNS1035_LABEL_RE",
    "DNS1123_LABEL_FMT",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_LABEL_RE",
    "DNS1123_SUBDOMAIN_FMT",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_RE",
    "LABEL_VALUE_FMT",
    "LABEL_VALUE_MAX_LENGTH",
    "LABEL_VALUE_RE",
    "QUALIFIED_NAME_FMT",
    "QUALIFIED_NAME_MAX_LENGTH",
    "QUALIFIED_NAME_RE",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "path_segment_errors",
    "qualified_name_errors",
]

_EMPTY_ERROR: Final = "must be non-empty"

# The patterns (unanchored, as Go's), then their limits in UTF-8 bytes, then compiled.
DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT: Final = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT: Final = f"({QUALIFIED_NAME_FMT})?"

DNS1123_LABEL_MAX_LENGTH: Final = 63
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
DNS1035_LABEL_MAX_LENGTH: Final = 63
QUALIFIED_NAME_MAX_LENGTH: Final = 63
"""Longest name part of a qualified name (the prefix is a DNS-1123 subdomain: 253)."""
LABEL_VALUE_MAX_LENGTH: Final = 63

DNS1123_LABEL_RE: Final = re.compile(DNS1123_LABEL_FMT)
DNS1123_SUBDOMAIN_RE: Final = re.compile(DNS1123_SUBDOMAIN_FMT)
DNS1035_LABEL_RE: Final = re.compile(DNS1035_LABEL_FMT)
QUALIFIED_NAME_RE: Final = re.compile(QUALIFIED_NAME_FMT)
LABEL_VALUE_RE: Final = re.compile(LABEL_VALUE_FMT)


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: at most 253 bytes of dot-separated DNS-1123 labels."""
    return _pattern_errors(
        value,
        ("example.com",),
        DNS1123_SUBDOMAIN_MAX_LENGTH,
        DNS1123_SUBDOMAIN_RE,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
        " characters, '-' or '.', and must start and end with an alphanumeric character",
    )


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 bytes of ``[-a-z0-9]``, alphanumeric at both ends."""
    errs = _length_errors(value, DNS1123_LABEL_MAX_LENGTH)
    if DNS1123_LABEL_RE.fullmatch(value):
        return errs
    if DNS1123_SUBDOMAIN_RE.fullmatch(value):
        # A valid subdomain but no label: the length was checked, so it has dots.
        errs.append("must not contain dots")
    else:
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
                " or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                "my-name",
                "123-abc",
            )
        )
    return errs


def path_segment_errors(name: str) -> list[str]:
    """apimachinery's path.IsValidPathSegmentName (names of RBAC objects, HPAs'
    scale targets...): not ``.`` or
    ``..``, no ``/`` or ``%``."""
    for illegal in (".", ".."):
        if name == illegal:
            return [f"may not be '{illegal}'"]
    return [f"may not contain '{illegal}'" for illegal in ("/", "%") if illegal in name]


def dns1035_label_errors(value: str) -> list[str]:
    """``IsDNS1035Label``: a DNS-1123 label that starts with a letter."""
    return _pattern_errors(
        value,
        ("my-name", "abc-123"),
        DNS1035_LABEL_MAX_LENGTH,
        DNS1035_LABEL_RE,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-',"
        " start with an alphabetic character, and end with an alphanumeric character",
    )


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (label keys, finalizer names): ``[prefix/]name``.

    The optional prefix is a DNS-1123 subdomain; the name part is at most 63 bytes of
    alphanumerics, ``-``, ``_`` and ``.``, alphanumeric at both ends.
    """
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _qualified_name_regex_error()
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errs = _prefix_errors(parts[0]) if len(parts) == 2 else []
    name = parts[-1]
    if not name:
        errs.append("name part " + _EMPTY_ERROR)
    elif _byte_len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part " + _qualified_name_regex_error())
    return errs


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or a qualified name's name part (at most 63 bytes)."""
    return _pattern_errors(
        value,
        ("MyValue", "my_value", "12345"),
        LABEL_VALUE_MAX_LENGTH,
        LABEL_VALUE_RE,
        "a valid label must be an empty string or consist of alphanumeric characters,"
        " '-', '_' or '.', and must start and end with an alphanumeric character",
    )


def _pattern_errors(
    value: str, examples: tuple[str, ...], limit: int, pattern: re.Pattern[str], msg: str
) -> list[str]:
    """Go's length check, then its ``RegexError`` when ``value`` does not match."""
    errs = _length_errors(value, limit)
    if not pattern.fullmatch(value):
        errs.append(_regex_error(msg, pattern.pattern, *examples))
    return errs


def _prefix_errors(prefix: str) -> list[str]:
    if not prefix:
        return ["prefix part " + _EMPTY_ERROR]
    return ["prefix part " + msg for msg in dns1123_subdomain_errors(prefix)]


def _qualified_name_regex_error() -> str:
    return _regex_error(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with"
        " an alphanumeric character",
        QUALIFIED_NAME_FMT,
        "MyName",
        "my.name",
        "123-abc",
    )


def _length_errors(value: str, limit: int) -> list[str]:
    return [_max_len_error(limit)] if _byte_len(value) > limit else []


def _max_len_error(limit: int) -> str:
    return f"must be no more than {limit} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Go's ``RegexError``; each example is followed by ``', '``, hence ``',  or '``."""
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _byte_len(text: str) -> int:
    # surrogatepass: a lone surrogate (from a JSON \ud800 escape) must not raise here.
    return len(text.encode("utf-8", "surrogatepass"))
