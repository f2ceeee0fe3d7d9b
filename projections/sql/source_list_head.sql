SELECT * FROM p_sources WHERE valid_to IS NULL ORDER BY path;
