CREATE UNIQUE INDEX p_search_key ON p_search (doc, valid_from);
CREATE INDEX p_search_open ON p_search (doc) WHERE valid_to IS NULL;
CREATE INDEX p_search_source ON p_search (source) WHERE valid_to IS NULL AND source != '';
-- A word's open work items in rank order (best impact, then the newer):
-- a search at the head reads a word's first rows, not all (searchHead).
CREATE INDEX p_search_term_rank ON p_search_term (term, impact DESC, id DESC);
