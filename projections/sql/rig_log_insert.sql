INSERT INTO p_rig_log (seq, rig, kind, ref, data) VALUES (:seq, :rig, :kind, :ref, :data);
