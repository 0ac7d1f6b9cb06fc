"""What a reconcile asks for next: :class:`Action` (kube-rs ``Action``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Action"]


@dataclass(frozen=True)
class Action:
    """What a reconcile asks for next (kube-rs ``Action``).

    ``Action.requeue(seconds)`` reconciles again after that many seconds (unless a change
    comes first); ``Action.await_change()`` (or returning None) waits for the next event.
    """

    requeue_after: float | None = None

    @classmethod
    def requeue(cls, seconds: float) -> Action:
        """Reconcile this object again after ``seconds`` (unless a change comes first), as
        kube-rs's ``Action::requeue`` and controller-runtime's ``Result.RequeueAfter``.

        Raises:
            ValueError: ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError(f"requeue delay must be >= 0 seconds, got {seconds}")
        return cls(float(seconds))

    @classmethod
    def await_change(cls) -> Action:
        """Reconcile this object again only when it (or a child, or a watched object
        mapped to it) changes, as kube-rs's ``Action::await_change``. Watches can miss
        nothing the cache ends up holding, but a desync (a change the controller's inputs
        do not show, e.g. in an external system) is only caught by a periodic requeue or
        ``resync``: use :meth:`requeue` when the state lives outside Kubernetes."""
        return cls(None)
