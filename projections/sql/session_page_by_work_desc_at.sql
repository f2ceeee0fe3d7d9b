-- session_page_by_work_at.sql newest first: the sessions that started
-- before :before.
SELECT s.* FROM p_sessions f INDEXED BY p_sessions_work_start
JOIN p_sessions s ON s.session_id = f.session_id AND s.valid_from <= :rev AND (s.valid_to IS NULL OR s.valid_to > :rev)
WHERE f.work = :work AND f.start_revision <= :rev AND f.start_revision < :before AND f.valid_from = f.start_revision
ORDER BY f.start_revision DESC LIMIT :limit + 0;
