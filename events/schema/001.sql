-- 001: the event log, request idempotency records and projection bookkeeping.
CREATE TABLE events (
  seq            INTEGER PRIMARY KEY,
  id             TEXT    NOT NULL UNIQUE,
  kind           TEXT    NOT NULL,
  stream         TEXT    NOT NULL,
  stream_version INTEGER NOT NULL,
  occurred_at    INTEGER NOT NULL,
  actor          TEXT    NOT NULL,
  request_id     TEXT    UNIQUE,
  payload        TEXT    NOT NULL,
  prev_hash      BLOB    NOT NULL,
  hash           BLOB    NOT NULL
);

CREATE INDEX events_stream_seq ON events (stream, seq);

CREATE TRIGGER events_seq_gapless BEFORE INSERT ON events
WHEN NEW.seq IS NOT COALESCE((SELECT MAX(seq) FROM events), 0) + 1
BEGIN
  SELECT RAISE(ABORT, 'events: seq must be exactly project_revision + 1');
END;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'events: the log is append-only, UPDATE is rejected');
END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'events: the log is append-only, DELETE is rejected');
END;

CREATE TABLE requests (
  request_id  TEXT    PRIMARY KEY,
  fingerprint TEXT    NOT NULL,
  first_seq   INTEGER NOT NULL,
  last_seq    INTEGER NOT NULL,
  result      TEXT    NOT NULL
);

CREATE TABLE projections (
  name     TEXT    PRIMARY KEY,
  version  INTEGER NOT NULL,
  last_seq INTEGER NOT NULL
);
