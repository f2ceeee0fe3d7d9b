SELECT seq, hash, occurred_at FROM events ORDER BY seq DESC LIMIT 1;
