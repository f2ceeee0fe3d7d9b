// Package sharedstore connects a project to the shared PostgreSQL log its
// manifest names: through this user's connection holder for the store
// (package storehold) when one runs, starting one when asked, and saying
// in the errors of a store that cannot be reached or refuses where its URL
// came from. The door (internal/project) decides which store a project
// has and opens its cache; this package makes the connection.
package sharedstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/storehold"
)

// Store is the shared log a project's manifest names.
type Store struct {
	URL, Key string
	// RetryFor is how long a passing failure of the server is retried
	// (the project's --timeout).
	RetryFor time.Duration
	// HeadAtOpen: the process runs one command (pgstore.Options.HeadAtOpen).
	HeadAtOpen bool
	// From says where URL came from, for the errors of a store that
	// cannot be reached or refuses: AWR_STORE, or the manifest.
	From string
	// Hold: connect through this user's connection holder for the
	// store when one runs (a process that runs one command); Start: and
	// start one when there is none.
	Hold, Start bool
}

// Open connects to the shared log.
// Errors: those of pgstore.Open, with details.from saying where the URL
// came from (AWR_STORE or the manifest); a server that refused the
// connection (a wrong password, an unknown user or database) also says it
// in the message, so that the URL to fix is the one named.
func (s *Store) Open(ctx context.Context) (events.Upstream, error) {
	dir, via := "", ""
	if s.Hold {
		dir = storehold.Dir(s.URL)
	}
	if dir != "" && storehold.Private(dir) {
		via = dir
	}
	up, err := pgstore.Open(ctx, s.URL, pgstore.Options{Project: s.Key, RetryFor: s.RetryFor, ServerClock: true, HeadAtOpen: s.HeadAtOpen, Via: via, IdleLimit: pgstore.DefaultIdleLimit, KeepStatements: !s.HeadAtOpen})
	if err == nil {
		if s.Start && dir != "" && !up.Held() {
			// No holder yet: this command connected itself; the next
			// ones go through the one started now. Starting it is
			// best effort: without it every command connects itself.
			if exe, err := os.Executable(); err == nil {
				storehold.Start(exe, s.URL, dir)
			}
		}
		return up, nil
	}
	fe := fault.As(err)
	if fe == nil || fe.Code != fault.Storage {
		return nil, err
	}
	fe = fe.With("from", s.From)
	if state, _ := fe.Details["sqlstate"].(string); state == "3D000" || strings.HasPrefix(state, "28") {
		fe.Message += fmt.Sprintf(" (the URL came from %s)", s.From)
	}
	return nil, fe
}

// Hold runs this user's connection holder for the shared store at url
// (package storehold) until it has had no client for a while. It returns
// nil at once when another holder serves the store already. Errors: the
// URL does not parse, the holder's directory is not the user's alone,
// the store cannot be reached.
func Hold(ctx context.Context, url string) error {
	dir := storehold.Dir(url)
	if dir == "" {
		return nil
	}
	if err := storehold.Serve(ctx, url, dir, storehold.Options{}); err != nil {
		return fault.Wrap(fault.Storage, err, "%s", err.Error())
	}
	return nil
}
