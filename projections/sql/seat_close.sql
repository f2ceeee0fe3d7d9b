UPDATE p_seats SET valid_to = :seq WHERE address = :address AND valid_to IS NULL;
