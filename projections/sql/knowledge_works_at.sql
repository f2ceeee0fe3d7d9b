SELECT DISTINCT work FROM p_knowledge WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY work;
