"""Kubernetes label selectors and field selectors, parsed and matched as kube-apiserver does.

Semantics (grammar, matching rules, validation and error messages) follow
k8s.io/apimachinery ``pkg/labels/selector.go``, ``pkg/fields/selector.go`` and
``pkg/apis/meta/v1/helpers.go`` (``LabelSelectorAsSelector``). The parser here is an
independent implementation; error strings reproduce the Go ones because clients compare
them against what a real API server answers in a ``400 BadRequest`` Status.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .gostrings import go_quote
from .validation import label_value_errors, qualified_name_errors

__all__ = [
    "FieldSelector",
    "LabelSelector",
    "SelectorError",
    "label_selector_from_dict",
    "label_selector_to_string",
]


class SelectorError(ValueError):
    """Raised for a selector that does not parse.

    ``str(err)`` is the message kube-apiserver would put in its 400 BadRequest Status.
    """


# --------------------------------------------------------------------------------------
# Go formatting helpers (fmt %q, %#v of []string, field.Error, aggregate errors)
# --------------------------------------------------------------------------------------


def _go_string_slice(values: Sequence[str] | None) -> str:
    """``values`` formatted like Go's ``%#v`` of a ``[]string``."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _invalid(path: str, bad_value: str, detail: str) -> str:
    """The text of a ``field.Invalid`` error; ``bad_value`` is already Go-formatted."""
    return f"{path}: Invalid value: {bad_value}: {detail}"


