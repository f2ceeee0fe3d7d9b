DROP TABLE IF EXISTS p_event_refs;
CREATE TABLE p_event_refs (
  ref TEXT    NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (ref, seq)
) WITHOUT ROWID;
