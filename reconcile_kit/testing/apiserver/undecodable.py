"""The 400 of a create or update whose JSON body kube-apiserver cannot read
(k8s.io/apiserver pkg/endpoints/handlers/rest.go transformDecodeError and summarizeData;
k8s.io/apimachinery pkg/runtime/serializer/json meta.go Interpret): "the object provided is
unrecognized (must be of type <Kind>): couldn't get version/kind; json parse error: <Go's
error> (<the body's start>)".
"""

from __future__ import annotations

from . import errors
from .errors import APIError
from .gojson import syntax_error, top_level_type_error

__all__ = ["TYPE_META", "Undecodable", "json_body_error", "summarize"]

TYPE_META = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)
"""The Go type the serializer first reads apiVersion and kind into."""


def summarize(raw: bytes, limit: int = 30) -> str:
    """summarizeData: an object's first ``limit`` bytes as text, anything else in hex."""
    if not raw:
        return "<empty>"
    part, more = raw[:limit], " ..." if len(raw) > limit else ""
    if raw[:1] == b"{":
        return part.decode("utf-8", "replace") + more
    return part.hex() + more


class Undecodable(APIError):
    """A body that does not parse; the message names the kind once the URL is resolved
    (:meth:`for_kind`)."""

    def __init__(self, reason: str, raw: bytes) -> None:
        super().__init__(400, "BadRequest", reason)
        self.raw = raw

    def for_kind(self, kind: str) -> APIError:
        return errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}):"
            f" {self.message} ({summarize(self.raw)})"
        )


def json_body_error(raw: bytes) -> Undecodable | None:
    """The error of a JSON create/update body that is not a JSON object (None: it is)."""
    problem = syntax_error(raw) or top_level_type_error(raw, TYPE_META)
    if problem is None:
        return None
    return Undecodable(f"couldn't get version/kind; json parse error: {problem}", raw)


def custom_type_meta_error(
    kind: str, api_version: str, body: object, raw: bytes
) -> APIError | None:
    """A custom resource's create/update body without kind (the unstructured decoder's
    MissingKindErr) or without apiVersion (the handler's version check); None when both
    are there."""
    if not isinstance(body, dict):
        return None
    if not body.get("kind"):
        text = raw.decode("utf-8", "replace")
        return errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}):"
            f" Object 'Kind' is missing in '{text}' ({summarize(raw)})"
        )
    if not body.get("apiVersion"):
        return errors.bad_request(
            "the API version in the data () does not match the expected API version"
            f" ({api_version})"
        )
    return None
