SELECT id, title, body FROM p_search WHERE kind = 'work' AND valid_to IS NULL ORDER BY id;
