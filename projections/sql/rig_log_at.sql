SELECT * FROM p_rig_log WHERE rig = :rig AND seq <= :rev ORDER BY seq;
