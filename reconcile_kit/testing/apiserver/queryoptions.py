"""The request options kube-apiserver validates before it reads or writes anything
(k8s.io/apimachinery pkg/apis/meta/v1/validation: ValidateCreateOptions,
ValidateUpdateOptions, ValidatePatchOptions, ValidateDeleteOptions; the ListOptions'
resourceVersionMatch; a resourceVersion that is no number).
"""

from __future__ import annotations

import re

from ...client.contenttypes import APPLY_PATCH
from . import errors
from .faults import RequestInfo
from .gofmt import go_quote

__all__ = ["PARSE_BOOL_TRUE", "check_list_options", "check_query", "go_int64", "int_option"]

PARSE_BOOL_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
"""The values Go's ``strconv.ParseBool`` reads as true (``force``, ``orphanDependents``,
``pretty``)."""

FIELD_MANAGER_MAX_LENGTH = 128
"""validation.FieldManagerMaxLength."""

FIELD_VALIDATION_VALUES = ("", "Ignore", "Strict", "Warn")
"""The fieldValidation directives kube-apiserver accepts ("" is Warn), in its order."""

_OPTIONS = {
    "POST": "CreateOptions",
    "PUT": "UpdateOptions",
    "PATCH": "PatchOptions",
    "DELETE": "DeleteOptions",
}

Causes = list[dict[str, str]]


def _field_manager(manager: str | None) -> Causes:
    """ValidateFieldManager: at most 128 bytes, printable characters only."""
    if manager is None:
        return []
    causes: Causes = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        message = f"Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
        causes.append(errors.cause("FieldValueTooLong", "fieldManager", message))
    position = 0
    for char in manager:
        if not char.isprintable():
            message = (
                f"Invalid value: {go_quote(manager)}: invalid character"
                f" U+{ord(char):04X} (at position {position})"
            )
            causes.append(errors.cause("FieldValueInvalid", "fieldManager", message))
        position += len(char.encode())
    return causes


def _patch_only(query: dict[str, str], content_type: str) -> Causes:
    """ValidatePatchOptions' own rules: apply needs a field manager, other patches no force."""
    if content_type == APPLY_PATCH:
        if not query.get("fieldManager"):
            message = "Required value: is required for apply patch"
            return [errors.cause("FieldValueRequired", "fieldManager", message)]
        return []
    if "force" in query:  # a *bool: any value sets it
        message = "Forbidden: may not be specified for non-apply patch"
        return [errors.cause("FieldValueForbidden", "force", message)]
    return []


def _dry_run(query: dict[str, str]) -> Causes:
    dry_run = query.get("dryRun")
    if dry_run is None or dry_run == "All":
        return []
    message = f'Unsupported value: []string{{"{dry_run}"}}: supported values: "All"'
    return [errors.cause("FieldValueNotSupported", "dryRun", message)]


def _field_validation(query: dict[str, str]) -> Causes:
    """ValidateFieldValidation: "" (Warn), Ignore, Strict or Warn."""
    directive = query.get("fieldValidation")
    if directive is None or directive in FIELD_VALIDATION_VALUES:
        return []
    supported = ", ".join(f'"{value}"' for value in FIELD_VALIDATION_VALUES)
    message = f"Unsupported value: {go_quote(directive)}: supported values: {supported}"
    return [errors.cause("FieldValueNotSupported", "fieldValidation", message)]


def _write_options(method: str, query: dict[str, str], content_type: str) -> None:
    causes: Causes = []
    if method == "PATCH":
        causes += _patch_only(query, content_type)
    if method != "DELETE":
        causes += _field_manager(query.get("fieldManager"))
    causes += _dry_run(query)
    if method != "DELETE":
        causes += _field_validation(query)
    if causes:
        raise errors.invalid(_OPTIONS[method], "meta.k8s.io", "", causes)


_INT64 = re.compile(r"[+-]?[0-9]+")


def go_int64(text: str) -> int:
    """A query parameter decoded into an int64 as apimachinery's
    ``Convert_Slice_string_To_int64`` does (strconv.ParseInt); 400 in its words."""
    if _INT64.fullmatch(text) is None:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value


def int_option(query: dict[str, str], name: str) -> int:
    """A ListOptions number (``timeoutSeconds``, ``limit``): 0 when absent."""
    text = query.get(name)
    return 0 if text is None else go_int64(text)


def check_list_options(query: dict[str, str]) -> None:
    """ValidateListOptions of a LIST (not a watch: :mod:`.watchoptions`): 422 with every
    cause, in its order."""
    causes: Causes = []
    match = query.get("resourceVersionMatch", "")
    version = query.get("resourceVersion", "")
    if match:
        if not version:
            causes.append(
                _forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided")
            )
        if query.get("continue"):
            causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            message = (
                f"Unsupported value: {go_quote(match)}: supported values:"
                ' "Exact", "NotOlderThan", ""'
            )
            causes.append(errors.cause("FieldValueNotSupported", "resourceVersionMatch", message))
        if match == "Exact" and version == "0":
            causes.append(
                _forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
            )
    if "sendInitialEvents" in query:
        message = "Forbidden: sendInitialEvents is forbidden for list"
        causes.append(errors.cause("FieldValueForbidden", "sendInitialEvents", message))
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def _forbidden(detail: str) -> dict[str, str]:
    return errors.cause("FieldValueForbidden", "resourceVersionMatch", f"Forbidden: {detail}")


def _list_options(info: RequestInfo, query: dict[str, str]) -> None:
    if info.verb in ("list", "watch"):  # decoded before anything is validated
        int_option(query, "timeoutSeconds")
        int_option(query, "limit")
    version = query.get("resourceVersion", "")
    if info.verb in ("get", "list", "watch") and version and not version.isdigit():
        raise errors.unknown(
            500,
            f'resourceVersion: Invalid value: "{version}": strconv.ParseUint: parsing'
            f' "{version}": invalid syntax',
        )


def check_query(info: RequestInfo, query: dict[str, str], method: str, content_type: str) -> None:
    """Raise kube-apiserver's answer to options it refuses (422, or 500 for a
    resourceVersion that is no number)."""
    if method in _OPTIONS:
        _write_options(method, query, content_type)
    _list_options(info, query)
