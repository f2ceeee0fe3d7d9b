INSERT INTO p_seats (address, rig, data, valid_from, valid_to) VALUES (:address, :rig, :data, :valid_from, :valid_to);
