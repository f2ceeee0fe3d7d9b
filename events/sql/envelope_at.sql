SELECT kind, stream, occurred_at FROM events WHERE seq = :seq;
