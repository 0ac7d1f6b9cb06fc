"""``python -m reconcile_kit``: the same as the ``reconcile-kit`` command."""

from .cli.commands import main

main()
