DROP TABLE IF EXISTS p_work_log;
CREATE TABLE p_work_log (
  work TEXT    NOT NULL,
  seq  INTEGER NOT NULL,
  kind TEXT    NOT NULL,
  PRIMARY KEY (work, seq)
) WITHOUT ROWID;
