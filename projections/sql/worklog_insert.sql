INSERT INTO p_work_log (work, seq, kind) VALUES (:work, :seq, :kind);
