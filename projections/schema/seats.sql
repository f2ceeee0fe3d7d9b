DROP TABLE IF EXISTS p_seats;
DROP TABLE IF EXISTS p_seat_sessions;
DROP TABLE IF EXISTS p_seat_log;
DROP TABLE IF EXISTS p_rig_log;
CREATE TABLE p_seats (
  address    TEXT    NOT NULL,
  rig        TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  valid_from INTEGER NOT NULL,
  valid_to   INTEGER
);
CREATE TABLE p_seat_sessions (
  session_id TEXT    NOT NULL PRIMARY KEY,
  address    TEXT    NOT NULL,
  seq        INTEGER NOT NULL
);
CREATE TABLE p_seat_log (
  seq        INTEGER NOT NULL PRIMARY KEY,
  address    TEXT    NOT NULL,
  rig        TEXT    NOT NULL,
  kind       TEXT    NOT NULL,
  data       TEXT    NOT NULL
);
CREATE TABLE p_rig_log (
  seq        INTEGER NOT NULL PRIMARY KEY,
  rig        TEXT    NOT NULL,
  kind       TEXT    NOT NULL,
  ref        TEXT    NOT NULL,
  data       TEXT    NOT NULL
);
