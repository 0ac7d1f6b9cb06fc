"""How kube-apiserver lays out a JSON answer: its serializer writes the document and a
newline (Go's ``json.Encoder``), or indents it without one when the request asks for it
pretty (k8s.io/apiserver handlers/negotiation ``isPrettyPrint``: a ``pretty`` query
parameter that Go's ``strconv.ParseBool`` reads as true, or, without one, a User-Agent
starting with ``curl``, ``Wget`` or ``Mozilla/5.0``). Watch streams, ``/openapi`` documents
and ``/version`` are written by other code and keep their own layout.
"""

from __future__ import annotations

from urllib.parse import parse_qs

import orjson

from .queryoptions import PARSE_BOOL_TRUE

__all__ = ["prettified", "pretty_requested", "serialized"]

_PRETTY_AGENTS = ("curl", "Wget", "Mozilla/5.0")


def serialized(body: object) -> bytes:
    """``body`` as kube-apiserver's JSON serializer writes it: compact, then a newline."""
    return orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE)


def pretty_requested(raw_query: str, user_agent: str) -> bool:
    """Whether a request with this query string and User-Agent is answered indented
    (``isPrettyPrint``): a non-empty ``pretty`` parameter decides (a value ParseBool
    cannot read is false); without one, the User-Agent's prefix does."""
    if "pretty" in raw_query:
        values = parse_qs(raw_query, keep_blank_values=True).get("pretty", [""])
        if values[0]:
            return values[0] in PARSE_BOOL_TRUE
    return user_agent.startswith(_PRETTY_AGENTS)


def prettified(body: bytes) -> bytes:
    """A serialized JSON ``body`` indented by two spaces, as Go's ``json.MarshalIndent``
    (no trailing newline)."""
    return orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2)
