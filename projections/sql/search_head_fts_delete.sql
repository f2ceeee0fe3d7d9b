INSERT INTO p_search_head_fts (p_search_head_fts, rowid, title, body) VALUES ('delete', :id, :title, :body);
