"""Object metadata rules: names, generated names, labels, timestamps, uids.

Messages follow k8s.io/apimachinery/pkg/util/validation and
k8s.io/apiserver/pkg/storage/names (generateName).
"""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from . import errors

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_RE = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_LABEL_RE = re.compile(rf"^{_LABEL}$")
_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used"
    " for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and"
    " must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex"
    " used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an"
    " alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or"
    " 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def now() -> str:
    """The current time as an RFC 3339 UTC timestamp with seconds (metav1.Time)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(prefix: str) -> str:
    """``prefix`` cut to 58 characters plus 5 random ones, as names.SimpleNameGenerator."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return prefix[:58] + "".join(random.choices(alphabet, k=5))


def name_causes(name: str, style: str) -> list[dict[str, str]]:
    """Causes for an invalid ``metadata.name``; ``style`` is subdomain, label or dns1035."""
    if style == "label":
        ok, limit, msg = bool(_LABEL_RE.match(name)), 63, LABEL_MSG
    elif style == "dns1035":
        ok, limit, msg = bool(_DNS1035_RE.match(name)), 63, DNS1035_MSG
    else:
        ok, limit, msg = bool(_SUBDOMAIN_RE.match(name)), 253, SUBDOMAIN_MSG
    causes = []
    if len(name) > limit:
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "metadata.name",
                f'Invalid value: "{name}": must be no more than {limit} characters',
            )
        )
    if not ok:
        causes.append(
            errors.cause("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {msg}')
        )
    return causes


def _qualified_name_ok(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _SUBDOMAIN_RE.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME_RE.match(name))


def label_causes(labels: Any) -> list[dict[str, str]]:
    """Causes for invalid ``metadata.labels`` keys or values."""
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [
            errors.cause(
                "FieldValueTypeInvalid",
                "metadata.labels",
                "Invalid value: must be a map of strings",
            )
        ]
    causes = []
    for key, value in labels.items():
        if not _qualified_name_ok(key):
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    "metadata.labels",
                    f'Invalid value: "{key}": name part must consist of'
                    " alphanumeric characters, '-', '_' or '.', and must"
                    " start and end with an alphanumeric character",
                )
            )
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE_RE.match(value):
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    "metadata.labels",
                    f'Invalid value: "{value}": a valid label must be an empty'
                    " string or consist of alphanumeric characters, '-', '_'"
                    " or '.', and must start and end with an alphanumeric"
                    " character",
                )
            )
    return causes


def string_map_causes(value: Any, field: str) -> list[dict[str, str]]:
    if value is None:
        return []
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return []
    return [errors.cause("FieldValueTypeInvalid", field, "Invalid value: must be a map of strings")]
