SELECT project_id, head_seq, head_hash, imported_at FROM origin WHERE id = 1;
