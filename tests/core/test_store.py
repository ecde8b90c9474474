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


def test_a_new_store_records_its_schema_version_and_a_newer_one_is_refused(tmp_path):
    import sqlite3

    from icml24.core.store import SCHEMA_VERSION

    path = tmp_path / "s.sqlite"
    Store(path).close()
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 1
        con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(ValueError, match=f"schema version {SCHEMA_VERSION + 1}, newer than this icml24 reads"):
        Store(path)
    with sqlite3.connect(path) as con:  # refused, not rewritten
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_a_store_from_before_versions_is_migrated_with_its_rows(tmp_path):
    import sqlite3

    from icml24.core.store import _COLUMNS, SCHEMA_VERSION

    path = tmp_path / "old.sqlite"
    columns = ", ".join(f"{c} {'INTEGER' if c == 'seed' else 'TEXT'}" for c in _COLUMNS)
    with sqlite3.connect(path) as con:  # version 0: no user_version, mode not in the key
        con.execute(f"CREATE TABLE runs ({columns}, PRIMARY KEY (paper, experiment, config_hash, seed, code_version))")
        con.execute("INSERT INTO runs VALUES ('p', 'e', 'h', 0, 'v1', 'quick', '{}', 'ok', '{\"m\": 1.0}', 1.0, 1.0, "
                    "'{}', '', '[]', 1.0)")
    with Store(path) as store:
        (back,) = store.records("p")
        assert back.metrics == {"m": 1.0} and back.mode == "quick"
        store.put(RunRecord("p", "e", {}, 0, "v1", "full", "ok", {"m": 2.0}))  # same key but the setting: a new row
        assert store.count() == 2
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_quick_and_a_full_run_of_one_configuration_are_two_rows(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        for mode, value in (("quick", 1.0), ("full", 2.0)):
            store.put(RunRecord("p", "e", {"a": 1}, 0, "v1", mode, "ok", {"m": value}))
        assert store.count() == 2
        assert store.has_ok("p", "e", {"a": 1}, 0, "v1", "quick") and not store.has_ok("p", "e", {"a": 1}, 0, "v1",
                                                                                        "smoke")
        assert [r.metrics["m"] for r in store.records("p", mode="full")] == [2.0]


def test_a_foreign_store_is_refused_before_its_journal_mode_is_changed(tmp_path):
    import sqlite3

    for name, schema in (("other-columns.sqlite", "CREATE TABLE runs (id INTEGER PRIMARY KEY, payload TEXT)"),
                         ("another-program.sqlite", "CREATE TABLE accounts (id INTEGER PRIMARY KEY)")):
        path = tmp_path / name
        with sqlite3.connect(path) as con:
            con.execute(schema)
        with pytest.raises(ValueError, match="other columns|another program"):
            Store(path)
        with sqlite3.connect(path) as con:
            assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched to WAL
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(name)) == [name]


def test_an_over_long_store_path_is_one_line_and_creates_nothing(tmp_path):
    from icml24.core.store import check_store

    path = tmp_path / ("a" * 300) / "s.sqlite"
    for call in (check_store, Store):
        with pytest.raises(ValueError, match="File name too long") as info:
            call(path)
        assert "\n" not in str(info.value) and len(str(info.value)) < 300
    assert not any(tmp_path.iterdir())
