"""Go's ``%v`` rendering of decoded JSON values, which some kube-apiserver messages embed
(e.g. a patch that cannot be applied: ``patch: Invalid value: "map[spec:map[...]]"``)."""

from __future__ import annotations

from typing import Any

from ...meta.gostrings import go_quote

__all__ = ["go_format", "go_interface", "go_quote", "go_syntax"]


def go_format(value: Any) -> str:
    """``value`` (decoded JSON) as Go's ``%v`` prints it once decoded into interface{}
    values: ``map[k:v ...]`` with sorted keys, ``[a b]``, numbers as float64."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(item) for item in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _go_float(float(value))
    return str(value)


def go_interface(value: Any) -> str:
    """``%v`` of ``value`` decoded into interface{} by apimachinery (integers as int64,
    other numbers as float64): ``map[k:v]``, ``[a b]``, ``<nil>``."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_interface(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_interface(item) for item in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return go_format(value)


def go_syntax(value: Any) -> str:
    """``%#v`` of ``value`` decoded into interface{} by apimachinery (integers as int64):
    ``map[string]interface {}{"k":1}``, ``[]interface {}{"a", 2.5}``, ``interface {}(nil)``
    for a null item."""
    if isinstance(value, dict):
        items = ", ".join(f"{go_quote(k)}:{go_syntax(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_syntax(item) for item in value) + "}"
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return go_quote(value)
    return go_interface(value)


def _go_float(number: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), which ``%v`` uses: the shortest digits, in
    exponent form when the exponent is below -4 or at least 6 (``1e+06``)."""
    if number == 0:
        return "0"
    digits, exponent = _shortest(abs(number))
    sign = "-" if number < 0 else ""
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest(number: float) -> tuple[str, int]:
    """The shortest digits that round-trip and the decimal exponent of the first one."""
    mantissa, _, exponent = f"{number:e}".partition("e")
    for precision in range(17):
        text = f"{number:.{precision}e}"
        if float(text) == number:
            mantissa, _, exponent = text.partition("e")
            break
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    return digits, int(exponent)
