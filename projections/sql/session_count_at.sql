SELECT count(*) AS n FROM p_sessions WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
