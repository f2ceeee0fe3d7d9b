CREATE INDEX p_work_log_work ON p_work_log (work, seq);
