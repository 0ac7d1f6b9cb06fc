"""Applying PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with
evanphx/json-patch v4's rules: jsonpatchv4.py) and strategic merge patch (built-in kinds
only), with kube-apiserver's errors (k8s.io/apiserver pkg/endpoints/handlers/patch.go).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...client.contenttypes import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from ...patch.mergepatch import apply_merge_patch
from . import errors, jsonpatchv4
from .errors import APIError
from .gofmt import go_quote
from .resources import ResourceType
from .store import Obj
from .strategic import StrategicMergeError, apply_strategic_merge_patch
from .undecodable import TYPE_META

MAX_JSON_PATCH_OPS = 10_000
_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)


@dataclass(frozen=True)
class UndecodedPatch:
    """A JSON, merge or strategic merge PATCH body that is no JSON (or empty): Go's
    encoding/json error for it (``problem``). kube-apiserver reports it once the object
    is found (a missing object is a 404 first)."""

    problem: str


def is_decoded_patch_type(content_type: str) -> bool:
    """Whether kube-apiserver reads a PATCH body of ``content_type`` as JSON when it
    applies it (not while reading the request)."""
    return content_type in _PATCH_TYPES


def _go_kind(value: Any) -> str:
    """encoding/json's name for a JSON value in an UnmarshalTypeError."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def _type_error(value: Any, into: str) -> str:
    return f"json: cannot unmarshal {_go_kind(value)} into Go value of type {into}"


def _json_patch_op_error(ops: list[Any]) -> str | None:
    """kjson.UnmarshalStrict into []handlers.jsonPatchOp: the first type error."""
    for op in ops:
        if op is None:
            continue
        if not isinstance(op, dict):
            return _type_error(op, "handlers.jsonPatchOp")
        for key, value in op.items():
            if key in ("op", "path", "from") and value is not None and not isinstance(value, str):
                return (
                    f"json: cannot unmarshal {_go_kind(value)} into Go struct field"
                    f" jsonPatchOp.{key} of type string"
                )
    return None


_MAP = "map[string]interface {}"


def _check_json_patch(patch: Any, validation: str) -> None:
    """handlers/patch.go applyJSPatch: strict decoding into []jsonPatchOp (Warn, Strict),
    then jsonpatch.DecodePatch."""
    strict = validation != "Ignore"
    if isinstance(patch, UndecodedPatch):
        raise errors.bad_request(
            f"error decoding patch: {patch.problem}" if strict else patch.problem
        )
    if patch is None:
        return
    if strict:
        problem = (
            _json_patch_op_error(patch)
            if isinstance(patch, list)
            else _type_error(patch, "[]handlers.jsonPatchOp")
        )
        if problem is not None:
            raise errors.bad_request(f"error decoding patch: {problem}")
    if not isinstance(patch, list):
        raise errors.bad_request(_type_error(patch, "jsonpatch.Patch"))
    for op in patch:
        if op is not None and not isinstance(op, dict):
            raise errors.bad_request(_type_error(op, "jsonpatch.Operation"))


def _check_merge_patch(patch: Any, validation: str) -> None:
    """handlers/patch.go applyJSPatch: strict decoding into a map (Warn, Strict), then
    jsonpatch.MergePatch's ErrBadJSONPatch ("Invalid JSON Patch")."""
    if validation != "Ignore":
        if isinstance(patch, UndecodedPatch):
            raise errors.bad_request(f"error decoding patch: {patch.problem}")
        if patch is not None and not isinstance(patch, dict):
            raise errors.bad_request(f"error decoding patch: {_type_error(patch, _MAP)}")
    if not isinstance(patch, (dict, list)):
        raise errors.bad_request("Invalid JSON Patch")


def _pruned(value: Any) -> Any:
    """evanphx/json-patch pruneNulls: objects lose their null members (at any depth)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def _not_an_object(patched: list[Any]) -> APIError:
    """A merge patch that is an array (``fieldValidation=Ignore``): jsonpatch.MergePatch
    gives the array (objects in it without null members), which does not decode (422 on
    the patch)."""
    text = json.dumps(patched, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES.items():
        text = text.replace(char, escaped)
    why = f"couldn't get version/kind; json parse error: {_type_error(patched, TYPE_META)}"
    message = f"Invalid value: {go_quote(text)}: {why}"
    return APIError(
        422,
        "Invalid",
        f' "" is invalid: patch: {message}',
        {"causes": [errors.cause("FieldValueInvalid", "patch", message)]},
    )


def _check_strategic_patch(patch: Any) -> None:
    """handlers/patch.go strategicPatchObject: the patch decoded into a map."""
    if isinstance(patch, UndecodedPatch):
        raise errors.bad_request(patch.problem)
    if patch is not None and not isinstance(patch, dict):
        raise errors.bad_request(_type_error(patch, _MAP))


def accepted_patch_types(rt: ResourceType) -> list[str]:
    types = [JSON_PATCH, MERGE_PATCH]
    if rt.builtin:
        types.append(STRATEGIC_MERGE_PATCH)
    return [*types, APPLY_PATCH]


def _rejected(message: str) -> APIError:
    """kube-apiserver's answer to a JSON patch it cannot apply: no details (``message``,
    the library's wording, is not sent)."""
    del message
    return APIError(
        422, "Invalid", "the server rejected our request due to an error in our request", {}
    )


def _json_patch(current: Obj, ops: Any) -> Any:
    if ops is None:
        return current
    assert isinstance(ops, list)
    if len(ops) > MAX_JSON_PATCH_OPS:
        raise errors.too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS},"
            f" got {len(ops)}"
        )
    try:
        return jsonpatchv4.apply(current, ops)
    except jsonpatchv4.PatchFailed as exc:
        raise _rejected(str(exc)) from exc


def apply_patch(
    rt: ResourceType, current: Obj, content_type: str, patch: Any, validation: str = "Warn"
) -> Obj:
    """The object after applying ``patch`` of ``content_type`` (an :class:`UndecodedPatch`
    when the body was no JSON; ``validation`` the ``fieldValidation`` directive); raises
    APIError 400/415/422."""
    if content_type == JSON_PATCH:
        _check_json_patch(patch, validation)
        result = _json_patch(current, patch)
    elif content_type == MERGE_PATCH:
        _check_merge_patch(patch, validation)
        if isinstance(patch, list):
            raise _not_an_object(_pruned(patch))
        result = apply_merge_patch(current, patch)
    elif content_type == STRATEGIC_MERGE_PATCH and rt.builtin:
        _check_strategic_patch(patch)
        try:
            result = apply_strategic_merge_patch(current, patch or {}, rt.kind, rt.api_version)
        except StrategicMergeError as exc:
            if exc.code == 400:
                raise errors.bad_request(str(exc)) from exc
            raise _rejected(str(exc)) from exc
    else:
        raise errors.unsupported_media_type(content_type, accepted_patch_types(rt))
    if not isinstance(result, dict):
        raise errors.bad_request("the patch produced an object that is not a JSON object")
    return result
