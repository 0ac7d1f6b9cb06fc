"""Resource quantities as kube-apiserver stores them (k8s.io/apimachinery
pkg/api/resource/quantity.go: ParseQuantity, CanonicalizeBytes): ``cpu: 1000m`` is stored
as ``"1"``, ``memory: 1.5Gi`` as ``"1536Mi"``, ``0.5`` as ``"500m"``, ``1000`` as ``"1k"``.
A string ParseQuantity's fast path finds canonical is kept as written (``"+5"``,
``"5."``, ``"100Mi"``), and the values of a ResourceList (requests, limits, capacity...)
are rounded up to milli units as core/v1's ``SetDefaults_ResourceList`` does (``1n`` is
stored as ``1m``).

Every Quantity field of the built-in kinds (the Go types' ``resource.Quantity``, from
kubetypes) is treated so when an object is written; custom resources are untouched (their
schema says int-or-string, not Quantity).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from .gotime import canonical_time
from .kubetypes import KINDS, MESSAGES

__all__ = ["QuantityError", "canonical", "canonicalize_object"]

FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_NUMBER = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_SUFFIX = {exp: suffix for suffix, exp in _BINARY.items()}
_MAX = Fraction(2**63 - 1)
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    """Not a quantity; the message is apimachinery's."""


def canonical(value: Any, resource_list: bool = False) -> str:
    """The string kube-apiserver stores for a quantity given as a string or a JSON number
    (``resource_list``: a ResourceList value, rounded up to milli units); raises
    QuantityError with apimachinery's message."""
    text = value if isinstance(value, str) else _number_text(value)
    amount, form, kept, scale = _parse(text)
    if resource_list and (scale is None or scale < -3):
        rounded = _round_up(amount, Fraction(1, 1000))
        if scale is not None or rounded != amount:
            kept = None
        amount = rounded
    return kept if kept is not None else _format(amount, form)


def amount(value: Any) -> Fraction:
    """The number a quantity (string or JSON number) stands for; raises QuantityError."""
    return _parse(value if isinstance(value, str) else _number_text(value))[0]


def _number_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuantityError(FORMAT_ERROR)
    return repr(value) if isinstance(value, float) else str(value)


def _parse(text: str) -> tuple[Fraction, str, str | None, int | None]:
    """(value, format, the string kept as written or None, the fast path's decimal scale
    or None for the exact path); format ``BinarySI``, ``DecimalSI`` or
    ``DecimalExponent``."""
    if not text:
        raise QuantityError(FORMAT_ERROR)
    match = _NUMBER.match(text)
    assert match is not None  # every part is optional
    sign, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
    if not whole and not fraction:
        raise QuantityError(FORMAT_ERROR)
    suffix = text[match.end() :]
    if not re.fullmatch(r"[eEinumkKMGTP]*[-+]?[0-9]*", suffix):
        raise QuantityError(FORMAT_ERROR)
    number = Fraction(int(whole or "0")) + (
        Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0
    )
    amount, form, exponent = _apply_suffix(number, suffix)
    fast = _fast_path(whole.lstrip("0") or "0", fraction, form, exponent, text)
    if fast is not None:
        kept, scale = fast
        return (-amount if sign == "-" else amount), form, kept, scale
    if amount != 0:
        amount = _round_up(amount, _NANO)
    amount = min(amount, _MAX)
    if form == "BinarySI" and 0 < amount < 1:
        form = "DecimalSI"
    return (-amount if sign == "-" else amount), form, None, None


def _fast_path(
    num: str, denom: str, form: str, exponent: int, text: str
) -> tuple[str | None, int] | None:
    """ParseQuantity's int64 fast path: None when the value takes the exact path, else
    (the text when it is kept as written, the scale)."""
    if form == "BinarySI":
        if denom:
            return None
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        scale = 0
    else:
        precision = 18 - (len(num) + len(denom))
        scale = exponent - len(denom)
    if precision < 0 or scale < -9:
        return None
    shifted = num + denom
    value = int(shifted)
    multiplied = value << exponent if form == "BinarySI" else value
    if multiplied > 2**63 - 1:
        return None
    if form == "BinarySI":
        keep = exponent % 10 == 0 and value & 0x07 != 0
    else:
        keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return (text if keep else None), scale


