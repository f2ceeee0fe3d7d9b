INSERT INTO p_search_fts (rowid, title, body, head) VALUES (:id, :title, :body, :head);
