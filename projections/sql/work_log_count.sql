SELECT count(*) AS n FROM p_work_log WHERE work = :work AND seq > :after AND seq <= :rev;
