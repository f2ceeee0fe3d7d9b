SELECT d.id, d.kind, d.ref, d.work, d.session_id, d.state, d.seq, d.title
FROM json_each(:ids) AS j JOIN p_search d ON d.id = j.value;
