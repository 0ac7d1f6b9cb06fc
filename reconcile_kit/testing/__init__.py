"""Testing support: an embedded Kubernetes API server and pytest fixtures.

``APIServer`` is an in-process stand-in for kube-apiserver; see its docstring.
"""

from .faults import FaultRule, Faults
from .harness import run_until
from .requestlog import RequestLog, RequestRecord
from .server import APIServer

__all__ = ["APIServer", "FaultRule", "Faults", "RequestLog", "RequestRecord", "run_until"]
