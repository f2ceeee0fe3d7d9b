DROP TABLE IF EXISTS p_sources;
DROP TABLE IF EXISTS p_work_items;
DROP TABLE IF EXISTS p_goals;
DROP TABLE IF EXISTS p_rules;
CREATE TABLE p_sources (
  path         TEXT    NOT NULL,
  adapter      TEXT    NOT NULL,
  role         TEXT    NOT NULL,
  content_hash TEXT    NOT NULL,
  size         INTEGER NOT NULL,
  mtime_ms     INTEGER NOT NULL,
  item_count   INTEGER NOT NULL,
  issues       TEXT    NOT NULL,
  indexed_at   INTEGER NOT NULL,
  valid_from   INTEGER NOT NULL,
  valid_to     INTEGER,
  PRIMARY KEY (path, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_sources_current ON p_sources (path) WHERE valid_to IS NULL;
CREATE INDEX p_sources_from ON p_sources (valid_from);
CREATE TABLE p_work_items (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  title       TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  priority    TEXT    NOT NULL,
  goal        TEXT    NOT NULL,
  item        TEXT    NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER,
  PRIMARY KEY (key, source_path, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_work_items_current ON p_work_items (source_path, key) WHERE valid_to IS NULL;
CREATE INDEX p_work_items_from ON p_work_items (valid_from);
CREATE TABLE p_goals (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  title       TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  goal        TEXT    NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER,
  PRIMARY KEY (key, source_path, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_goals_current ON p_goals (source_path, key) WHERE valid_to IS NULL;
CREATE INDEX p_goals_from ON p_goals (valid_from);
CREATE TABLE p_rules (
  key         TEXT    NOT NULL,
  source_path TEXT    NOT NULL,
  strength    TEXT    NOT NULL,
  rule        TEXT    NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER,
  PRIMARY KEY (key, source_path, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_rules_current ON p_rules (source_path, key) WHERE valid_to IS NULL;
CREATE INDEX p_rules_from ON p_rules (valid_from);
