"""CEL validation rules of CRD schemas (``x-kubernetes-validations``), as kube-apiserver
evaluates them (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel): one evaluator
for the embedded API server (``testing.apiserver``) and for typed models
(``CustomResource.model_validate`` checks its Rules as the servers do).

Each rule is evaluated with ``self`` bound to the value of its schema node (when present)
and, for a transition rule (one that names ``oldSelf``), ``oldSelf`` bound to the same
node of the stored object on an update (skipped when there is none, unless
``optionalOldSelf``). Map-list items are matched to their old items by key. A rule that
is not true gives a cause worded as kube-apiserver words it: ``spec: Invalid value:
"object": <message>`` (``failed rule: <rule>`` without a message; ``messageExpression``
evaluated; ``reason`` and ``fieldPath`` honoured).

The evaluator is common-expression-language (cel-rust bindings), chosen over cel-python
for speed (about 5 µs against 165 µs per compiled rule here) and for registering the
Kubernetes string and list extensions as methods; neither library ships those
extensions, so the ones CRDs commonly use are defined below. Not done: cost estimation
(kube-apiserver refuses CRDs whose rules may cost too much), the url/ip/quantity
libraries.

common-expression-language is not a core dependency: ``reconcile-kit[cel]`` (or
``[testing]``) installs it; without it, importing this module raises
:class:`~reconcile_kit.client.extras.MissingExtraError` naming the extra.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import re
from functools import cache
from typing import Any

from ..client.extras import missing_extra

if importlib.util.find_spec("cel") is None:  # pip install reconcile-kit (no extras)
    raise missing_extra(
        ModuleNotFoundError("No module named 'cel'", name="cel"),
        extra="cel",
        feature="Evaluating CEL rules (x-kubernetes-validations; [testing] includes [cel])",
    )

__all__ = ["CELError", "cause", "compile_error", "evaluate", "rule_causes"]

_MISSING: Any = object()


def cause(reason: str, field: str, message: str) -> dict[str, str]:
    """One ``StatusCause`` (``reason``, ``message``, ``field``), as kube-apiserver words a
    broken rule."""
    return {"reason": reason, "message": message, "field": field}


_OLD_SELF = re.compile(r"\boldSelf\b")
_REASONS = {
    "FieldValueForbidden": ("Forbidden", "{message}"),
    "FieldValueRequired": ("Required value", "{message}"),
    "FieldValueDuplicate": ("Duplicate value", "{message}"),
}


def _index_of(value: Any, item: Any, start: int = 0) -> int:
    return int(value.find(item, start)) if isinstance(value, str) else _list_index(value, item)


def _list_index(items: list[Any], item: Any) -> int:
    return items.index(item) if item in items else -1


def _last_index_of(value: Any, item: Any) -> int:
    if isinstance(value, str):
        return value.rfind(item)
    return len(value) - 1 - value[::-1].index(item) if item in value else -1


def _substring(value: str, start: int, end: int | None = None) -> str:
    return value[start:end]


def _replace(value: str, old: str, new: str, count: int = -1) -> str:
    return value.replace(old, new, count)


_FUNCTIONS: dict[str, Any] = {
    "charAt": lambda s, i: s[i] if i < len(s) else "",
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": lambda s: s.lower(),
    "upperAscii": lambda s: s.upper(),
    "replace": _replace,
    "split": lambda s, sep, n=-1: s.split(sep, n - 1) if n > 0 else s.split(sep),
    "substring": _substring,
    "trim": lambda s: s.strip(),
    "join": lambda items, sep="": sep.join(items),
    "isSorted": lambda items: list(items) == sorted(items),
    "sum": lambda items: sum(items),
    "min": lambda items: min(items),
    "max": lambda items: max(items),
    "find": lambda s, pattern: m.group(0) if (m := re.search(pattern, s)) else "",
    "findAll": lambda s, pattern: re.findall(pattern, s),
}


@cache
def _cel() -> Any:
    """The ``cel`` module, imported on first use: its package imports its command line
    (typer, prompt_toolkit, rich: ~0.15 s), which a process evaluating no rule (the
    embedded server's start) need not pay for."""
    return importlib.import_module("cel")


@cache
def _program(source: str) -> Any:
    return _cel().compile(source)


def _evaluate(source: str, variables: dict[str, Any]) -> Any:
    context = _cel().Context()
    for name, function in _FUNCTIONS.items():
        context.add_function(name, function)
    for name, value in variables.items():
        context.add_variable(name, value)
    return _program(source).execute(context)


class CELError(Exception):
    """An expression that failed to evaluate; the text as cel-go words it where known."""


def compile_error(source: str, declared: frozenset[str] | None = None) -> str | None:
    """cel-go's ``ERROR: <input>:L:C: ...`` report for an expression that does not parse
    or (given ``declared``) names a variable that is not declared; None when it compiles.
    Types are not checked."""
    try:
        program = _program(source)
    except ValueError as exc:
        text = str(exc)
        at = text.find("ERROR:")
        return (text[at:] if at >= 0 else text).replace("\n| ", "\n | ")
    if declared is None:
        return None
    binders = set(_BINDER.findall(source))
    undeclared = [v for v in program.variables() if v not in declared and v not in binders]
    reports = []
    for name in sorted(undeclared, key=lambda v: _first_use(source, v)):
        offset = _first_use(source, name)
        line = source.count("\n", 0, offset) + 1
        start = source.rfind("\n", 0, offset) + 1
        end = source.find("\n", offset)
        text = source[start : end if end >= 0 else len(source)]
        column = offset - start
        reports.append(
            f"ERROR: <input>:{line}:{column + 1}: undeclared reference to '{name}'"
            f" (in container '')\n | {text}\n | {'.' * column}^"
        )
    return "\n".join(reports) or None


_BINDER = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\(\s*([A-Za-z_]\w*)\s*,")


def _first_use(source: str, name: str) -> int:
    match = re.search(rf"(?<![.\w]){re.escape(name)}\b", source)
    return match.start() if match else 0


def evaluate(source: str, variables: dict[str, Any]) -> object:
    """The value of ``source`` (compiled once) with ``variables``.

    Raises:
        CELError: ``source`` does not compile, or its evaluation fails.
    """
    try:
        return _evaluate(source, variables)
    except ZeroDivisionError as exc:
        raise CELError("division by zero") from exc
    except KeyError as exc:
        raise CELError(f"no such key: {exc.args[0] if exc.args else ''}") from exc
    except Exception as exc:  # the bindings raise several types
        raise CELError(str(exc)) from exc


def rule_causes(
    schema: dict[str, Any], new: object, old: object = _MISSING, *, transitions: bool = True
) -> list[dict[str, str]]:
    """The causes of the rules ``new`` (a custom resource) breaks; ``old``: the stored
    object on an update. ``transitions=False`` skips the rules naming ``oldSelf`` (a
    model checked without its stored object)."""
    out: list[dict[str, str]] = []
    _walk(schema, new, old, "", out, transitions)
    return out


def _walk(
    schema: dict[str, Any], value: Any, old: Any, path: str, out: list[Any], transitions: bool
) -> None:
    if value is _MISSING or value is None or not isinstance(schema, dict):
        return
    for rule in schema.get("x-kubernetes-validations") or ():
        if not transitions and _OLD_SELF.search(str(rule.get("rule", ""))):
            continue
        failed = _check(rule, value, old, path, schema)
        if failed is not None:
            out.append(failed)
    properties = schema.get("properties") or {}
    if isinstance(value, dict):
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key) or (extra if isinstance(extra, dict) else None)
            if sub is not None:
                before = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                _walk(sub, item, before, f"{path}.{key}" if path else key, out, transitions)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        olds = _old_items(schema, old)
        for index, item in enumerate(value):
            before = olds.get(_key(schema, item), _MISSING) if olds else _MISSING
            _walk(schema["items"], item, before, f"{path}[{index}]", out, transitions)


def _key(schema: dict[str, Any], item: Any) -> Any:
    keys = schema.get("x-kubernetes-list-map-keys") or ()
    return tuple(item.get(k) for k in keys) if isinstance(item, dict) else None


def _old_items(schema: dict[str, Any], old: Any) -> dict[Any, Any]:
    """Old items by key: kube-apiserver correlates only map-list items for oldSelf."""
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return {}
    return {_key(schema, item): item for item in old}


def _check(
    rule: dict[str, Any], value: Any, old: Any, path: str, schema: dict[str, Any]
) -> dict[str, str] | None:
    source = str(rule.get("rule", ""))
    variables = {"self": value}
    if _OLD_SELF.search(source):
        if old is _MISSING and not rule.get("optionalOldSelf"):
            return None
        variables["oldSelf"] = None if old is _MISSING else old
    try:
        passed = _evaluate(source, variables) is True
    except Exception as err:
        return cause("FieldValueInvalid", path, f'Invalid value: "object": {err}')
    if passed:
        return None
    return _failure(rule, variables, source, path, schema)


def _failure(
    rule: dict[str, Any], variables: dict[str, Any], source: str, path: str, schema: dict[str, Any]
) -> dict[str, str]:
    message = rule.get("message") or f"failed rule: {source}"
    if rule.get("messageExpression"):
        # kube-apiserver falls back to the message when the expression fails
        with contextlib.suppress(Exception):
            message = str(_evaluate(rule["messageExpression"], variables))
    field = path + str(rule.get("fieldPath") or "")
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason in _REASONS:
        label, _ = _REASONS[reason]
        return cause(reason, field, f"{label}: {message}")
    kind = schema.get("type") or "object"
    return cause("FieldValueInvalid", field, f'Invalid value: "{kind}": {message}')
