-- The event log of every project in this database. One row per project in
-- awr_heads holds the project's head (seq, hash, occurred_at of its latest
-- event; seq 0 and 32 zero bytes when empty); every appending transaction
-- locks it (SELECT ... FOR UPDATE) and advances it, so a project's seqs are
-- assigned gapless and in commit order.
CREATE TABLE awr_heads (
	project     text   PRIMARY KEY CHECK (project <> ''),
	seq         bigint NOT NULL,
	hash        bytea  NOT NULL,
	occurred_at bigint NOT NULL
);

-- The events, one row per event, with the envelope of the SQLite store's
-- events table; payload holds the canonical JSON bytes exactly (bytea, not
-- jsonb, which would rewrite them).
CREATE TABLE awr_events (
	project        text   NOT NULL,
	seq            bigint NOT NULL CHECK (seq > 0),
	id             text   NOT NULL,
	kind           text   NOT NULL,
	stream         text   NOT NULL CHECK (stream <> ''),
	stream_version bigint NOT NULL CHECK (stream_version > 0),
	occurred_at    bigint NOT NULL,
	actor          text   NOT NULL,
	request_id     text,
	payload        bytea  NOT NULL,
	prev_hash      bytea  NOT NULL,
	hash           bytea  NOT NULL,
	PRIMARY KEY (project, seq),
	UNIQUE (project, id),
	UNIQUE (project, stream, stream_version)
);

CREATE INDEX awr_events_stream_seq ON awr_events (project, stream, seq);

CREATE UNIQUE INDEX awr_events_request_id ON awr_events (project, request_id) WHERE request_id IS NOT NULL;

-- The idempotency records: a write with a request id stores its fingerprint,
-- its seqs and its result, which a repeat gets back.
CREATE TABLE awr_requests (
	project     text   NOT NULL,
	request_id  text   NOT NULL,
	fingerprint text   NOT NULL,
	first_seq   bigint NOT NULL,
	last_seq    bigint NOT NULL,
	result      text   NOT NULL,
	PRIMARY KEY (project, request_id)
);

-- The log is append-only and gapless whoever writes to it, as the SQLite
-- store's triggers make it.
CREATE FUNCTION awr_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the log is append-only, % is rejected', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER awr_events_no_update BEFORE UPDATE OR DELETE ON awr_events
FOR EACH ROW EXECUTE FUNCTION awr_events_append_only();

CREATE FUNCTION awr_events_gapless() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.seq <> COALESCE((SELECT max(seq) FROM awr_events WHERE project = NEW.project), 0) + 1 THEN
		RAISE EXCEPTION 'events: seq must be exactly project_revision + 1 (got %)', NEW.seq USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER awr_events_seq_gapless BEFORE INSERT ON awr_events
FOR EACH ROW EXECUTE FUNCTION awr_events_gapless();
