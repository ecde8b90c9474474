"""SQLite results store: one row per (paper, experiment, config hash, seed, code version).

Each write is one transaction, so a run killed at any moment loses at most the experiment in flight,
and a later run skips what is stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_STORE = Path("results") / "icml24.sqlite"

SCHEMA_VERSION = 1  # PRAGMA user_version of a store this code writes; 0: a store from before versions (migrated)
# version 1: ``mode`` (the setting a run used: quick, full, smoke) is part of the key, so a quick and a full run of one
# configuration and seed are two rows (their configurations are equal when only the seed count differs)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
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
    PRIMARY KEY (paper, experiment, config_hash, seed, code_version, mode)
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
        check_store(self.path)  # a foreign or newer store is refused before anything is created or changed
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ValueError(f"cannot open the store {self.path}: {_reason(exc)}; pass another --store") from None
        try:
            _check_schema(self._db, self.path)  # again, now that it is open: nothing changed it in between
            self._db.execute("PRAGMA journal_mode=WAL")  # only a store that is ours is switched to WAL
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._create_or_migrate()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ValueError(f"{self.path} is not an icml24 results store ({exc}); pass another --store") from None
        except ValueError:
            self._db.close()
            raise

    def _create_or_migrate(self) -> None:
        """A new store gets the current schema; a version-0 store (no version, mode not in the key) is rebuilt with
        mode in the key, its rows kept; both in one transaction."""
        with self._transaction():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version == SCHEMA_VERSION:
                return
            if _table_columns(self._db):  # version 0 with the right columns (checked): rebuild its key
                self._db.execute(_SCHEMA.format(table="runs_migrated"))
                self._db.execute(f"INSERT OR REPLACE INTO runs_migrated ({', '.join(_COLUMNS)}) "
                                 f"SELECT {', '.join(_COLUMNS)} FROM runs")
                self._db.execute("DROP TABLE runs")
                self._db.execute("ALTER TABLE runs_migrated RENAME TO runs")
            else:
                self._db.execute(_SCHEMA.format(table="runs"))
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

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

    def has_ok(self, paper: str, experiment: str, config: dict[str, Any], seed: int, code_version: str,
               mode: str | None = None) -> bool:
        """Whether an ``ok`` run of this key is stored (of the setting ``mode`` when given)."""
        row = self._db.execute(
            "SELECT 1 FROM runs WHERE paper=? AND experiment=? AND config_hash=? AND seed=? AND code_version=? "
            "AND status='ok'" + (" AND mode=?" if mode is not None else ""),
            (paper, experiment, config_hash(config), seed, code_version) + ((mode,) if mode is not None else ()),
        ).fetchone()
        return row is not None

    def records(self, paper: str | None = None, experiment: str | None = None, config: dict[str, Any] | None = None,
                code_version: str | None = None, status: str | None = None, mode: str | None = None
                ) -> list[RunRecord]:
        """Stored runs matching every given filter, oldest first (``mode``: the setting the runs used)."""
        clauses, args = [], []
        for column, value in (("paper", paper), ("experiment", experiment), ("code_version", code_version),
                              ("status", status), ("mode", mode)):
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


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _table_columns(db: sqlite3.Connection) -> list[str]:
    return [row[1] for row in db.execute("PRAGMA table_info(runs)")]


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Raise ``ValueError`` (one line) unless ``db`` is empty or an icml24 store this code can read; reads only."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    columns = _table_columns(db)
    if version > SCHEMA_VERSION:
        raise ValueError(f"{path} is an icml24 store of schema version {version}, newer than this icml24 reads "
                         f"(version {SCHEMA_VERSION}): upgrade icml24, or pass another --store")
    if version < 0 or (version and not columns):
        raise ValueError(f"{path} has schema version {version}, which no icml24 wrote; pass another --store")
    if columns and columns != _COLUMNS:
        raise ValueError(f"{path} holds a 'runs' table with other columns than an icml24 results store "
                         f"(expected {', '.join(_COLUMNS)}); pass another --store")
    if not columns and version == 0:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        if tables:
            raise ValueError(f"{path} is an SQLite database of another program (tables: {', '.join(tables[:5])}), "
                             "not an icml24 results store; pass another --store")


def check_store(path: str | Path) -> None:
    """Raise ``ValueError`` (one line) when ``path`` cannot be an icml24 store, creating and changing nothing.

    A missing file needs a folder it can be made in (the nearest existing parent folder writable); an existing one
    must be an icml24 store of a version this code reads (only read: a foreign file keeps its journal mode).
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise ValueError(f"--store {path} is a folder; give a file path such as {path / 'icml24.sqlite'}")
        if not path.exists():
            check_writable_folder(path, "--store")
            return
        uri = f"{path.resolve().as_uri()}?mode=rw"  # never creates the file; ro would leave -wal/-shm files behind
    except OSError as exc:  # a name too long for the file system, a loop of links
        raise ValueError(f"--store {_short(path)} cannot be used: {_reason(exc)}") from None
    try:
        db = sqlite3.connect(uri, uri=True, timeout=60)
    except sqlite3.Error as exc:
        raise ValueError(f"cannot open the store {path}: {exc}; pass another --store") from None
    try:
        _check_schema(db, path)
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path} is not an icml24 results store ({exc}); pass another --store") from None
    finally:
        db.close()


def check_writable_folder(path: Path, what: str) -> None:
    """Raise ``ValueError`` unless ``path`` could be created: its nearest existing ancestor is a writable folder.
    Creates nothing (a refused command leaves no folder behind)."""
    try:
        path.exists()  # raises for a name too long for the file system
        ancestor = path.parent
        while not ancestor.exists():
            if ancestor == ancestor.parent:
                break
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise ValueError(f"cannot create {what} {_short(path)}: {ancestor} is a file, not a folder")
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise ValueError(f"cannot write {what} {_short(path)}: the folder {ancestor} is not writable")
    except OSError as exc:
        raise ValueError(f"{what} {_short(path)} cannot be used: {_reason(exc)}") from None


def _short(path: Path, limit: int = 120) -> str:
    """A path for a one-line message (an over-long one is cut in its middle)."""
    text = str(path)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-limit // 2:]} ({len(text)} characters)"
