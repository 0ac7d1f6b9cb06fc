"""reconcile_kit: an asyncio toolkit for Kubernetes controllers on kr8s."""

__version__ = "0.1.0.dev0"
