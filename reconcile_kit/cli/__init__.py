"""The ``reconcile-kit`` command line (commands), RBAC rules derived from controllers (rbac),
loading a user's manager (target) and the demo. Heavy imports happen inside commands.
"""
