-- One page of the sessions at :rev in the order they started (their
-- start_revision; the log's time never runs backwards, so this is also
-- the order of started_at), those that started after :after (0: from the
-- first), at most :limit (-1: every one). Each session's first version
-- (valid_from = start_revision) is found in the index of valid_from, then
-- its version at :rev: the read follows the page, not the sessions.
SELECT s.* FROM p_sessions f INDEXED BY p_sessions_from
JOIN p_sessions s ON s.session_id = f.session_id AND s.valid_from <= :rev AND (s.valid_to IS NULL OR s.valid_to > :rev)
WHERE f.valid_from <= :rev AND f.valid_from > :after AND f.valid_from = f.start_revision
ORDER BY f.valid_from LIMIT :limit + 0;
