INSERT INTO p_sources (path, adapter, role, content_hash, options_hash, size, mtime_ms, item_count, issues, indexed_at, valid_from, valid_to)
VALUES (:path, :adapter, :role, :content_hash, :options_hash, :size, :mtime_ms, :item_count, :issues, :indexed_at, :valid_from, :valid_to);
