-- session_page_at.sql for the sessions of one work item.
SELECT * FROM p_sessions
WHERE work = :work AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev)
  AND (:first OR (started_at, start_revision, session_id) > (:started_at, :start_revision, :session_id))
ORDER BY started_at, start_revision, session_id LIMIT :limit;
