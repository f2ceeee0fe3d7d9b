SELECT seq FROM p_rig_log WHERE rig = :rig AND kind = 'restore_completed' AND ref = :ref AND seq <= :rev LIMIT 1;
