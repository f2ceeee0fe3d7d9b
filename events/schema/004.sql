-- 004: the shared log a database caches. A project whose log is shared
-- (PostgreSQL) keeps a SQLite copy of it on each machine; this row says
-- the file is such a cache, of which project in which store, so that the
-- file is never taken for a log of its own (a write to it alone would leave
-- the shared log behind) when the manifest no longer says where the log
-- is. At most one row; none in a project's own log.
CREATE TABLE shared_store (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT    NOT NULL,
  store   TEXT    NOT NULL
);
