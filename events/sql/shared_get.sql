SELECT project, store FROM shared_store WHERE id = 1;
