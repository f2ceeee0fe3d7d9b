SELECT * FROM p_seats WHERE address = :address AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
