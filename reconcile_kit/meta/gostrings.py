"""Go's quoting of strings (``fmt``'s ``%q``, ``strconv.Quote``), for messages that must
read exactly as kube-apiserver's."""

from __future__ import annotations

__all__ = ["go_quote"]

_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def _go_escape_char(ch: str) -> str:
    if ch in _GO_ESCAPES:
        return _GO_ESCAPES[ch]
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x80:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def go_quote(text: str) -> str:
    """``text`` quoted like Go's ``%q`` / ``strconv.Quote``."""
    return '"' + "".join(_go_escape_char(ch) for ch in text) + '"'
