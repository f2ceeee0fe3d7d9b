UPDATE p_bindings SET valid_to = :seq WHERE external_session = :external_session AND valid_to IS NULL;
