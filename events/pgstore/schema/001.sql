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
