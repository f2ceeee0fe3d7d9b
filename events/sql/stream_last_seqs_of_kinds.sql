SELECT
  (SELECT seq FROM events WHERE stream = :stream AND kind = :kind_a ORDER BY seq DESC LIMIT 1) AS seq_a,
  (SELECT seq FROM events WHERE stream = :stream AND kind = :kind_b ORDER BY seq DESC LIMIT 1) AS seq_b;
