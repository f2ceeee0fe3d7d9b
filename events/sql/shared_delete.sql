DELETE FROM shared_store;
