DROP TABLE IF EXISTS p_knowledge;
CREATE TABLE p_knowledge (
  work           TEXT    NOT NULL,
  item_id        TEXT    NOT NULL,
  kind           TEXT    NOT NULL,
  num            INTEGER NOT NULL,
  text           TEXT    NOT NULL,
  state          TEXT    NOT NULL,
  note           TEXT    NOT NULL,
  opened_seq     INTEGER NOT NULL,
  opened_session TEXT    NOT NULL,
  opened_at      INTEGER NOT NULL,
  closed_seq     INTEGER NOT NULL,
  closed_session TEXT    NOT NULL,
  confirmed_seq  INTEGER NOT NULL,
  supersedes     TEXT    NOT NULL,
  superseded_by  TEXT    NOT NULL,
  valid_from     INTEGER NOT NULL,
  valid_to       INTEGER
);
