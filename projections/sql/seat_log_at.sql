SELECT * FROM p_seat_log WHERE address = :address AND seq <= :rev ORDER BY seq;
