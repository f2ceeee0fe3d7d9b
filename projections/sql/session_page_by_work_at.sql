-- session_page_at.sql for the sessions of one work item, through the
-- index of (work, start_revision).
SELECT s.* FROM p_sessions f INDEXED BY p_sessions_work_start
JOIN p_sessions s ON s.session_id = f.session_id AND s.valid_from <= :rev AND (s.valid_to IS NULL OR s.valid_to > :rev)
WHERE f.work = :work AND f.start_revision <= :rev AND f.start_revision > :after AND f.valid_from = f.start_revision
ORDER BY f.start_revision LIMIT :limit + 0;
