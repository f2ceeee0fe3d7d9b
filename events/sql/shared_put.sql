INSERT INTO shared_store (id, project, store) VALUES (1, :project, :store)
ON CONFLICT (id) DO UPDATE SET store = excluded.store;
