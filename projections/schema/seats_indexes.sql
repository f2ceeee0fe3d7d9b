CREATE UNIQUE INDEX p_seats_key ON p_seats (address, valid_from);
CREATE INDEX p_seats_rig ON p_seats (rig, valid_from);
CREATE INDEX p_seat_log_address ON p_seat_log (address, seq);
CREATE INDEX p_rig_log_rig ON p_rig_log (rig, kind, seq);
