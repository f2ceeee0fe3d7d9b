SELECT session_id, work, agent, start_revision, ended_revision FROM p_sessions WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
