"""The errors Go's encoding/json gives for a document it cannot read, as kube-apiserver
passes them on ("json parse error: ..."): the syntax errors of its scanner
(encoding/json scanner.go, ported state by state) and the type error of a document that is
no object where one is wanted.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["syntax_error", "top_level_type_error"]

_SPACE = b" \t\r\n"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"


class _SyntaxError(Exception):
    pass


def _quote_char(c: int) -> str:
    """scanner.go quoteChar: the byte as a quoted character (strconv.Quote of the rune)."""
    from .gofmt import go_quote

    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(c))[1:-1] + "'"


State = Callable[[int], None]

_OBJECT_KEY, _OBJECT_VALUE, _ARRAY_VALUE = 0, 1, 2


class _Scanner:
    """scanner.go's scanner: ``step`` is the state for the next byte."""

    def __init__(self) -> None:
        self.parse_state: list[int] = []
        self.end_top = False
        self.step: State = self.begin_value

    def error(self, c: int, context: str) -> None:
        raise _SyntaxError(f"invalid character {_quote_char(c)} {context}")

    def begin_value_or_empty(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("]"):
            self.end_value(c)
            return
        self.begin_value(c)

    def begin_value(self, c: int) -> None:
        if c in _SPACE:
            return
        starts: dict[int, State] = {
            ord('"'): self.in_string,
            ord("-"): self.neg,
            ord("0"): self.zero,
            ord("t"): self.literal("true", 1),
            ord("f"): self.literal("false", 1),
            ord("n"): self.literal("null", 1),
        }
        if c == ord("{"):
            self.step = self.begin_string_or_empty
            self.parse_state.append(_OBJECT_KEY)
        elif c == ord("["):
            self.step = self.begin_value_or_empty
            self.parse_state.append(_ARRAY_VALUE)
        elif c in starts:
            self.step = starts[c]
        elif ord("1") <= c <= ord("9"):
            self.step = self.one
        else:
            self.error(c, "looking for beginning of value")

    def begin_string_or_empty(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("}"):
            self.parse_state[-1] = _OBJECT_VALUE
            self.end_value(c)
            return
        self.begin_string(c)

    def begin_string(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord('"'):
            self.step = self.in_string
            return
        self.error(c, "looking for beginning of object key string")

    def pop(self) -> None:
        self.parse_state.pop()
        if not self.parse_state:
            self.step, self.end_top = self.end_of_top, True
        else:
            self.step = self.end_value

    def end_value(self, c: int) -> None:
        if not self.parse_state:
            self.step, self.end_top = self.end_of_top, True
            self.end_of_top(c)
            return
        if c in _SPACE:
            self.step = self.end_value
            return
        state = self.parse_state[-1]
        if state == _OBJECT_KEY:
            if c == ord(":"):
                self.parse_state[-1] = _OBJECT_VALUE
                self.step = self.begin_value
                return
            self.error(c, "after object key")
        elif state == _OBJECT_VALUE:
            if c == ord(","):
                self.parse_state[-1] = _OBJECT_KEY
                self.step = self.begin_string
                return
            if c == ord("}"):
                self.pop()
                return
            self.error(c, "after object key:value pair")
        else:
            if c == ord(","):
                self.step = self.begin_value
                return
            if c == ord("]"):
                self.pop()
                return
            self.error(c, "after array element")

    def end_of_top(self, c: int) -> None:
        if c not in _SPACE:
            self.error(c, "after top-level value")

    def in_string(self, c: int) -> None:
        if c == ord('"'):
            self.step = self.end_value
        elif c == ord("\\"):
            self.step = self.in_string_escape
        elif c < 0x20:
            self.error(c, "in string literal")

    def in_string_escape(self, c: int) -> None:
        if c in b'bfnrt\\/"':
            self.step = self.in_string
        elif c == ord("u"):
            self.step = self.unicode_escape(4)
        else:
            self.error(c, "in string escape code")

    def unicode_escape(self, left: int) -> State:
        def state(c: int) -> None:
            if c not in _HEX:
                self.error(c, "in \\u hexadecimal character escape")
            self.step = self.in_string if left == 1 else self.unicode_escape(left - 1)

        return state

    def neg(self, c: int) -> None:
        if c == ord("0"):
            self.step = self.zero
        elif ord("1") <= c <= ord("9"):
            self.step = self.one
        else:
            self.error(c, "in numeric literal")

    def one(self, c: int) -> None:
        if c in _DIGITS:
            return
        self.zero(c)

    def zero(self, c: int) -> None:
        if c == ord("."):
            self.step = self.dot
        elif c in b"eE":
            self.step = self.exponent
        else:
            self.end_value(c)

    def dot(self, c: int) -> None:
        if c in _DIGITS:
            self.step = self.dot_digits
            return
        self.error(c, "after decimal point in numeric literal")

    def dot_digits(self, c: int) -> None:
        if c in _DIGITS:
            return
        if c in b"eE":
            self.step = self.exponent
            return
        self.end_value(c)

    def exponent(self, c: int) -> None:
        if c in b"+-":
            self.step = self.exponent_sign
            return
        self.exponent_sign(c)

    def exponent_sign(self, c: int) -> None:
        if c in _DIGITS:
            self.step = self.exponent_digits
            return
        self.error(c, "in exponent of numeric literal")

    def exponent_digits(self, c: int) -> None:
        if c in _DIGITS:
            return
        self.end_value(c)

    def literal(self, word: str, index: int) -> State:
        def state(c: int) -> None:
            if c != ord(word[index]):
                self.error(c, f"in literal {word} (expecting {_quote_char(ord(word[index]))})")
            self.step = self.end_value if index + 1 == len(word) else self.literal(word, index + 1)

        return state


def syntax_error(data: bytes) -> str | None:
    """encoding/json checkValid: the SyntaxError's text for ``data``, None when valid."""
    scanner = _Scanner()
    try:
        for c in data:
            scanner.step(c)
        if not scanner.end_top:
            scanner.step(ord(" "))
    except _SyntaxError as error:
        return str(error)
    return None if scanner.end_top else "unexpected end of JSON input"


_GO_KINDS = {"[": "array", '"': "string", "t": "bool", "f": "bool"}


def top_level_type_error(data: bytes, into: str) -> str | None:
    """The UnmarshalTypeError of a valid document that is no object, decoded into Go type
    ``into`` (None: an object, or null)."""
    first = data.lstrip(_SPACE)[:1].decode("latin-1")
    if first in ("{", "n", ""):
        return None
    kind = _GO_KINDS.get(first, "number")
    return f"json: cannot unmarshal {kind} into Go value of type {into}"
