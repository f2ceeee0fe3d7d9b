SELECT coalesce((
	SELECT CASE
		WHEN h.seq <> @seq OR h.hash <> @hash THEN 'awr: the head moved to ' || h.seq::text
		WHEN h.moved_to IS NOT NULL THEN 'awr: the log moved to ' || h.moved_to
		WHEN @clocked::boolean AND c.now < @at::bigint THEN 'awr: the shared clock ' || c.now::text || ' is before the write''s time'
		WHEN @clocked::boolean AND c.now > @at::bigint + @within::bigint THEN 'awr: the shared clock ' || c.now::text || ' is past the write''s time and its bound'
		ELSE '1'
	END
	FROM awr_heads h, LATERAL (SELECT greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint, h.occurred_at) AS now) c
	WHERE h.project = @project
), 'awr: no head row')::integer AS sealed
