SELECT stream FROM events WHERE seq >= :from AND seq <= :to ORDER BY seq;
