-- Sessions active at :rev: open active versions created by :rev, plus the
-- closed active versions whose [valid_from, valid_to) contains :rev, found
-- through the dyadic interval index (lvl, node): one index seek per level.
WITH RECURSIVE lv(l) AS (SELECT 0 UNION ALL SELECT l + 1 FROM lv WHERE l < 62)
SELECT
  (SELECT count(*) FROM p_sessions WHERE status = 'active' AND valid_to IS NULL AND valid_from <= :rev)
  + (SELECT count(*) FROM lv JOIN p_sessions s
       ON s.lvl = lv.l AND s.node = (:rev >> lv.l) AND s.status = 'active' AND s.valid_to IS NOT NULL AND s.valid_from <= :rev
     WHERE lv.l = 0 OR ((:rev >> (lv.l - 1)) & 1) = 0)
  + (SELECT count(*) FROM lv JOIN p_sessions s
       ON s.lvl = lv.l AND s.node = (:rev >> lv.l) AND s.status = 'active' AND s.valid_to IS NOT NULL AND s.valid_to > :rev
     WHERE lv.l > 0 AND ((:rev >> (lv.l - 1)) & 1) = 1) AS n;
