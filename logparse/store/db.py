"""Opening the store: where it lives, locking, validation and migrations.

Where: an explicit ``--db PATH`` (or ``Store(path)``) wins, then ``$LOGPARSE_DB``, then
``$XDG_DATA_HOME/logparse/history.duckdb`` (``~/.local/share/logparse/history.duckdb``).

DuckDB lets one process write a database file at a time (and a writer excludes readers
in other processes).  Opening retries with backoff for up to ``lock_timeout`` seconds,
then raises :class:`StoreBusy`.  A file that is not a DuckDB database, is empty or
truncated, or that DuckDB cannot read, raises :class:`StoreCorrupt`; logparse never
writes to such a file.  A store written by a newer logparse (schema version above
:data:`~logparse.store.schema.SCHEMA_VERSION`) raises :class:`StoreTooNew`.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path

from logparse.files import private_dir
from logparse.store import schema, sequence

DEFAULT_LOCK_TIMEOUT = 30.0


class StoreError(Exception):
    """A problem with the history store; the CLI exits with code 3."""


class StoreBusy(StoreError):
    """Another process holds the store (a writer, or a reader while this one would write)."""

    def __init__(self, message: str, holder: str = "") -> None:
        super().__init__(message)
        #: " (held by PID N)" when DuckDB says, else ""
        self.holder = holder


class StoreCorrupt(StoreError):
    pass


class StoreTooNew(StoreError):
    pass


class StoreMissing(StoreError):
    pass


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "logparse" / "history.duckdb"


def resolve_db_path(explicit: str | os.PathLike | None = None) -> Path:
    """``explicit`` (``--db``) > ``$LOGPARSE_DB`` > the user data directory."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("LOGPARSE_DB")
    if env:
        return Path(env).expanduser()
    return default_db_path()


#: DuckDB's file header: 8 bytes of checksum, then the magic.
_MAGIC_OFFSET, _MAGIC = 8, b"DUCK"


def check_file(path: Path) -> bool:
    """True when ``path`` exists and looks like a DuckDB file; raises when it exists and does not."""
    if not path.exists():
        return False
    if path.is_dir():
        raise StoreCorrupt(f"{path} is a directory, not a store file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store ({exc.strerror or exc})") from None
    if not head:
        raise StoreCorrupt(f"{path} is empty: not a logparse store (remove it, or use another --db)")
    if head[_MAGIC_OFFSET : _MAGIC_OFFSET + 4] != _MAGIC:
        raise StoreCorrupt(
            f"{path} is not a DuckDB database, so not a logparse store; it was left untouched (use another --db)"
        )
    return True


def _is_lock_error(exc: Exception) -> bool:
    msg = str(exc)
    return "lock" in msg.lower() and ("Conflicting" in msg or "Could not set lock" in msg)


def connect_file(path: Path, read_only: bool, lock_timeout: float, config: dict | None):
    import duckdb

    deadline = time.monotonic() + max(0.0, lock_timeout)
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=config or {})
        except duckdb.Error as exc:
            if _is_lock_error(exc):
                now = time.monotonic()
                if now >= deadline:
                    holder = ""
                    msg = str(exc)
                    if "PID" in msg:
                        holder = " (held by PID " + msg.split("PID", 1)[1].strip(" )").split(")")[0] + ")"
                    raise StoreBusy(
                        f"store is busy: another process is using {path}{holder}; gave up after "
                        f"{lock_timeout:g} s (--lock-timeout)",
                        holder,
                    ) from None
                time.sleep(min(delay, max(0.0, deadline - now)) * (0.75 + random.random() / 2))
                delay = min(delay * 2, 1.0)
                continue
            if _being_created(path, exc) and time.monotonic() < deadline:
                time.sleep(0.05 + random.random() / 10)  # another process is writing its first blocks
                continue
            raise StoreCorrupt(
                f"{path}: DuckDB cannot open this file ({short_error(exc)}); it was left untouched"
            ) from None


#: What to do with a store whose file is damaged (said by every command that meets the damage).
REPAIR_HINT = (
    "run 'logparse doctor' to see which table or index; to rebuild the store, 'logparse export DIR' "
    "(it reads the tables, not the indexes) and 'logparse ingest --db NEW.duckdb DIR'"
)


def root_error(exc: BaseException) -> BaseException:
    """The error behind DuckDB's "Current transaction is aborted" (raised by whatever ran after the
    first failure in a transaction, e.g. a cleanup): the first failure, which says what happened."""
    seen = 0
    while "transaction is aborted" in str(exc) and exc.__context__ is not None and seen < 10:
        exc = exc.__context__
        seen += 1
    return exc


