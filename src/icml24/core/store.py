"""SQLite results store: one row per (paper, experiment, config hash, seed, code version).

Each write is one transaction, so a run killed at any moment loses at most the experiment in flight,
and a later run skips what is stored.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_STORE = Path("results") / "icml24.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    paper        TEXT NOT NULL,
    experiment   TEXT NOT NULL,
    config_hash  TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    code_version TEXT NOT NULL,
    mode         TEXT NOT NULL,
    config       TEXT NOT NULL,
    status       TEXT NOT NULL,
    metrics      TEXT NOT NULL,
    seconds      REAL,
    peak_rss_mb  REAL,
    versions     TEXT NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    figures      TEXT NOT NULL DEFAULT '[]',
    finished_at  REAL NOT NULL,
    PRIMARY KEY (paper, experiment, config_hash, seed, code_version)
);
"""

_COLUMNS = ["paper", "experiment", "config_hash", "seed", "code_version", "mode", "config", "status", "metrics",
            "seconds", "peak_rss_mb", "versions", "error", "figures", "finished_at"]


def config_hash(config: dict[str, Any]) -> str:
    """A short stable hash of an experiment's keyword arguments."""
    canonical = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


@dataclass
class RunRecord:
    """One stored run of one experiment at one seed."""

    paper: str
    experiment: str
    config: dict[str, Any]
    seed: int
    code_version: str
    mode: str
    status: str  # "ok" or "error"
    metrics: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    error: str = ""
    figures: list[str] = field(default_factory=list)
    finished_at: float = 0.0

    @property
    def config_hash(self) -> str:
        return config_hash(self.config)


class Store:
    """The results database. Safe to open from several processes; only the driver writes in practice."""

    def __init__(self, path: str | Path = DEFAULT_STORE):
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise ValueError(f"--store {self.path} is a folder; give a file path such as {self.path / 'icml24.sqlite'}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(runs)")]
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{self.path} is not an icml24 results store ({exc}); pass another --store") from None
        if columns != _COLUMNS:
            self._db.close()
            raise ValueError(f"{self.path} holds a 'runs' table with other columns than an icml24 results store "
                             f"(expected {', '.join(_COLUMNS)}); pass another --store")

    @property
    def folder(self) -> Path:
        """Folder beside the database for figures and artifacts."""
        return self.path.parent

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def put(self, record: RunRecord) -> None:
        """Insert or replace one run, atomically."""
        if not record.finished_at:
            record.finished_at = time.time()
        row = (
            record.paper, record.experiment, record.config_hash, record.seed, record.code_version, record.mode,
            json.dumps(record.config, sort_keys=True, default=str), record.status, json.dumps(record.metrics),
            record.seconds, record.peak_rss_mb, json.dumps(record.versions), record.error,
            json.dumps(record.figures), record.finished_at,
        )
        with self._transaction():
            self._db.execute(f"INSERT OR REPLACE INTO runs VALUES ({','.join('?' * len(row))})", row)

    def _transaction(self):
        db = self._db

        class _Tx:
            def __enter__(self_inner):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, exc_type, *rest):
                db.execute("ROLLBACK" if exc_type else "COMMIT")

        return _Tx()

    def has_ok(self, paper: str, experiment: str, config: dict[str, Any], seed: int, code_version: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM runs WHERE paper=? AND experiment=? AND config_hash=? AND seed=? AND code_version=? "
            "AND status='ok'",
            (paper, experiment, config_hash(config), seed, code_version),
        ).fetchone()
        return row is not None

    def records(self, paper: str | None = None, experiment: str | None = None, config: dict[str, Any] | None = None,
                code_version: str | None = None, status: str | None = None) -> list[RunRecord]:
        """Stored runs matching every given filter, oldest first."""
        clauses, args = [], []
        for column, value in (("paper", paper), ("experiment", experiment), ("code_version", code_version),
                              ("status", status)):
            if value is not None:
                clauses.append(f"{column}=?")
                args.append(value)
        if config is not None:
            clauses.append("config_hash=?")
            args.append(config_hash(config))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(
            "SELECT paper, experiment, config, seed, code_version, mode, status, metrics, seconds, peak_rss_mb, "
            f"versions, error, figures, finished_at FROM runs {where} ORDER BY finished_at, seed",
            args,
        ).fetchall()
        return list(self._to_records(rows))

    @staticmethod
    def _to_records(rows) -> Iterator[RunRecord]:
        for (paper, experiment, config, seed, code_version, mode, status, metrics, seconds, rss, versions, error,
             figures, finished_at) in rows:
            yield RunRecord(paper, experiment, json.loads(config), seed, code_version, mode, status,
                            json.loads(metrics), seconds or 0.0, rss or 0.0, json.loads(versions), error,
                            json.loads(figures), finished_at)

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
