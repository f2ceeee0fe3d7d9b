DROP TABLE IF EXISTS p_event_refs;
CREATE TABLE p_event_refs (
  seq INTEGER NOT NULL,
  ref TEXT    NOT NULL
);
