-- session_page_at.sql newest first: the sessions that started before
-- :before (beyond :rev: from the latest).
SELECT s.* FROM p_sessions f INDEXED BY p_sessions_from
JOIN p_sessions s ON s.session_id = f.session_id AND s.valid_from <= :rev AND (s.valid_to IS NULL OR s.valid_to > :rev)
WHERE f.valid_from <= :rev AND f.valid_from < :before AND f.valid_from = f.start_revision
ORDER BY f.valid_from DESC LIMIT :limit + 0;
