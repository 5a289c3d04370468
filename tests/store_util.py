"""Read-only looks into a store's SQLite file, for tests that check how
bodies are stored (docs/storage-format.md, "Delta bodies")."""
import sqlite3


def body_rows(db):
    """(splice rows, bytes stored in body rows, bytes of the whole bodies)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT sum(base_id < 0), sum(length(bytes)), sum(size) FROM bodies").fetchone()
    finally:
        con.close()
