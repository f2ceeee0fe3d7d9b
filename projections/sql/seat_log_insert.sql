INSERT INTO p_seat_log (seq, address, rig, kind, data) VALUES (:seq, :address, :rig, :kind, :data);
