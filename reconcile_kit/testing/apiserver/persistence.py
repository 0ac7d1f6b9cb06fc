"""SQLite write-through persistence for the embedded API server's ``data_dir``.

Every write is committed before the request is answered (WAL journal), so an
acknowledged write survives the process being killed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from .store import Obj

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    key TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (key, namespace, name)
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class SQLitePersistence:
    """Objects and the resourceVersion counter in ``<data_dir>/state.sqlite``."""

    def __init__(self, data_dir: str | Path) -> None:
        path = Path(data_dir)
        path.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path / "state.sqlite", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def load(self) -> tuple[int, list[tuple[str, Obj]]]:
        row = self._db.execute("SELECT value FROM meta WHERE name = 'rv'").fetchone()
        rv = int(row[0]) if row else 0
        rows = self._db.execute("SELECT key, data FROM objects ORDER BY rowid").fetchall()
        return rv, [(key, orjson.loads(data)) for key, data in rows]

    def put(self, key: str, obj: Obj, rv: int) -> None:
        meta = obj["metadata"]
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?)",
                (key, meta.get("namespace") or "", meta["name"], orjson.dumps(obj)),
            )
            self._set_rv(rv)

    def delete(self, key: str, namespace: str, name: str, rv: int) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "DELETE FROM objects WHERE key = ? AND namespace = ? AND name = ?",
                (key, namespace, name),
            )
            self._set_rv(rv)

    def _set_rv(self, rv: int) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (str(rv),))

    def close(self) -> None:
        self._db.close()
