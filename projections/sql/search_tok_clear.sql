INSERT INTO p_search_tok (p_search_tok) VALUES ('delete-all');