def _aggregate(messages: Sequence[str]) -> str:
    """The text of a ``utilerrors.Aggregate``: duplicates dropped, several in brackets."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


# --------------------------------------------------------------------------------------
# Keys and values (the rules are in .validation)
# --------------------------------------------------------------------------------------


def _key_error(key: str, path: str) -> str | None:
    errs = qualified_name_errors(key)
    return _invalid(path, go_quote(key), "; ".join(errs)) if errs else None


_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_INT_RE = re.compile("[+-]?[0-9]+")


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: the integer, or None where Go returns an error."""
    if not _INT_RE.fullmatch(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


# --------------------------------------------------------------------------------------
# Label requirements
# --------------------------------------------------------------------------------------


class _Op(enum.Enum):
    """``selection.Operator`` values, spelled as apimachinery spells them."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = "gt"
    LESS_THAN = "lt"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


_BINARY_OPS = ", ".join(
    op.value
    for op in (
        _Op.IN,
        _Op.NOT_IN,
        _Op.EQUALS,
        _Op.DOUBLE_EQUALS,
        _Op.NOT_EQUALS,
        _Op.GREATER_THAN,
        _Op.LESS_THAN,
    )
)
_SET_OPS = frozenset({_Op.IN, _Op.NOT_IN})
_EXACT_OPS = frozenset({_Op.EQUALS, _Op.DOUBLE_EQUALS, _Op.NOT_EQUALS})
_UNARY_OPS = frozenset({_Op.EXISTS, _Op.DOES_NOT_EXIST})
_COMPARE_OPS = frozenset({_Op.GREATER_THAN, _Op.LESS_THAN})
_OP_SPELLING = {
    _Op.EQUALS: "=",
    _Op.DOUBLE_EQUALS: "==",
    _Op.NOT_EQUALS: "!=",
    _Op.IN: " in ",
    _Op.NOT_IN: " notin ",
    _Op.GREATER_THAN: ">",
    _Op.LESS_THAN: "<",
}


@dataclass(frozen=True)
class _Requirement:
    """One ``labels.Requirement``: a key, an operator and its values."""

    key: str
    op: _Op
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op is _Op.EXISTS:
            return self.key in labels
        if self.op is _Op.DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels:
            # notin and != select objects lacking the key; everything else needs it.
            return self.op in (_Op.NOT_IN, _Op.NOT_EQUALS)
        value = labels[self.key]
        if self.op in _COMPARE_OPS:
            return self._compare(value)
        found = value in self.values
        return not found if self.op in (_Op.NOT_IN, _Op.NOT_EQUALS) else found

    def _compare(self, value: str) -> bool:
        have = _parse_int64(value)
        if have is None or len(self.values) != 1:
            return False
        want = _parse_int64(self.values[0])
        if want is None:
            return False
        return have > want if self.op is _Op.GREATER_THAN else have < want

    def __str__(self) -> str:
        if self.op is _Op.DOES_NOT_EXIST:
            return "!" + self.key
        if self.op is _Op.EXISTS:
            return self.key
        joined = ",".join(sorted(self.values))
        if self.op in _SET_OPS:
            joined = f"({joined})"
        return self.key + _OP_SPELLING[self.op] + joined


def _operator_errors(op: _Op, values: Sequence[str] | None) -> list[str]:
    vals = list(values or ())
    shown = _go_string_slice(values)
    if op in _SET_OPS and not vals:
        detail = "for 'in', 'notin' operators, values set can't be empty"
        return [_invalid("values", shown, detail)]
    if op in _EXACT_OPS and len(vals) != 1:
        return [_invalid("values", shown, "exact-match compatibility requires one single value")]
    if op in _UNARY_OPS and vals:
        detail = "values set must be empty for exists and does not exist"
        return [_invalid("values", shown, detail)]
    if op not in _COMPARE_OPS:
        return []
    errs: list[str] = []
    if len(vals) != 1:
        detail = "for 'Gt', 'Lt' operators, exactly one value is required"
        errs.append(_invalid("values", shown, detail))
    detail = "for 'Gt', 'Lt' operators, the value must be an integer"
    errs.extend(
        _invalid(f"values[{i}]", go_quote(v), detail)
        for i, v in enumerate(vals)
        if _parse_int64(v) is None
    )
    return errs


def _new_requirement(key: str, op: _Op, values: Sequence[str] | None) -> _Requirement:
    """``labels.NewRequirement``: validate and build, or raise :class:`SelectorError`.

    ``values`` None stands for a Go nil slice (only visible in error messages).
    """
    errs: list[str] = []
    key_err = _key_error(key, "key")
    if key_err is not None:
        errs.append(key_err)
    errs.extend(_operator_errors(op, values))
    for i, value in enumerate(values or ()):
        value_errs = label_value_errors(value)
        if value_errs:
            errs.append(_invalid(f"values[{i}][{key}]", go_quote(value), "; ".join(value_errs)))
    if errs:
        raise SelectorError(_aggregate(errs))
    return _Requirement(key, op, tuple(sorted(values or ())))


# --------------------------------------------------------------------------------------
# Label selector lexer
# --------------------------------------------------------------------------------------


# The lexer's token kinds (k8s.io/apimachinery pkg/labels Token).
_Tok = enum.Enum(
    "_Tok",
    "END CLOSE_PAREN COMMA BANG DOUBLE_EQUALS EQUALS GREATER IDENT IN LESS NOT_EQUALS NOT_IN"
    " OPEN_PAREN",
)


_SYMBOLS = {
    ")": _Tok.CLOSE_PAREN,
    ",": _Tok.COMMA,
    "!": _Tok.BANG,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER,
    "<": _Tok.LESS,
    "!=": _Tok.NOT_EQUALS,
    "(": _Tok.OPEN_PAREN,
}
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOT_IN}
_SPECIAL_CHARS = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
# The Go lexer reads a NUL byte as "no more input"; kept for fidelity.
_NUL = "\0"


@dataclass(frozen=True)
class _Item:
    tok: _Tok
    text: str


class _Lexer:
    """Splits a label selector into tokens the way apimachinery's ``Lexer`` does."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0

    def tokens(self) -> list[_Item]:
        items: list[_Item] = []
        while True:
            item = self._next()
            items.append(item)
            if item.tok is _Tok.END:
                return items

    def _peek(self) -> str:
        return self._text[self._pos] if self._pos < len(self._text) else ""

    def _next(self) -> _Item:
        while self._peek() in _WHITESPACE:
            self._pos += 1
        ch = self._peek()
        if ch in ("", _NUL):
            return _Item(_Tok.END, "")
        if ch in _SPECIAL_CHARS:
            return self._symbol()
        return self._word()

    def _symbol(self) -> _Item:
        text = self._text[self._pos]
        self._pos += 1
        if text + self._peek() in _SYMBOLS:
            text += self._peek()
            self._pos += 1
        if self._peek() == _NUL:
            self._pos += 1
        return _Item(_SYMBOLS[text], text)

    def _word(self) -> _Item:
        start = self._pos
        while (ch := self._peek()) and ch not in _SPECIAL_CHARS and ch not in _WHITESPACE:
            if ch == _NUL:
                break
            self._pos += 1
        word = self._text[start : self._pos]
        if self._peek() == _NUL:
            self._pos += 1
        return _Item(_KEYWORDS.get(word, _Tok.IDENT), word)


# --------------------------------------------------------------------------------------
# Label selector parser
# --------------------------------------------------------------------------------------

_COMPARISON_TOKENS = {
    _Tok.IN: _Op.IN,
    _Tok.NOT_IN: _Op.NOT_IN,
    _Tok.EQUALS: _Op.EQUALS,
    _Tok.DOUBLE_EQUALS: _Op.DOUBLE_EQUALS,
    _Tok.NOT_EQUALS: _Op.NOT_EQUALS,
    _Tok.GREATER: _Op.GREATER_THAN,
    _Tok.LESS: _Op.LESS_THAN,
}
_REQUIREMENT_START = frozenset({_Tok.IDENT, _Tok.BANG})


class _Parser:
    """Recursive-descent parser for the label selector grammar.

    ``in`` and ``notin`` are keywords only where an operator is expected; anywhere else
    (keys, values) they are plain identifiers, as in apimachinery.
    """

    def __init__(self, text: str) -> None:
        self._items = _Lexer(text).tokens()
        self._pos = 0

    def _peek(self, operator: bool = False) -> _Item:
        item = self._items[min(self._pos, len(self._items) - 1)]
        if not operator and item.tok in (_Tok.IN, _Tok.NOT_IN):
            return _Item(_Tok.IDENT, item.text)
        return item

    def _take(self, operator: bool = False) -> _Item:
        item = self._peek(operator)
        self._pos += 1
        return item

    def parse(self) -> list[_Requirement]:
        requirements: list[_Requirement] = []
        item = self._peek()
        if item.tok is _Tok.END:
            return requirements
        if item.tok not in _REQUIREMENT_START:
            raise SelectorError(f"found '{item.text}', expected: !, identifier, or 'end of string'")
        while True:
            try:
                requirements.append(self._requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            item = self._take()
            if item.tok is _Tok.END:
                return requirements
            if item.tok is not _Tok.COMMA:
                raise SelectorError(f"found '{item.text}', expected: ',' or 'end of string'")
            item = self._peek()
            if item.tok not in _REQUIREMENT_START:
                raise SelectorError(f"found '{item.text}', expected: identifier after ','")

    def _requirement(self) -> _Requirement:
        key, unary = self._key()
        if unary is not None:
            return _new_requirement(key, unary, [])
        op = self._operator()
        values = self._value_set() if op in _SET_OPS else self._exact_value()
        return _new_requirement(key, op, sorted(values))

    def _key(self) -> tuple[str, _Op | None]:
        """The key, and the operator if it is unary (``!key``, or a bare ``key``)."""
        item = self._take()
        negated = item.tok is _Tok.BANG
        if negated:
            item = self._take()
        if item.tok is not _Tok.IDENT:
            raise SelectorError(f"found '{item.text}', expected: identifier")
        key_err = _key_error(item.text, "<nil>")
        if key_err is not None:
            raise SelectorError(key_err)
        if negated:
            return item.text, _Op.DOES_NOT_EXIST
        ends = self._peek().tok in (_Tok.END, _Tok.COMMA)
        return item.text, _Op.EXISTS if ends else None

    def _operator(self) -> _Op:
        item = self._take(operator=True)
        op = _COMPARISON_TOKENS.get(item.tok)
        if op is None:
            raise SelectorError(f"found '{item.text}', expected: {_BINARY_OPS}")
        return op

    def _exact_value(self) -> set[str]:
        if self._peek().tok in (_Tok.END, _Tok.COMMA):
            return {""}
        item = self._take()
        if item.tok is not _Tok.IDENT:
            raise SelectorError(f"found '{item.text}', expected: identifier")
        return {item.text}

    def _value_set(self) -> set[str]:
        item = self._take()
        if item.tok is not _Tok.OPEN_PAREN:
            raise SelectorError(f"found '{item.text}' expected: '('")
        item = self._peek()
        if item.tok is _Tok.CLOSE_PAREN:
            self._take()
            return {""}
        if item.tok not in (_Tok.IDENT, _Tok.COMMA):
            raise SelectorError(f"found '{item.text}', expected: ',', ')' or identifier")
        values = self._value_list()
        self._take()  # the ')' that _value_list stopped at
        return values

    def _value_list(self) -> set[str]:
        """Comma-separated, possibly empty, values up to (not including) ``)``."""
        values: set[str] = set()
        while True:
            item = self._take()
            if item.tok is _Tok.IDENT:
                values.add(item.text)
                after = self._peek()
                if after.tok is _Tok.CLOSE_PAREN:
                    return values
                if after.tok is not _Tok.COMMA:
                    raise SelectorError(f"found '{after.text}', expected: ',' or ')'")
            elif item.tok is _Tok.COMMA:
                # A comma with nothing on one side of it stands for an empty value.
                if not values or self._peek().tok in (_Tok.CLOSE_PAREN, _Tok.COMMA):
                    values.add("")
                if self._peek().tok is _Tok.CLOSE_PAREN:
                    return values
                if self._peek().tok is _Tok.COMMA:
                    self._take()
            else:
                raise SelectorError(f"found '{item.text}', expected: ',', or identifier")


# --------------------------------------------------------------------------------------
# Label selectors
# --------------------------------------------------------------------------------------


class _Conjunction:
    """What label and field selectors share: an AND of terms, canonical as text, equal
    and hashed by their terms."""

    __slots__ = ("_terms",)
    _terms: tuple[Any, ...]

    def empty(self) -> bool:
        """True if the selector has no terms (it selects everything)."""
        return not self._terms

    def __str__(self) -> str:
        return ",".join(str(term) for term in self._terms)

    def __repr__(self) -> str:
        return f"{type(self).__name__}.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._terms == other._terms

    def __hash__(self) -> int:
        return hash(self._terms)


class LabelSelector(_Conjunction):
    """A parsed label selector: an AND of requirements on an object's labels.

    Build one with :meth:`parse` (the ``?labelSelector=`` string syntax) or
    :func:`label_selector_from_dict` (a ``metav1.LabelSelector``). ``LabelSelector()``
    with no requirements matches everything. Semantics follow k8s.io/apimachinery
    ``pkg/labels``; ``str(selector)`` is the canonical form ``Selector.String()`` gives
    (requirements sorted by key, set values sorted).
    """

    __slots__ = ()
    _terms: tuple[_Requirement, ...]

    def __init__(self, requirements: Iterable[_Requirement] = ()) -> None:
        self._terms = tuple(sorted(requirements, key=lambda r: r.key))

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse a label selector string, as ``labels.Parse`` does.

        Args:
            text: e.g. ``"app=web,tier in (a,b),!canary,env!=prod,gen>3"``. An empty or
                all-whitespace string gives a selector that matches everything.

        Returns:
            The selector.

        Raises:
            SelectorError: the text does not parse, or a key or value is not a valid label
                key / label value; the message is the one kube-apiserver answers with.
        """
        return cls(_Parser(text).parse())

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether ``labels`` (an object's ``metadata.labels``; None = no labels) match.

        ``!=`` and ``notin`` match objects lacking the key; ``>``/``<`` never match a
        missing or non-integer label value.
        """
        present: Mapping[str, str] = labels or {}
        return all(r.matches(present) for r in self._terms)


_DICT_OPERATORS = {
    "In": _Op.IN,
    "NotIn": _Op.NOT_IN,
    "Exists": _Op.EXISTS,
    "DoesNotExist": _Op.DOES_NOT_EXIST,
}


def _as_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SelectorError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _as_string_list(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SelectorError(f"{where}: expected a list of strings")
    return list(value)


def _match_label_requirements(match_labels: Mapping[str, Any]) -> list[_Requirement]:
    requirements = []
    for key in sorted(match_labels):
        value = match_labels[key]
        if not isinstance(key, str) or not isinstance(value, str):
            raise SelectorError(f"matchLabels: {key!r}: keys and values must be strings")
        requirements.append(_new_requirement(key, _Op.EQUALS, [value]))
    return requirements


def _expression_requirement(expr: Any, index: int) -> _Requirement:
    where = f"matchExpressions[{index}]"
    fields = _as_mapping(expr, where)
    key = fields.get("key", "")
    operator = fields.get("operator", "")
    if not isinstance(key, str) or not isinstance(operator, str):
        raise SelectorError(f"{where}: key and operator must be strings")
    op = _DICT_OPERATORS.get(operator)
    if op is None:
        raise SelectorError(f"{go_quote(operator)} is not a valid label selector operator")
    values = _as_string_list(fields.get("values"), f"{where}.values")
    return _new_requirement(key, op, values)


def label_selector_from_dict(selector: Mapping[str, Any]) -> LabelSelector:
    """Convert a ``metav1.LabelSelector`` dict, as ``metav1.LabelSelectorAsSelector`` does.

    Args:
        selector: ``{"matchLabels": {key: value}, "matchExpressions": [{"key": ...,
            "operator": "In" | "NotIn" | "Exists" | "DoesNotExist", "values": [...]}]}``;
            both parts optional. ``{}`` gives a selector that matches everything.

    Returns:
        The selector (requirements ANDed).

    Raises:
        SelectorError: an invalid key or value, an unknown operator, values given to
            Exists/DoesNotExist or missing for In/NotIn (apimachinery's messages), or a
            part of the wrong JSON type.
    """
    match_labels = _as_mapping(selector.get("matchLabels"), "matchLabels")
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise SelectorError("matchExpressions: expected a list")
    requirements = _match_label_requirements(match_labels)
    requirements.extend(_expression_requirement(e, i) for i, e in enumerate(expressions))
    return LabelSelector(requirements)


def label_selector_to_string(selector: Mapping[str, Any]) -> str:
    """Render a ``metav1.LabelSelector`` dict as a label selector string.

    This is ``LabelSelectorAsSelector(s).String()``, the form kube-apiserver puts in
    ``status.selector`` of a ``/scale`` subresource; the result parses back with
    :meth:`LabelSelector.parse`. It matches ``metav1.FormatLabelSelector`` except that an
    empty selector gives ``""`` (not ``"<none>"``) and an invalid one raises (rather than
    giving ``"<error>"``).

    Args:
        selector: a ``metav1.LabelSelector`` dict, see :func:`label_selector_from_dict`.

    Returns:
        E.g. ``"app=web,tier in (a,b)"``; requirements sorted by key.

    Raises:
        SelectorError: as :func:`label_selector_from_dict`.
    """
    return str(label_selector_from_dict(selector))


# --------------------------------------------------------------------------------------
# Field selectors
# --------------------------------------------------------------------------------------


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash; escapes are kept in the terms."""
    if not text:
        return []
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


_FIELD_OPERATORS = ("!=", "==", "=")


def _split_term(term: str) -> tuple[str, str, str] | None:
    """``(field, operator, raw value)`` split at the first operator, or None."""
    for i in range(len(term)):
        for op in _FIELD_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape_value(raw: str) -> str:
    r"""Undo ``fields.EscapeValue`` (``\\``, ``\,``, ``\=``), as ``fields.UnescapeValue``."""
    out: list[str] = []
    escaped = False
    for ch in raw:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            # Go formats the offending rune with %v, i.e. as its code point number.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _escape_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@dataclass(frozen=True)
class _FieldTerm:
    """``field=value`` (``negated`` False) or ``field!=value``."""

    field: str
    value: str
    negated: bool

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (_field_value(obj, self.field) == self.value) != self.negated

    def __str__(self) -> str:
        op = "!=" if self.negated else "="
        return f"{self.field}{op}{_escape_value(self.value)}"


def _scalar_text(value: Any) -> str:
    """A field's value as the string the API server's field set would hold."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return ""


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    """The value at dotted ``path`` in ``obj`` as text; "" when absent or not a scalar."""
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return ""
        current = current[part]
    return _scalar_text(current)


class FieldSelector(_Conjunction):
    """A parsed field selector: an AND of ``field=value`` / ``field!=value`` terms.

    Semantics follow k8s.io/apimachinery ``pkg/fields``. Which fields a resource supports
    is the caller's business (see :meth:`fields`); :meth:`matches` looks dotted paths up
    in a raw object, a missing field reading as ``""``.
    """

    __slots__ = ()
    _terms: tuple[_FieldTerm, ...]

    def __init__(self, terms: Iterable[_FieldTerm] = ()) -> None:
        self._terms = tuple(terms)

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        r"""Parse a field selector string, as ``fields.ParseSelector`` does.

        Args:
            text: comma-separated ``path=value``, ``path==value`` or ``path!=value``
                terms, e.g. ``"metadata.name=web,status.phase!=Running"``. In values,
                ``\,``, ``\=`` and ``\\`` stand for ``,``, ``=`` and ``\``. No whitespace is
                trimmed. ``""`` gives a selector that matches everything.

        Returns:
            The selector.

        Raises:
            SelectorError: a term without an operator, a bad escape, or an unescaped ``,``
                or ``=`` in a value; the message is the one kube-apiserver answers with.
        """
        terms: list[_FieldTerm] = []
        for part in sorted(_split_terms(text)):
            if not part:
                continue
            split = _split_term(part)
            if split is None:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
            field, op, raw = split
            terms.append(_FieldTerm(field, _unescape_value(raw), op == "!="))
        return cls(terms)

    def fields(self) -> frozenset[str]:
        """The field paths the selector refers to, e.g. ``{"metadata.name"}``."""
        return frozenset(term.field for term in self._terms)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether the raw Kubernetes object dict ``obj`` satisfies every term.

        Booleans compare as ``"true"``/``"false"`` and integers as decimal text; missing
        fields, nulls, lists and objects compare as ``""``.
        """
        return all(term.matches(obj) for term in self._terms)

    def matches_set(self, fields: Mapping[str, str]) -> bool:
        """Whether a field set (field path to text, as an API server's registry computes
        it) satisfies every term; a field missing from ``fields`` reads as ``""``."""
        return all((fields.get(t.field, "") == t.value) != t.negated for t in self._terms)
