"""OpenTelemetry tracing (the optional extra ``reconcile-kit[tracing]``).

When an OpenTelemetry tracer provider is set (``opentelemetry.trace.set_tracer_provider``,
or :func:`configure_from_environment`, which ``reconcile-kit run`` calls), reconcile_kit
records:

- a span per reconcile, ``reconcile <Kind>`` (kind INTERNAL) with ``k8s.kind``,
  ``k8s.namespace``, ``k8s.name``, ``reconcile_kit.controller``, ``reconcile_kit.reasons``,
  ``reconcile_kit.attempt``, ``reconcile_kit.result`` (success, requeue_after, error) and
  ``reconcile_kit.requeue_after`` (seconds); an error is recorded on it (status ERROR);
- a child span per API request, ``<METHOD> <resource>`` (kind CLIENT) with
  ``http.request.method``, ``url.path``, ``k8s.resource``, ``http.response.status_code``
  and ``reconcile_kit.attempt``; the request carries the W3C trace context (``traceparent``,
  through the propagators of ``OTEL_PROPAGATORS``, tracecontext and baggage by default), so
  a kube-apiserver with APIServerTracing continues the trace;
- a span per webhook call, ``webhook <name>`` (kind SERVER), continuing the trace context
  of the calling API server's request.

Without a configured provider (or without the ``opentelemetry`` packages) nothing is
recorded and nothing is imported on the request path. Exporters are configured by
OpenTelemetry's standard environment variables: ``OTEL_TRACES_EXPORTER`` (``otlp``,
``console``, any exporter package's entry point), ``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER``...
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from .paths import resource_of

if TYPE_CHECKING:  # the tracing extra; never imported for the types alone
    from opentelemetry.trace import Span, Tracer, TracerProvider


__all__ = [
    "answered",
    "configure_from_environment",
    "request_span",
    "server_span",
    "tracer",
    "use_tracer_provider",
]

_NAME = "reconcile_kit"
_provider: Any = None


def use_tracer_provider(provider: TracerProvider | None) -> None:
    """Record reconcile_kit's spans with ``provider`` (an OpenTelemetry TracerProvider)
    instead of the global one; None goes back to the global one. For tests (an SDK
    provider with an in-memory exporter) and applications keeping several providers."""
    global _provider
    _provider = provider


def tracer() -> Tracer | None:
    """The reconcile_kit tracer when a tracer provider is configured (:func:`use_tracer_provider`
    or the global one), else None (nothing is recorded). Never imports opentelemetry when
    the application did not."""
    if _provider is not None:
        found: Tracer = _provider.get_tracer(_NAME)
        return found
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    global_tracer: Tracer = provider.get_tracer(_NAME)
    return global_tracer


@contextlib.contextmanager
def request_span(
    method: str, path: str, headers: MutableMapping[str, str], attempt: int = 1
) -> Iterator[Span | None]:
    """A CLIENT span around one API request (None when tracing is off); puts the trace
    context into ``headers``. The caller sets the status code with :func:`answered`."""
    found = tracer()
    if found is None:
        yield None
        return
    from opentelemetry import propagate, trace

    resource = resource_of(path)
    with found.start_as_current_span(
        f"{method.upper()} {resource}",
        kind=trace.SpanKind.CLIENT,
        attributes={
            "http.request.method": method.upper(),
            "url.path": path,
            "k8s.resource": resource,
            "reconcile_kit.attempt": attempt,
        },
    ) as span:
        propagate.inject(headers)
        yield span


def answered(span: Span | None, status: int) -> None:
    """Record an answer's HTTP ``status`` on a request span (0: none came; >= 400: error)."""
    if span is None:
        return
    from opentelemetry.trace import Status, StatusCode

    if status:
        span.set_attribute("http.response.status_code", status)
    if status == 0 or status >= 400:
        span.set_status(Status(StatusCode.ERROR, f"HTTP {status}" if status else "no answer"))


@contextlib.contextmanager
def server_span(name: str, headers: Mapping[str, str], attributes: dict[str, Any]) -> Iterator[Any]:
    """A SERVER span named ``name`` continuing the trace context in ``headers`` (an
    incoming request's); None when tracing is off."""
    found = tracer()
    if found is None:
        yield None
        return
    from opentelemetry import propagate, trace

    context = propagate.extract(dict(headers))
    with found.start_as_current_span(
        name, context=context, kind=trace.SpanKind.SERVER, attributes=attributes
    ) as span:
        yield span


def configure_from_environment() -> bool:
    """Set a global tracer provider when ``OTEL_TRACES_EXPORTER`` names exporters (and not
    ``none``): an SDK TracerProvider (resource from ``OTEL_SERVICE_NAME`` and
    ``OTEL_RESOURCE_ATTRIBUTES``, sampler from ``OTEL_TRACES_SAMPLER``) with a batch span
    processor per exporter, each found by its ``opentelemetry_traces_exporter`` entry
    point as the SDK's own auto-configuration finds them (``otlp`` needs
    ``opentelemetry-exporter-otlp``). Returns whether tracing is now on.

    Raises:
        RuntimeError: ``OTEL_TRACES_EXPORTER`` is set but the SDK (the ``tracing`` extra)
            or a named exporter is not installed (names it).
    """
    names = [n.strip() for n in os.environ.get("OTEL_TRACES_EXPORTER", "").split(",")]
    names = [n for n in names if n and n != "none"]
    if not names:
        return False
    try:
        from importlib.metadata import entry_points

        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise RuntimeError(
            f"OTEL_TRACES_EXPORTER={os.environ['OTEL_TRACES_EXPORTER']}: the OpenTelemetry SDK "
            f"is not installed (pip install 'reconcile-kit[tracing]'): {error}"
        ) from error
    provider = TracerProvider(resource=Resource.create())
    found = {e.name: e for e in entry_points(group="opentelemetry_traces_exporter")}
    for name in names:
        if name not in found:
            raise RuntimeError(
                f"OTEL_TRACES_EXPORTER: no exporter {name!r} installed (found: "
                f"{', '.join(sorted(found)) or 'none'}; otlp: pip install "
                "opentelemetry-exporter-otlp)"
            )
        provider.add_span_processor(BatchSpanProcessor(found[name].load()()))
    trace.set_tracer_provider(provider)
    return True
