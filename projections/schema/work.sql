DROP TABLE IF EXISTS p_sources;
DROP TABLE IF EXISTS p_work_items;
DROP TABLE IF EXISTS p_goals;
DROP TABLE IF EXISTS p_rules;
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
