"""Go's ``%#v`` rendering of the API values kube-apiserver's validation messages embed
(field.Error's ErrorBody prints a bad value that is no string or number with ``%#v``):
label maps, label selectors, int-or-string values, update strategies, and whole internal
structs (a Job's pod template) from their JSON and their Go layout (gostructs.py)."""

from __future__ import annotations

import datetime
import json
from typing import Any

from ..gofmt import go_quote
from ..quantity import QuantityError, go_fields
from .gostructs import NAMED, STRUCTS

POINTER = "0x0"
"""The address printed for a set pointer: Go prints the heap address, which differs from
one process to the next (not reproduced)."""

_INTS = {"int", "int32", "int64", "uint16", "byte"}
_STRINGS = {"string", "types.UID"}
_MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July"),
    *("August", "September", "October", "November", "December"),
)


def go_value(value: Any, go_type: str) -> str:
    """``value`` (decoded JSON; None when absent) as Go's ``%#v`` prints a ``go_type``
    (``core.PodTemplateSpec``, ``[]string``, ``*int64``...) holding it."""
    if go_type.startswith("*"):
        if value is None:
            return "<nil>" if go_type == "*v1.Time" else f"({go_type})(nil)"
        return f"({go_type})({POINTER})"
    underlying = NAMED.get(go_type, go_type)
    if underlying.startswith("[]"):
        if not isinstance(value, list):
            return f"{go_type}(nil)"
        return go_type + "{" + ", ".join(go_value(v, underlying[2:]) for v in value) + "}"
    if underlying.startswith("map["):
        return _map(value, go_type, underlying)
    if go_type in STRUCTS:
        return _struct(value if isinstance(value, dict) else {}, go_type)
    return _scalar(value, go_type, underlying)


def _map(value: Any, go_type: str, underlying: str) -> str:
    if not isinstance(value, dict):
        return f"{go_type}(nil)"
    key_type, value_type = underlying[4:].split("]", 1)
    items = [f"{go_value(k, key_type)}:{_map_value(value[k], value_type)}" for k in sorted(value)]
    return go_type + "{" + ", ".join(items) + "}"


def _map_value(value: Any, go_type: str) -> str:
    if go_type == "resource.Quantity":  # a ResourceList's (the only quantity maps served)
        return quantity(value, resource_list=True)
    return go_value(value, go_type)


def _struct(value: dict[str, Any], go_type: str) -> str:
    fields = []
    for go_name, field_type, json_name in STRUCTS[go_type]:
        field = value if json_name == "" else value.get(json_name)
        fields.append(f"{go_name}:{go_value(field, field_type)}")
    return go_type + "{" + ", ".join(fields) + "}"


def _scalar(value: Any, go_type: str, underlying: str) -> str:
    if underlying in _STRINGS:
        return go_quote(value if isinstance(value, str) else "")
    if underlying in _INTS:
        return str(value if isinstance(value, int) and not isinstance(value, bool) else 0)
    if underlying == "bool":
        return "true" if value is True else "false"
    if go_type == "resource.Quantity":
        return quantity(value)
    if go_type == "intstr.IntOrString":
        return int_or_string(value)
    if go_type == "v1.Time":
        return go_time(value)
    return f"{go_type}{{}}"


def quantity(value: Any, resource_list: bool = False) -> str:
    """A ``resource.Quantity`` parsed from ``value`` (a ResourceList's is rounded up to
    milli units, as SetDefaults_ResourceList does)."""
    try:
        fields = go_fields(value if isinstance(value, str) else str(value), resource_list)
    except QuantityError:  # refused when decoded: never validated
        fields = None
    number, scale, cached, form = fields or (0, 0, "", "DecimalSI")
    dec = "nil" if fields is not None else POINTER
    return (
        f"resource.Quantity{{i:resource.int64Amount{{value:{number}, scale:{scale}}},"
        f" d:resource.infDecAmount{{Dec:(*inf.Dec)({dec})}}, s:{go_quote(cached)},"
        f" Format:{go_quote(form)}}}"
    )


def go_time(value: Any) -> str:
    """A ``metav1.Time`` (its time.Time's GoString): the zero time is UTC, a decoded one
    local (kube-apiserver runs in UTC: its offset is 0)."""
    if not isinstance(value, str):
        return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)"
    when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return (
        f"time.Date({when.year}, time.{_MONTHS[when.month - 1]}, {when.day}, {when.hour},"
        f" {when.minute}, {when.second}, 0, time.Local)"
    )


def string_map(value: Any) -> str:
    """A ``map[string]string`` (labels): ``map[string]string{"a":"b"}``, keys sorted, or
    ``map[string]string(nil)`` when absent."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    items = ", ".join(f"{go_quote(k)}:{go_quote(str(value[k]))}" for k in sorted(value))
    return "map[string]string{" + items + "}"


def _requirement(req: Any) -> str:
    req = req if isinstance(req, dict) else {}
    return (
        f"v1.LabelSelectorRequirement{{Key:{go_quote(str(req.get('key') or ''))},"
        f" Operator:{go_quote(str(req.get('operator') or ''))},"
        f" Values:{strings(req.get('values'))}}}"
    )


def label_selector(selector: Any) -> str:
    """A ``metav1.LabelSelector`` as ``v1.LabelSelector{MatchLabels:..., MatchExpressions:...}``
    (``null`` for none, as ErrorBody prints a nil pointer)."""
    if not isinstance(selector, dict):
        return "null"
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        rendered = "[]v1.LabelSelectorRequirement{" + ", ".join(map(_requirement, expressions))
        rendered += "}"
    else:
        rendered = "[]v1.LabelSelectorRequirement(nil)"
    return (
        f"v1.LabelSelector{{MatchLabels:{string_map(selector.get('matchLabels'))},"
        f" MatchExpressions:{rendered}}}"
    )


def int_or_string(value: Any) -> str:
    """An ``intstr.IntOrString``: ``intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}``."""
    if isinstance(value, str):
        return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}"
    number = value if isinstance(value, int) else 0
    return f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}'


def strategy(kind: str, rolling_kind: str, value: Any) -> str:
    """An update strategy ``apps.<kind>{Type:"...", RollingUpdate:...}``; a set
    ``rollingUpdate`` prints as a pointer whose address Go shows (not reproduced: 0x0)."""
    value = value if isinstance(value, dict) else {}
    rolling = "nil" if value.get("rollingUpdate") is None else "0x0"
    return (
        f"apps.{kind}{{Type:{go_quote(str(value.get('type') or ''))},"
        f" RollingUpdate:(*apps.{rolling_kind})({rolling})}}"
    )


def strings(values: Any) -> str:
    """A ``[]string``: ``[]string{"a", "b"}``, or ``[]string(nil)``."""
    if not isinstance(values, list):
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def spec_diff(type_name: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """A diff of two specs' changed top-level fields, in go-cmp's frame (``  core.PodSpec{``
    ... ``  }``) that kube-apiserver appends to an immutability message. go-cmp's own
    rendering of the Go structs is unstable on purpose (random non-breaking spaces), so
    only the frame and the changed fields are given."""
    lines = [f"  core.{type_name}{{"]
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            lines.append(f"- \t{key}: {json.dumps(old.get(key), sort_keys=True)},")
            lines.append(f"+ \t{key}: {json.dumps(new.get(key), sort_keys=True)},")
    return "\n".join([*lines, "  }", ""])
