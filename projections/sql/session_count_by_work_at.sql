SELECT count(*) AS n FROM p_sessions WHERE work = :work AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
