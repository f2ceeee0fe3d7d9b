-- session_page_at.sql newest first: the sessions before the place.
SELECT * FROM p_sessions
WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev)
  AND (:first OR (started_at, start_revision, session_id) < (:started_at, :start_revision, :session_id))
ORDER BY started_at DESC, start_revision DESC, session_id DESC LIMIT :limit;
