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
CREATE VIRTUAL TABLE p_search_fts USING fts5(title, body, content='p_search', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
