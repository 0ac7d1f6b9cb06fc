"""Object metadata rules: names, generated names, labels, uids.

The value rules and their messages are reconcile_kit.meta.validation's (apimachinery's
pkg/util/validation); generated names follow k8s.io/apiserver/pkg/storage/names.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from ...meta.validation import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    path_segment_errors,
    qualified_name_errors,
)
from . import errors

_NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "subdomain": dns1123_subdomain_errors,
    "path": path_segment_errors,
    "label": dns1123_label_errors,
    "dns1035": dns1035_label_errors,
}


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(prefix: str) -> str:
    """``prefix`` cut to 58 characters plus 5 random ones, as names.SimpleNameGenerator."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return prefix[:58] + "".join(random.choices(alphabet, k=5))


def name_causes(name: str, style: str) -> list[dict[str, str]]:
    """Causes for an invalid ``metadata.name``; ``style`` is subdomain, label, dns1035 or
    path."""
    rule = _NAME_RULES.get(style, dns1123_subdomain_errors)
    return _invalid_causes("metadata.name", name, rule(name))


def _mask_trailing_dash(name: str) -> str:
    """apimachinery api/validation maskTrailingDash: a prefix may end in "-" (its last two
    characters become "a")."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def generate_name_causes(prefix: Any, style: str) -> list[dict[str, str]]:
    """Causes for an invalid ``metadata.generateName`` (ValidateObjectMeta's nameFn with
    prefix=true), reported before the generated name's own."""
    if not isinstance(prefix, str) or not prefix:
        return []
    if style == "path":
        messages = [f"may not contain '{c}'" for c in ("/", "%") if c in prefix]
    else:
        messages = _NAME_RULES.get(style, dns1123_subdomain_errors)(_mask_trailing_dash(prefix))
    return _invalid_causes("metadata.generateName", prefix, messages)


def label_causes(labels: Any) -> list[dict[str, str]]:
    """Causes for invalid ``metadata.labels`` keys or values (ValidateLabels)."""
    type_causes = string_map_causes(labels, "metadata.labels")
    if labels is None or type_causes:
        return type_causes
    causes = []
    for key, value in labels.items():
        causes += _invalid_causes("metadata.labels", key, qualified_name_errors(key))
        causes += _invalid_causes("metadata.labels", value, label_value_errors(value))
    return causes


def _invalid_causes(field: str, value: str, messages: list[str]) -> list[dict[str, str]]:
    """One ``field.Invalid`` cause per message, as apimachinery's validators report them."""
    return [
        errors.cause("FieldValueInvalid", field, f'Invalid value: "{value}": {message}')
        for message in messages
    ]


def string_map_causes(value: Any, field: str) -> list[dict[str, str]]:
    if value is None:
        return []
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return []
    return [errors.cause("FieldValueTypeInvalid", field, "Invalid value: must be a map of strings")]


ANNOTATIONS_SIZE_LIMIT = 256 * 1024


def annotation_causes(annotations: Any, field: str) -> list[dict[str, str]]:
    """ValidateAnnotations: keys are qualified names (case aside), keys and values at most
    256 KiB together."""
    if not isinstance(annotations, dict):
        return []
    causes = []
    for key in annotations:
        causes += _invalid_causes(field, key, qualified_name_errors(str(key).lower()))
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > ANNOTATIONS_SIZE_LIMIT:
        detail = f"Too long: may not be more than {ANNOTATIONS_SIZE_LIMIT} bytes"
        causes.append(errors.cause("FieldValueTooLong", field, detail))
    return causes
