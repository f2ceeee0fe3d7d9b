SELECT * FROM p_checkpoints WHERE checkpoint_id = :checkpoint_id AND seq <= :rev;