def damage(path: Path, exc: BaseException) -> StoreCorrupt | None:
    """A :class:`StoreCorrupt` saying what to do when ``exc`` (or the error behind it) is the
    store's file being damaged (a block whose checksum does not match, a block that cannot be
    read), else None."""
    import duckdb

    root = root_error(exc)
    text = str(root)
    if isinstance(root, duckdb.Error) and ("Corrupt database file" in text or "does not match stored checksum" in text):
        return StoreCorrupt(f"{path}: the store file is damaged ({short_error(root)}): {REPAIR_HINT}")
    return None


def _being_created(path: Path, exc: Exception) -> bool:
    """DuckDB finds the file invalid while it was written a moment ago: another process is creating
    the store (its headers are not all there yet), so opening is tried again, as for a lock."""
    if "not a valid DuckDB database file" not in str(exc):
        return False
    try:
        return time.time() - path.stat().st_mtime < 5.0
    except OSError:
        return False


def short_error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def schema_version_of(con) -> int | None:
    """Schema version, 0 for an empty database, None when it is some other DuckDB database.
    (Outside a transaction: a store without ``schema_version`` fails the first query.)"""
    import duckdb

    try:  # a store: one query (every read command opens the store)
        row = con.execute("SELECT max(version) FROM main.schema_version").fetchall()[0]
        return int(row[0]) if row and row[0] is not None else 0
    except duckdb.CatalogException:
        pass
    tables = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
    return 0 if not tables[0][0] else None


@contextmanager
def transaction(con) -> Iterator[None]:
    """One transaction: committed when the block ends, rolled back on any exception
    (KeyboardInterrupt included), which is then re-raised."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        with suppress(Exception):  # the connection itself is gone: nothing was committed
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def migrate(con, to: int | None = None) -> int:
    """Apply the missing migrations (each in its own transaction); returns the new version."""
    from logparse import __version__

    target = schema.SCHEMA_VERSION if to is None else to
    current = schema_version_of(con)
    if current is None:
        raise StoreCorrupt(
            "this DuckDB database is not a logparse store (it has other tables and no "
            "schema_version); it was left untouched"
        )
    if current == 0 and target == schema.SCHEMA_VERSION:
        # A new store of the current version: its tables in one step (schema.create_current), one commit
        with transaction(con):
            schema.create_current(con)
            now = datetime.now()
            for v in range(1, target + 1):
                con.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [v, now, __version__])
        return target
    # An older version (tests build them) a migration at a time, in one transaction when the store is
    # new (a commit is a write of DuckDB's log); an existing store moves a version at a time.
    steps = (
        [range(current + 1, target + 1)] if current == 0 else [range(v, v + 1) for v in range(current + 1, target + 1)]
    )
    for versions in steps:
        with transaction(con):
            for v in versions:
                _apply_migration(con, v, __version__, derived=current > 0)
    return max(current, target)


def _apply_migration(con, v: int, version: str, derived: bool) -> None:
    """Migration ``v``; ``derived``: the store holds launches whose derived tables the last one
    recomputes (a new store has none)."""
    schema.MIGRATIONS[v - 1](con)
    if v == schema.SCHEMA_VERSION:  # the views over the tables the last migration left
        schema.finish_migrations(con)
        if derived:  # recomputed with this version's definitions (the views they read may have changed)
            sequence.refresh(con)
    con.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [v, datetime.now(), version])


def _check_version(path: Path, version: int | None) -> int:
    """The store's schema version, once it is known to be one this logparse can use."""
    if version is None:
        raise StoreCorrupt(
            f"{path} is a DuckDB database but not a logparse store (no schema_version table); "
            "it was left untouched (use another --db)"
        )
    if version > schema.SCHEMA_VERSION:
        raise StoreTooNew(
            f"{path} was written by a newer logparse (store schema version {version}; this logparse "
            f"knows up to {schema.SCHEMA_VERSION}): upgrade logparse to use it"
        )
    return version


#: Store files this process has validated (read-only) and brought to the current schema.
_VALIDATED: set[str] = set()


def open_store(
    path: Path,
    *,
    write: bool,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    create: bool = False,
    safe_read: bool = False,
    settings: dict[str, str] | None = None,
):
    """A DuckDB connection to a valid store of the current schema version.

    ``write``: a read-write connection (migrates an older store, creates a missing one when
    ``create``).  Otherwise a read-only one; ``safe_read`` also disables file access from SQL
    (for user queries).  An older store is migrated first, which needs the write lock.
    ``settings``: DuckDB settings of the connection (a query's bounds, :mod:`.bounds`).
    """
    con = _open_store(
        path, write=write, lock_timeout=lock_timeout, create=create, safe_read=safe_read, settings=settings
    )
    if write and settings:
        try:
            for name, value in settings.items():  # our own values: names and sizes, never user text
                con.execute(f"SET {name} = '{value}'")
        except BaseException:
            con.close()
            raise
    return con


