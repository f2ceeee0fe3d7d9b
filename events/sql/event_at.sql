SELECT seq, hash, occurred_at FROM events WHERE seq = :seq;
