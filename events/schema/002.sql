-- 002: where an imported log came from. An imported project is a replica
-- of its origin: it keeps the origin's chain byte for byte, so the origin
-- is recorded here, beside the log, never as an event. At most one row.
CREATE TABLE origin (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  project_id  TEXT    NOT NULL,
  head_seq    INTEGER NOT NULL,
  head_hash   BLOB    NOT NULL,
  imported_at INTEGER NOT NULL
);
