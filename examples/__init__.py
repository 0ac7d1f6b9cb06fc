"""The example operators, shipped in the package as ``reconcile_kit.examples`` (this folder
is their one copy): ``reconcile-kit demo`` runs them from any install."""
