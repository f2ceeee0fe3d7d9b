-- One page of the sessions at :rev in the order session list gives them
-- (started_at, start_revision, session_id), after the place
-- (:started_at, :start_revision, :session_id) unless :first; at most
-- :limit rows (-1: every one). SQLite keeps only :limit rows in its sorter.
SELECT * FROM p_sessions
WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev)
  AND (:first OR (started_at, start_revision, session_id) > (:started_at, :start_revision, :session_id))
ORDER BY started_at, start_revision, session_id LIMIT :limit;
