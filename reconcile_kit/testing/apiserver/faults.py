"""Fault injection for the embedded API server: failing requests and added latency."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import errors
from .errors import APIError


@dataclass
class RequestInfo:
    """What a request addresses, as k8s.io/apiserver's RequestInfo."""

    verb: str = ""
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    is_resource: bool = False


@dataclass
class FaultRule:
    """Matches requests by verb/resource/name/subresource/namespace (None matches any).

    ``times`` is how many more requests it affects (None: unlimited); ``fraction`` the share
    of matching requests it affects (chosen at random from ``rng``).
    """

    verb: str | None = None
    resource: str | None = None
    name: str | None = None
    subresource: str | None = None
    namespace: str | None = None
    times: int | None = 1
    status: int = 0
    retry_after: int | None = None
    delay: float = 0.0
    hits: int = 0
    fraction: float = 1.0
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def matches(self, info: RequestInfo) -> bool:
        wanted = (
            (self.verb, info.verb),
            (self.resource, info.resource),
            (self.name, info.name),
            (self.subresource, info.subresource),
            (self.namespace, info.namespace),
        )
        return (
            (self.times is None or self.times > 0)
            and all(want is None or want == got for want, got in wanted)
            and (self.fraction >= 1.0 or self.rng.random() < self.fraction)
        )

    def consume(self) -> None:
        self.hits += 1
        if self.times is not None:
            self.times -= 1


def fault_error(rule: FaultRule, info: RequestInfo) -> APIError:
    """The error a failing rule answers with, shaped as kube-apiserver's."""
    name, resource = info.name or "", info.resource
    status = rule.status
    if status == 409:
        return errors.conflict(info.group, resource, name)
    if status == 410:
        return errors.expired("too old resource version: injected fault")
    if status == 429:
        seconds = rule.retry_after if rule.retry_after is not None else 1
        return APIError(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
            {"causes": [{"reason": "", "message": ""}], "retryAfterSeconds": seconds},
            {"Retry-After": str(seconds)},
        )
    if status == 503:
        headers = {"Retry-After": str(rule.retry_after)} if rule.retry_after is not None else {}
        return APIError(
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
            None,
            headers,
        )
    if status == 500:
        return errors.internal("injected fault")
    return APIError(status, "Unknown", f"injected fault with status {status}")


class Faults:
    """Rules consulted for every resource request, in the order they were added."""

    FAILURE_CODES = (400, 403, 404, 409, 410, 422, 429, 500, 503)

    def __init__(self) -> None:
        self.rules: list[FaultRule] = []

    def fail(
        self,
        status: int,
        *,
        verb: str | None = None,
        resource: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
        namespace: str | None = None,
        times: int | None = 1,
        retry_after: int | None = None,
        fraction: float = 1.0,
        seed: int | None = None,
    ) -> FaultRule:
        """Fail the next ``times`` matching requests with ``status`` (409, 410, 429, 500, 503...).

        ``retry_after`` (seconds) sets the Retry-After header of a 429 (default 1) or 503.
        ``fraction`` (0-1) fails only that share of matching requests, drawn at random
        (``seed`` makes the draw repeatable): ``fail(500, times=None, fraction=0.05)`` is a
        server failing 5% of requests.
        Raises ValueError for a status that is not an error code or a fraction outside 0-1.
        """
        if status not in self.FAILURE_CODES:
            raise ValueError(f"status {status} is not one of {self.FAILURE_CODES}")
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be within 0 and 1, got {fraction}")
        rule = FaultRule(verb, resource, name, subresource, namespace, times, status, retry_after)
        rule.fraction, rule.rng = fraction, random.Random(seed)
        self.rules.append(rule)
        return rule

    def latency(
        self,
        seconds: float,
        *,
        verb: str | None = None,
        resource: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
        namespace: str | None = None,
        times: int | None = None,
        fraction: float = 1.0,
        seed: int | None = None,
    ) -> FaultRule:
        """Delay matching requests by ``seconds`` before serving them (unlimited by default;
        ``fraction`` and ``seed`` as :meth:`fail`'s: ``latency(0.25, fraction=0.05)``
        delays 5% of requests by 0.25 s).
        Raises ValueError for a negative delay or a fraction outside 0-1."""
        if seconds < 0 or not 0.0 <= fraction <= 1.0:
            raise ValueError(
                f"expected seconds >= 0 and a fraction within 0 and 1: {seconds}, {fraction}"
            )
        rule = FaultRule(verb, resource, name, subresource, namespace, times, delay=seconds)
        rule.fraction, rule.rng = fraction, random.Random(seed)
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        self.rules.clear()

    def check(self, info: RequestInfo) -> tuple[float, FaultRule | None]:
        """Total delay and the failing rule (if any) for a request; consumes what matched."""
        delay = 0.0
        failure = None
        for rule in self.rules:
            if not rule.matches(info):
                continue
            if rule.status and failure is None:
                failure = rule
                rule.consume()
            elif rule.delay:
                delay += rule.delay
                rule.consume()
        self.rules = [r for r in self.rules if r.times is None or r.times > 0]
        return delay, failure
