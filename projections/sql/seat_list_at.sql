SELECT * FROM p_seats WHERE (:rig = '' OR rig = :rig) AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY rig, address;
