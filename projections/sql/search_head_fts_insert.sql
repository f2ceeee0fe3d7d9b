INSERT INTO p_search_head_fts (rowid, title, body) VALUES (:id, :title, :body);
