package pgstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5/pgconn"
)

// transient reports whether err is a failure that passes: the server is
// starting up or in recovery (57P03), ended the connection (57P01,
// 57P02), or the connection broke (08xxx, a reset or EOF). A server that
// refuses the connection or cannot be reached at all is not: it fails at
// once, with pg_isready to check it. Context ends are not.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08")
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return false
	}
	return isNetwork(err)
}

// retry runs step until it succeeds, fails for a reason that does not
// pass (transient), or the store's RetryFor (and ctx) runs out, waiting
// between attempts with a jittered backoff from 50 ms up to 1 s. The
// error of the last attempt is returned, mapped, its message saying how
// long it was retried.
func (s *Store) retry(ctx context.Context, op string, step func() error) error {
	deadline := time.Now().Add(s.retryFor)
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := step()
		if !transient(err) || s.retryFor <= 0 {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			mapped := fault.As(s.mapErr(op, err))
			if mapped == nil {
				return err
			}
			return mapped.With("attempts", attempt).With("retried_for", s.retryFor.String())
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// privilegeWord is what op needed the privilege for, for messages.
func privilegeWord(op string) string {
	switch {
	case strings.HasPrefix(op, "append"), strings.HasPrefix(op, "fence"), strings.HasPrefix(op, "copy"):
		return "write the project's log"
	case strings.HasPrefix(op, "open"):
		return "open or create the awr tables"
	}
	return "read the project's log"
}
