DROP VIEW IF EXISTS p_search_content;
DROP VIEW IF EXISTS p_search_rest;
DROP VIEW IF EXISTS p_search_head;
DROP TABLE IF EXISTS p_search_df;
DROP TABLE IF EXISTS p_search_tok_v;
-- A full-text index whose config table is gone cannot be dropped (its
-- constructor fails): one put back first (fts5 file format 4) lets the
-- drop run, and one left behind where there was no index is dropped after
-- (p_search_fts, p_search_head_fts and the tokenizer table p_search_tok
-- alike).
CREATE TABLE IF NOT EXISTS p_search_fts_config(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR IGNORE INTO p_search_fts_config (k, v) VALUES ('version', 4);
DROP TABLE IF EXISTS p_search_fts;
DROP TABLE IF EXISTS p_search_fts_config;
CREATE TABLE IF NOT EXISTS p_search_head_fts_config(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR IGNORE INTO p_search_head_fts_config (k, v) VALUES ('version', 4);
DROP TABLE IF EXISTS p_search_head_fts;
DROP TABLE IF EXISTS p_search_head_fts_config;
CREATE TABLE IF NOT EXISTS p_search_tok_config(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR IGNORE INTO p_search_tok_config (k, v) VALUES ('version', 4);
DROP TABLE IF EXISTS p_search_tok;
DROP TABLE IF EXISTS p_search_tok_config;
DROP TABLE IF EXISTS p_search_term;
DROP TABLE IF EXISTS p_search_term_doc;
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
-- Two full-text indexes: p_search_head_fts holds the work items' open
-- versions (the register, ranked ahead in p_search_term), p_search_fts
-- every other version (history): a search at the head matches history
-- without reading the register's matches.
CREATE VIEW p_search_rest AS
SELECT id, title, body FROM p_search WHERE kind != 'work' OR valid_to IS NOT NULL;
CREATE VIEW p_search_head AS
SELECT id, title, body FROM p_search WHERE kind = 'work' AND valid_to IS NULL;
CREATE VIRTUAL TABLE p_search_fts USING fts5(title, body, content='p_search_rest', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE p_search_head_fts USING fts5(title, body, content='p_search_head', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
-- The words of the work items' open versions, each with its impact
-- (search_rank.go), in rank order: a word's rows best first (a search
-- at the head reads a word's first rows, not all). A register's items,
-- not history (checkpoints, loops, closed versions are scored when a
-- search finds them). p_search_term_doc holds each version's words and
-- impacts as one JSON object, for a lookup by version and to remove
-- them.
CREATE TABLE p_search_term (
  term   TEXT    NOT NULL,
  impact INTEGER NOT NULL,
  id     INTEGER NOT NULL,
  PRIMARY KEY (term, impact DESC, id DESC)
) WITHOUT ROWID;
CREATE TABLE p_search_term_doc (
  id      INTEGER PRIMARY KEY,
  impacts TEXT    NOT NULL
);
-- How many open work items hold each word (n), and under '' how many
-- open work items there are: the words' weights.
CREATE TABLE p_search_df (
  term TEXT    PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;
-- The tokenizer of p_search_term for text beyond ASCII (ASCII is read in
-- Go, as this reads it): one version's text is put in, its words read
-- back (p_search_tok_v), then it is emptied. Same tokenizer as
-- p_search_fts, so a word is the same word in both.
CREATE VIRTUAL TABLE p_search_tok USING fts5(title, body, content='', columnsize=0, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE p_search_tok_v USING fts5vocab(p_search_tok, 'instance');
