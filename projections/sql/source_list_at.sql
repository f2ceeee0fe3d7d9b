SELECT * FROM p_sources WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY path;
