package pgstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/jackc/pgx/v5"
)

// The PostgreSQL store wakes followers on NOTIFY (events.Waker).
var _ events.Waker = (*Store)(nil)

// Wait returns when the project's head may have passed after (a NOTIFY
// awr_events names a later seq), or when max has passed, or ctx is done,
// whichever comes first: a wake-up only, never the source of events (the
// caller reads them by position). It holds one connection while it waits.
// Errors: Storage when the server cannot be reached (the caller polls).
func (s *Store) Wait(ctx context.Context, after int64, max time.Duration) error {
	const op = "wait for events"
	if err := s.checkOpen(op); err != nil {
		return err
	}
	s.takeOpened()
	// One listening connection per store, kept between waits: LISTEN
	// stays with a connection, so it is taken out of the pool.
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if s.listener == nil {
		pc, err := s.pool.Acquire(ctx)
		if err != nil {
			return s.mapErr(op, err)
		}
		c := pc.Hijack()
		if _, err := c.Exec(ctx, "LISTEN awr_events"); err != nil {
			c.Close(context.WithoutCancel(ctx))
			return s.mapErr(op, err)
		}
		s.listener = c
	}
	conn := s.listener
	fail := func(err error) error {
		conn.Close(context.WithoutCancel(ctx))
		s.listener = nil
		return s.mapErr(op, err)
	}
	// A commit between the caller's read and the LISTEN sent no wake-up
	// this connection saw: look once.
	var seq int64
	if err := conn.QueryRow(ctx, q("head"), pgx.NamedArgs{"project": s.project}).Scan(&seq, new([]byte), new(int64)); err != nil {
		return fail(err)
	}
	if seq > after {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	prefix := s.project + ":"
	for {
		n, err := conn.WaitForNotification(wctx)
		if err != nil {
			if wctx.Err() != nil {
				// A wait cut short leaves the connection in an unknown
				// state: the next wait opens another.
				conn.Close(context.WithoutCancel(ctx))
				s.listener = nil
				return nil
			}
			return fail(err)
		}
		if rest, ok := strings.CutPrefix(n.Payload, prefix); ok {
			if v, err := strconv.ParseInt(rest, 10, 64); err == nil && v > after {
				return nil
			}
		}
	}
}