def _open_store(path: Path, *, write: bool, lock_timeout: float, create: bool, safe_read: bool, settings):
    exists = check_file(path)
    if exists:
        con = _reopen_validated(path, write=write, lock_timeout=lock_timeout, safe_read=safe_read, settings=settings)
        if con is not None:
            return con
        if write and not Path(f"{path}.wal").exists():
            # Without a log to replay, DuckDB writes nothing to a file it only opens and reads: the
            # writer validates on its own connection (one open, not two)
            return _open_migrated(path, lock_timeout)
        # Validate read-only first: nothing is written to a file we cannot read.  A reader keeps
        # that connection when the store is of the current version (one open, not two).
        con, version = _read_version(path, lock_timeout, keep=None if write else _read_config(safe_read, settings))
        if con is not None:
            _VALIDATED.add(str(path.resolve()))
            return con
    else:
        if not create:
            raise StoreMissing(f"no history store at {path} yet: run 'logparse ingest' first (or give --db)")
        try:
            private_dir(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {path.parent}: {exc.strerror or exc}") from None
        version = 0
    if write or version < schema.SCHEMA_VERSION:
        new = not path.exists()
        con = _open_migrated(path, lock_timeout)
        if new:
            _private_store_file(path)
        if write:
            return con
        con.close()
    else:
        _VALIDATED.add(str(path.resolve()))
    return connect_file(path, True, lock_timeout, _read_config(safe_read, settings))


def _private_store_file(path: Path) -> None:
    """A new store is its owner's only (DuckDB creates it with the process's umask; the command line
    sets a private one, a library caller may not have): the user's umask may still ask for less."""
    umask = os.umask(0)
    os.umask(umask)
    with suppress(OSError):
        os.chmod(path, 0o600 & ~umask)


def _read_config(safe_read: bool, settings: dict[str, str] | None = None) -> dict:
    """DuckDB settings of a read-only connection (``safe_read``: no file access from SQL, and
    the configuration locked; ``settings`` first, as the configuration is then fixed)."""
    config: dict = dict(settings or {})
    if safe_read:
        config.update(enable_external_access=False, lock_configuration=True)
    return config


def _reopen_validated(path: Path, *, write: bool, lock_timeout: float, safe_read: bool, settings=None):
    """A connection to a store this process validated before, if it is still of the current
    schema version; else None (and it is no longer taken as validated)."""
    import duckdb

    key = str(path.resolve())
    if key not in _VALIDATED:
        return None
    con = connect_file(path, not write, lock_timeout, None if write else _read_config(safe_read, settings) or None)
    try:
        version = schema_version_of(con)
    except duckdb.Error as exc:
        con.close()
        raise StoreCorrupt(f"{path}: the store cannot be read ({short_error(exc)}); it was left untouched") from None
    if version == schema.SCHEMA_VERSION:
        return con
    con.close()
    _VALIDATED.discard(key)
    return None


def _read_version(path: Path, lock_timeout: float, keep: dict | None = None):
    """(connection, schema version) of an existing store, read without the write lock; refuses a
    file that is not a store, or a store of a newer logparse.  The read-only connection (opened
    with the settings ``keep``) is given back when ``keep`` is not None and the store is of the
    current version, else closed (None)."""
    con = connect_file(path, True, lock_timeout, keep or None)
    try:
        version = _check_version(path, _version_read(con, path))
    except BaseException:
        con.close()
        raise
    if keep is not None and version == schema.SCHEMA_VERSION:
        return con, version
    con.close()
    return None, version


def _version_read(con, path: Path) -> int | None:
    """The store's schema version (:func:`schema_version_of`); a file DuckDB cannot read is refused."""
    import duckdb

    try:
        return schema_version_of(con)
    except duckdb.Error as exc:
        raise StoreCorrupt(f"{path}: the store cannot be read ({short_error(exc)}); it was left untouched") from None


def _open_migrated(path: Path, lock_timeout: float):
    """A read-write connection to the store, brought to the current schema version (created when new)."""
    import duckdb

    con = connect_file(path, False, lock_timeout, None)
    try:
        version = _check_version(path, _version_read(con, path))
        if version < schema.SCHEMA_VERSION:
            migrate(con)
        _VALIDATED.add(str(path.resolve()))
    except duckdb.Error as exc:
        con.close()
        raise StoreCorrupt(f"{path}: the store cannot be read ({short_error(exc)})") from None
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def connection(
    path: Path,
    *,
    write: bool,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    create: bool = False,
    safe_read: bool = False,
    settings: dict[str, str] | None = None,
) -> Iterator:
    import duckdb

    con = open_store(
        path, write=write, lock_timeout=lock_timeout, create=create, safe_read=safe_read, settings=settings
    )
    try:
        yield con
    except duckdb.Error as exc:
        damaged = damage(path, exc)
        if damaged is not None:
            raise damaged from None
        if isinstance(exc, duckdb.IOException):
            raise StoreCorrupt(f"{path}: reading the store failed ({short_error(exc)})") from None
        raise
    finally:
        con.close()
