-- The closed active versions whose [valid_from, valid_to) contains :rev,
-- through the dyadic interval index (see session_active_count_at.sql).
WITH RECURSIVE lv(l) AS (SELECT 0 UNION ALL SELECT l + 1 FROM lv WHERE l < 62)
SELECT s.* FROM lv JOIN p_sessions s
  ON s.lvl = lv.l AND s.node = (:rev >> lv.l) AND s.status = 'active' AND s.valid_to IS NOT NULL AND s.valid_from <= :rev
WHERE lv.l = 0 OR ((:rev >> (lv.l - 1)) & 1) = 0
UNION ALL
SELECT s.* FROM lv JOIN p_sessions s
  ON s.lvl = lv.l AND s.node = (:rev >> lv.l) AND s.status = 'active' AND s.valid_to IS NOT NULL AND s.valid_to > :rev
WHERE lv.l > 0 AND ((:rev >> (lv.l - 1)) & 1) = 1;
