"""Applying PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, through the
jsonpatch library) and strategic merge patch (built-in kinds only), with
kube-apiserver's errors (k8s.io/apiserver pkg/endpoints/handlers/patch.go).
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from ...client.contenttypes import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from ...patch.mergepatch import apply_merge_patch
from . import errors
from .errors import APIError
from .resources import ResourceType
from .store import Obj
from .strategic import StrategicMergeError, apply_strategic_merge_patch

MAX_JSON_PATCH_OPS = 10_000


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


def _replace_as_add(doc: Any, op: Any) -> Any:
    """evanphx/json-patch (kube-apiserver's) lets ``replace`` set a missing object member."""
    if not isinstance(op, dict) or op.get("op") != "replace":
        return op
    try:
        parent, key = jsonpointer.JsonPointer(str(op.get("path", ""))).to_last(doc)
    except jsonpointer.JsonPointerException:
        return op
    if isinstance(parent, dict) and key not in parent:
        return {**op, "op": "add"}
    return op


def _json_patch(current: Obj, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise errors.bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    if len(ops) > MAX_JSON_PATCH_OPS:
        raise errors.too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS},"
            f" got {len(ops)}"
        )
    try:
        result = current
        for op in ops:
            result = jsonpatch.JsonPatch([_replace_as_add(result, op)]).apply(result)
        return result
    except jsonpatch.JsonPatchTestFailed as exc:
        raise _rejected(f"testing value failed: {exc}") from exc
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise _rejected(str(exc)) from exc
    except (TypeError, KeyError, IndexError, AttributeError) as exc:
        raise errors.bad_request(f"invalid JSON patch: {exc}") from exc


def apply_patch(rt: ResourceType, current: Obj, content_type: str, patch: Any) -> Obj:
    """The object after applying ``patch`` of ``content_type``; raises APIError 400/415/422."""
    if content_type == JSON_PATCH:
        result = _json_patch(current, patch)
    elif content_type == MERGE_PATCH:
        if not isinstance(patch, dict):
            raise errors.bad_request("the merge patch must be a JSON object")
        result = apply_merge_patch(current, patch)
    elif content_type == STRATEGIC_MERGE_PATCH and rt.builtin:
        if not isinstance(patch, dict):
            raise errors.bad_request("the strategic merge patch must be a JSON object")
        try:
            result = apply_strategic_merge_patch(current, patch, rt.kind, rt.api_version)
        except StrategicMergeError as exc:
            if exc.code == 400:
                raise errors.bad_request(str(exc)) from exc
            raise _rejected(str(exc)) from exc
    else:
        raise errors.unsupported_media_type(content_type, accepted_patch_types(rt))
    if not isinstance(result, dict):
        raise errors.bad_request("the patch produced an object that is not a JSON object")
    return result
