INSERT INTO p_search_tok (rowid, title, body) VALUES (1, :title, :body);
