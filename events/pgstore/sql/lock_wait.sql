SELECT set_config('lock_timeout', @wait::text, true)
