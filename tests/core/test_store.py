"""The SQLite results store."""

from pathlib import Path

import pytest

from icml24.core.store import RunRecord, Store

ROOT = Path(__file__).resolve().parents[2]


def test_store_roundtrip_and_replace(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    record = RunRecord("p", "e", {"a": 1}, 0, "v1", "quick", "ok", {"m": 1.5}, 2.0, 10.0, {"numpy": "x"})
    store.put(record)
    store.put(record)  # same key: replaced, not duplicated
    assert store.count() == 1
    assert store.has_ok("p", "e", {"a": 1}, 0, "v1")
    assert not store.has_ok("p", "e", {"a": 2}, 0, "v1")
    (back,) = store.records("p")
    assert back.metrics == {"m": 1.5} and back.config == {"a": 1}


def test_store_rejects_folder_and_garbage(tmp_path):
    with pytest.raises(ValueError, match="is a folder"):
        Store(tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="not an icml24 results store"):
        Store(junk)


def test_a_runs_table_with_other_columns_is_refused(tmp_path):
    import sqlite3

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, payload TEXT)")
    with pytest.raises(ValueError, match="other columns"):
        Store(other)
