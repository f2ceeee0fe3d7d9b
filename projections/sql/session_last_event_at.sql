SELECT seq, occurred_at FROM events INDEXED BY events_stream_seq WHERE stream = :stream AND seq <= :rev ORDER BY seq DESC LIMIT 1;
