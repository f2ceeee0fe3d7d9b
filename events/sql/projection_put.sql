INSERT INTO projections (name, version, last_seq) VALUES (:name, :version, :last_seq)
ON CONFLICT (name) DO UPDATE SET version = excluded.version, last_seq = excluded.last_seq;
