INSERT INTO origin (id, project_id, head_seq, head_hash, imported_at) VALUES (1, :project_id, :head_seq, :head_hash, :imported_at);
