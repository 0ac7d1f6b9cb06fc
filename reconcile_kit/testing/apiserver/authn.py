"""Authentication of the embedded server: the admin bearer token and ServiceAccount tokens
issued by the TokenRequest API (``POST .../serviceaccounts/<name>/token``).

Users as kube-apiserver names them: the admin token is user ``admin`` in
``system:masters``; a ServiceAccount token is ``system:serviceaccount:<ns>:<name>`` in
``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``; every authenticated user is
also in ``system:authenticated``. Deliberate difference: tokens are opaque random strings,
not signed JWTs (clients never read them).
"""

from __future__ import annotations

import secrets
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

__all__ = ["ADMIN", "Authenticator", "User"]

AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class User:
    """Who sent a request."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def is_master(self) -> bool:
        return MASTERS in self.groups

    def info(self) -> dict[str, object]:
        """authentication.k8s.io/v1 UserInfo."""
        info: dict[str, object] = {"username": self.name}
        if self.uid:
            info["uid"] = self.uid
        info["groups"] = list(self.groups)
        if self.extra:
            info["extra"] = {key: list(values) for key, values in self.extra}
        return info


ADMIN = User("admin", (MASTERS, AUTHENTICATED), "admin")


@dataclass
class _ServiceAccountToken:
    user: User
    expires: float  # time.time()


def bearer_token(authorization: str | None) -> str:
    """The bearer token of an ``Authorization`` header ("" when it carries none)."""
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@dataclass
class Authenticator:
    """Maps bearer tokens to users: ``admin_token`` (None: every request without a token is
    the admin, as a server with no authentication configured) and issued tokens."""

    admin_token: str | None = None
    _issued: dict[str, _ServiceAccountToken] = field(default_factory=dict)

    def user(self, authorization: str | None) -> User | None:
        """The user of an ``Authorization`` header; None when it names no one (401).
        Without an admin token every request that is not an issued token's is the admin."""
        user = self.review(bearer_token(authorization))
        return user or (ADMIN if self.admin_token is None else None)

    def review(self, token: str) -> User | None:
        """The user a TokenReview of ``token`` authenticates: an issued token that has not
        expired or the admin token; None for any other (kube-apiserver's TokenReview asks
        its token authenticators, which know no made-up token, even where the server
        authorizes everything). Unlike :meth:`user`, no token is the admin by default."""
        issued = self._issued.get(token) if token else None
        if issued is not None and issued.expires >= time.time():
            return issued.user
        if token and self.admin_token and secrets.compare_digest(token, self.admin_token):
            return ADMIN
        return None

    def issue(self, namespace: str, name: str, uid: str, seconds: int) -> tuple[str, str]:
        """A token for ServiceAccount ``namespace/name`` valid ``seconds``; returns it and
        its expiration timestamp (RFC 3339)."""
        token = "rk-sa." + secrets.token_urlsafe(32)
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)
        credential = (("authentication.kubernetes.io/credential-id", (f"JTI={uuid.uuid4()}",)),)
        user = User(f"system:serviceaccount:{namespace}:{name}", groups, uid, credential)
        expires = time.time() + seconds
        self._issued[token] = _ServiceAccountToken(user, expires)
        stamp = datetime.fromtimestamp(int(expires), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return token, stamp
