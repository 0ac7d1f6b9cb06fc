"""CEL validation rules of CRD schemas: the evaluator is :mod:`reconcile_kit.meta.cel`,
shared with typed models; this module keeps the embedded server's imports."""

from __future__ import annotations

from ...meta.cel import CELError, compile_error, evaluate, rule_causes

__all__ = ["CELError", "compile_error", "evaluate", "rule_causes"]