def go_fields(text: str, resource_list: bool = False) -> tuple[int, int, str, str] | None:
    """The fields of the resource.Quantity ParseQuantity makes of ``text`` (then, for a
    ResourceList value, RoundUp to milli units): (int64Amount value, its scale, the cached
    string ``s``, Format); None when it takes the exact (inf.Dec) path. Raises
    QuantityError."""
    if text == "0":
        return 0, 0, "0", "DecimalSI"
    _parse(text)  # the errors
    match = _NUMBER.match(text)
    assert match is not None
    sign, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
    _, form, exponent = _apply_suffix(Fraction(0), text[match.end() :])
    fast = _fast_path(whole.lstrip("0") or "0", fraction, form, exponent, text)
    if fast is None:
        return None
    kept, scale = fast
    value = int((whole.lstrip("0") or "0") + fraction)
    value = (value << exponent if form == "BinarySI" else value) * (-1 if sign == "-" else 1)
    if resource_list and scale < -3:  # int64Amount.AsScale: away from zero, as it rounds up
        kept, divisor = None, 10 ** (-3 - scale)
        value = -(-abs(value) // divisor) * (1 if value >= 0 else -1)
        scale = -3
    return value, scale, kept or "", form


def _apply_suffix(number: Fraction, suffix: str) -> tuple[Fraction, str, int]:
    """(value, format, the suffix's exponent: of 10, or of 2 for BinarySI)."""
    if suffix in _DECIMAL:
        exponent = _DECIMAL[suffix]
        return number * Fraction(10) ** exponent, "DecimalSI", exponent
    if suffix in _BINARY:
        exponent = _BINARY[suffix]
        return number * 2**exponent, "BinarySI", exponent
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            exponent = int(suffix[1:])
        except ValueError:
            raise QuantityError("unable to parse quantity's suffix") from None
        return number * Fraction(10) ** exponent, "DecimalExponent", exponent
    raise QuantityError("unable to parse quantity's suffix")


def _round_up(amount: Fraction, unit: Fraction) -> Fraction:
    """Away from zero to a multiple of ``unit`` (apimachinery rounds up: you asked for
    some)."""
    units = abs(amount) / unit
    whole = units.numerator // units.denominator
    if whole != units:
        whole += 1
    rounded = whole * unit
    return rounded if amount >= 0 else -rounded


def _format(amount: Fraction, form: str) -> str:
    if amount == 0:
        return "0"
    if form == "BinarySI":
        if -1024 < amount < 1024 or amount.denominator != 1:
            form = "DecimalSI"
        else:
            return _base1024(int(amount))
    mantissa, exponent = _base10(amount)
    if form == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def _base10(amount: Fraction) -> tuple[int, int]:
    """Integer mantissa and a multiple-of-3 exponent (AsCanonicalBytes)."""
    exponent = 0
    while amount.denominator != 1:
        amount *= 10
        exponent -= 1
    mantissa = amount.numerator
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3 != 0:  # downwards, as Go's remainder for either sign
        mantissa *= 10
        exponent -= 1
    return mantissa, exponent


def _base1024(value: int) -> str:
    exponent = 0
    while value % 1024 == 0 and exponent < 60:
        value //= 1024
        exponent += 10
    return f"{value}{_BINARY_SUFFIX.get(exponent, '')}"


def canonicalize_object(api_version: str, kind: str, obj: dict[str, Any]) -> None:
    """Canonicalise every Quantity, Time and MicroTime field of a built-in object in place
    (and, as Go's encoding/json decodes them, null strings of string maps and lists as "");
    QuantityError for a value that is not a quantity, gotime.TimeParseError for a time Go
    does not parse. Objects of other kinds are left as they are."""
    message = KINDS.get((api_version, kind))
    if message is not None:
        _walk(message, obj)


def _walk(message: str, obj: Any) -> None:
    if not isinstance(obj, dict):
        return
    for field in MESSAGES.get(message, ()):
        if field.name == "":  # inlined (TypeMeta, ...)
            _walk(field.type, obj)
            continue
        if field.name in obj and obj[field.name] is not None:
            obj[field.name] = _value(field.type, obj[field.name])


def _value(type_: str, value: Any) -> Any:
    if type_ in ("map[]string", "[]string"):
        return _null_strings(value)
    if type_ == "Quantity":
        return canonical(value)
    if type_ in ("Time", "MicroTime") and isinstance(value, str):
        return canonical_time(value, micro=type_ == "MicroTime")
    if type_ == "map[]Quantity" and isinstance(value, dict):  # a ResourceList
        return {k: canonical(v, resource_list=True) for k, v in value.items()}
    if type_.startswith("[]") and isinstance(value, list):
        return [_value(type_[2:], item) for item in value]
    if type_.startswith("map[]") and isinstance(value, dict):
        return {k: _value(type_[5:], v) for k, v in value.items()}
    if type_ in MESSAGES:
        _walk(type_, value)
    return value


def _null_strings(value: Any) -> Any:
    """Go's encoding/json decodes a null string (a map value, a list item) as ""."""
    if isinstance(value, dict) and None in value.values():
        return {k: "" if v is None else v for k, v in value.items()}
    if isinstance(value, list) and None in value:
        return ["" if v is None else v for v in value]
    return value
