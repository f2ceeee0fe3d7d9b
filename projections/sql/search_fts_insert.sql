INSERT INTO p_search_fts (rowid, title, body) VALUES (:id, :title, :body);
