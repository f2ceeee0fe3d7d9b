DROP TABLE IF EXISTS p_work_log;
CREATE TABLE p_work_log (
  seq  INTEGER NOT NULL PRIMARY KEY,
  work TEXT    NOT NULL,
  kind TEXT    NOT NULL
);
