"""Go's ``%#v`` rendering of the few API values kube-apiserver's validation messages embed
(field.Error's ErrorBody prints a bad value that is no string or number with ``%#v``):
label maps, label selectors, int-or-string values, update strategies."""

from __future__ import annotations

import json
from typing import Any

from ..gofmt import go_quote


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
