DROP TABLE IF EXISTS p_sources;
DROP TABLE IF EXISTS p_work_items;
DROP TABLE IF EXISTS p_goals;
DROP TABLE IF EXISTS p_rules;
DROP TABLE IF EXISTS p_work_queue;
DROP TABLE IF EXISTS p_work_counts;
CREATE TABLE p_sources (
  path         TEXT    NOT NULL,
  adapter      TEXT    NOT NULL,
  role         TEXT    NOT NULL,
  content_hash TEXT    NOT NULL,
  options_hash TEXT    NOT NULL,
  size         INTEGER NOT NULL,
  mtime_ms     INTEGER NOT NULL,
  item_count   INTEGER NOT NULL,
  issues       TEXT    NOT NULL,
  indexed_at   INTEGER NOT NULL,
  valid_from   INTEGER NOT NULL,
  valid_to     INTEGER
);
CREATE TABLE p_work_items (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  ordinal     INTEGER NOT NULL,
  title       TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  priority    TEXT    NOT NULL,
  goal        TEXT    NOT NULL,
  item        TEXT    NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER
);
CREATE TABLE p_goals (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  title       TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  goal        TEXT    NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER
);
CREATE TABLE p_rules (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  strength    TEXT    NOT NULL,
  rule        TEXT    NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER
);
-- The head's work queues (not revision-stamped: a read at a past
-- revision evaluates the register as of then): each current work item
-- with its place in the order ready lists work (priority rank, key,
-- source, declaration) and the queue its readiness puts it in before
-- claims and seats are counted (ready, current, waiting, blocked,
-- closed, other), with the first reason it is not ready.
CREATE TABLE p_work_queue (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  ordinal     INTEGER NOT NULL,
  rank        INTEGER NOT NULL,
  queue       TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  organized   INTEGER NOT NULL,
  goal        TEXT    NOT NULL,
  PRIMARY KEY (key, source_path, ordinal)
) WITHOUT ROWID;
-- The head's counts of current work items: "items", "status:S",
-- "queue:Q", "organized:Q" and "goal:G".
CREATE TABLE p_work_counts (
  name TEXT    NOT NULL PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;
