"""The ``sharding=`` setting of a :class:`~reconcile_kit.manager.Manager`."""

from __future__ import annotations

import re
import secrets
import socket
from dataclasses import dataclass, field

from ...meta.validation import dns1123_label_errors, qualified_name_errors
from ..leaderelection import LeaderElection

__all__ = ["Sharding"]


def _default_identity() -> str:
    """The host name (a pod's name) as a DNS label, and 5 random hex digits."""
    host = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-")[:57].strip("-")
    return f"{host or 'replica'}-{secrets.token_hex(3)[:5]}"


@dataclass
class Sharding:
    """Active-active sharding of a manager's controllers over a ring of replicas, as
    timebertt/kubernetes-controller-sharding (see :mod:`reconcile_kit.manager.sharding`).

    Every replica joins ``ring`` with a membership Lease of its own; the objects of the
    sharded controllers are assigned to the live members by rendezvous hashing and
    labelled ``shard.reconcile-kit.io/<ring>: <identity>``; each replica watches and
    reconciles only its own.

    Args:
        ring: the ring's name: a label name (at most 63 characters, ``[-a-z0-9]``,
            alphanumeric at both ends), shared by every replica of the operator.
        namespace: where the ring's Leases live (membership and the sharder's election).
        identity: this replica's member name: a DNS label (the shard label's value and
            part of its Lease's name ``<ring>-<identity>``). Default: the host name (a pod's
            name) and 5 random hex digits, so that a restarted process joins as a new
            member.
        lease_duration: seconds, as :class:`~reconcile_kit.manager.leaderelection.LeaderElection`
            (membership and the sharder election): a member whose Lease was not renewed
            for this long (as others observe it) has its objects moved away without a
            drain.
        renew_deadline: seconds after its last successful renewal at which a member that
            could not renew stops its sharded controllers (it rejoins once it renews).
        retry_period: seconds between renewals and between acquire attempts.
        drain_timeout: seconds a gracefully stopping replica spends handing its objects
            over to the other members (the sharder moves what is left once it released its
            membership Lease), and again, when it runs the ring's sharder, keeping the
            sharder running after the release until its objects are moved. None: the
            manager's ``graceful_shutdown_timeout``.
        concurrency: label writes the sharder sends at once (a sharded controller
            handing its objects over on a graceful stop sends as many as its own
            ``concurrency``).

    Raises:
        ValueError: an invalid ``ring`` or ``identity``; the durations as LeaderElection
            checks them (``lease_duration > renew_deadline > retry_period * 1.2 > 0``).
    """

    ring: str
    namespace: str = "default"
    identity: str = field(default_factory=_default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    drain_timeout: float | None = None
    concurrency: int = 8

    def __post_init__(self) -> None:
        from ..leaderelection import _validate

        errors = dns1123_label_errors(self.ring) or qualified_name_errors(self.ring)
        if errors:
            raise ValueError(f"invalid ring name {self.ring!r}: {'; '.join(errors)}")
        errors = dns1123_label_errors(self.identity)
        if errors:
            raise ValueError(f"invalid ring member identity {self.identity!r}: {'; '.join(errors)}")
        if len(self.member_lease) > 253:
            raise ValueError("ring and identity must be at most 252 characters together")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        _validate(self.ring, self.lease_duration, self.renew_deadline, self.retry_period)

    @property
    def member_lease(self) -> str:
        """The name of this replica's membership Lease."""
        return f"{self.ring}-{self.identity}"

    def election(self, lease: str, labels: dict[str, str] | None = None) -> LeaderElection:
        """A LeaderElection of the Lease ``lease`` with this ring's namespace, identity and
        timings, not released on cancellation (a crash leaves it to expire; a graceful
        stop releases it)."""
        return LeaderElection(
            lease,
            namespace=self.namespace,
            identity=self.identity,
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
            release_on_cancel=False,
            labels=labels,
        )

    @property
    def rejoin_grace(self) -> float:
        """Seconds after the ring's Lease watch last found the API server unreachable (no
        answer, or 502/503/504) during which a member whose Lease was not seen renewed
        since then still counts as live
        (:class:`~.membership.RingView`): the time for the watch to come back (at most
        ``retry_period``) and for the member to renew (a jittered retry, at most
        ``2.2 * retry_period``, as client-go's ``wait.JitterUntil``), never more than
        ``lease_duration``."""
        from ..leaderelection import JITTER_FACTOR

        return min(self.lease_duration, self.retry_period * (2 + JITTER_FACTOR))

    @property
    def sharder_lease(self) -> str:
        """The name of the Lease whose holder runs the ring's sharder."""
        return f"{self.ring}-sharder"
