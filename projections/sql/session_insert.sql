INSERT INTO p_sessions (session_id, work, agent, provider, model, status, outcome, started_at, start_revision, ended_at, predecessor_id, successor_id, valid_from, valid_to, lvl, node)
VALUES (:session_id, :work, :agent, :provider, :model, :status, :outcome, :started_at, :start_revision, :ended_at, :predecessor_id, :successor_id, :valid_from, :valid_to, :lvl, :node);
