SELECT key FROM p_goals WHERE valid_to IS NULL;
