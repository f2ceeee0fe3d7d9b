SELECT stream FROM events WHERE seq >= :from AND seq <= :to AND stream >= :prefix AND stream < :prefix_end;
