INSERT INTO p_search_fts (p_search_fts, rowid, title, body, head) VALUES ('delete', :id, :title, :body, 'open');
