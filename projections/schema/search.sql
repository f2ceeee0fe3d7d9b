DROP TABLE IF EXISTS p_search_fts;
DROP TABLE IF EXISTS p_search;
CREATE TABLE p_search (
  id         INTEGER PRIMARY KEY,
  doc        TEXT    NOT NULL,
  kind       TEXT    NOT NULL,
  ref        TEXT    NOT NULL,
  work       TEXT    NOT NULL,
  session_id TEXT    NOT NULL,
  source     TEXT    NOT NULL,
  state      TEXT    NOT NULL,
  seq        INTEGER NOT NULL,
  title      TEXT    NOT NULL,
  body       TEXT    NOT NULL,
  valid_from INTEGER NOT NULL,
  valid_to   INTEGER
);
CREATE UNIQUE INDEX p_search_key ON p_search (doc, valid_from);
CREATE INDEX p_search_open ON p_search (doc) WHERE valid_to IS NULL;
CREATE INDEX p_search_source ON p_search (source) WHERE valid_to IS NULL AND source != '';
CREATE VIRTUAL TABLE p_search_fts USING fts5(title, body, content='p_search', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
