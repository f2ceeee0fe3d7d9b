SELECT max(seq) AS seq FROM (SELECT max(valid_from) AS seq FROM p_sources WHERE valid_from <= :rev UNION ALL SELECT max(valid_to) AS seq FROM p_sources WHERE valid_to <= :rev);
