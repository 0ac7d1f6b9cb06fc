"""CEL validation rules of CRD schemas: the evaluator is :mod:`reconcile_kit.meta.cel`,
shared with typed models; this module keeps the embedded server's imports (and, without
common-expression-language, names the ``[testing]`` extra that installs it)."""

from __future__ import annotations

from ...client.extras import MissingExtraError, missing_extra

try:
    from ...meta.cel import CELError, compile_error, evaluate, rule_causes
except MissingExtraError as _error:  # pip install reconcile-kit (no extras)
    raise missing_extra(_error, extra="testing", feature="The embedded API server") from _error

__all__ = ["CELError", "compile_error", "evaluate", "rule_causes"]
