CREATE INDEX p_work_log_kind ON p_work_log (work, kind, seq);
