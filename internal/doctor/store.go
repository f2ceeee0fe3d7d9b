package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
)

// FindingStoreMoved is the doctor's finding of a shared store the log
// moved out of (awr migrate --to sqlite on another checkout): it takes no
// more writes.
const FindingStoreMoved = "store_moved"

// StoreHealth is what awr doctor reports of a team checkout's shared
// store: that it answered, its version, how far this machine's cache was
// behind before the doctor's read caught it up, whether the log moved
// away (the fence), and how far this machine's clock is from the
// server's (leases are judged by the server's).
type StoreHealth struct {
	Shared        string `json:"shared"`
	Reachable     bool   `json:"reachable"`
	ServerVersion string `json:"server_version"`
	RoundTripMs   int64  `json:"round_trip_ms"`
	// SharedRevision is the shared log's head; CacheRevision the cache's
	// before catching up; CacheLag the difference.
	SharedRevision int64 `json:"shared_revision"`
	CacheRevision  int64 `json:"cache_revision"`
	CacheLag       int64 `json:"cache_lag"`
	// MovedTo names where the log went when the store is fenced.
	MovedTo string `json:"moved_to,omitempty"`
	// ClockOffsetMs is the server's clock minus this machine's (the
	// midpoint of the round trip), in milliseconds.
	ClockOffsetMs int64 `json:"clock_offset_ms"`
}

// Store reports the shared store of a team checkout whose log is st (nil
// for a project whose log is its own file), and adds the finding of a
// store the log moved out of. atOpen is the cache's head when the project
// was opened (-1 when unknown): opening caught the cache up, so its lag
// is what it was before.
// Errors: Storage when the store cannot be read.
func Store(ctx context.Context, st *events.Store, atOpen int64, add func(Finding)) (*StoreHealth, error) {
	up, ok := st.Upstream().(*pgstore.Store)
	if !ok {
		return nil, nil
	}
	h := &StoreHealth{Shared: up.Describe()}
	local, err := st.LocalHead(ctx)
	if err != nil {
		return nil, err
	}
	if atOpen >= 0 && atOpen < local.Revision {
		// Opening the project caught the cache up: its lag is what it
		// was before.
		local.Revision = atOpen
	}
	before := time.Now()
	info, err := up.Server(ctx)
	if err != nil {
		return nil, err
	}
	mid := before.Add(info.RoundTrip / 2)
	head, err := up.Head(ctx)
	if err != nil {
		return nil, err
	}
	moved, err := up.MovedTo(ctx)
	if err != nil {
		return nil, err
	}
	h.Reachable, h.ServerVersion, h.RoundTripMs = true, info.Version, info.RoundTrip.Milliseconds()
	h.SharedRevision, h.CacheRevision, h.CacheLag = head.Revision, local.Revision, max(head.Revision-local.Revision, 0)
	h.ClockOffsetMs = info.Now.Sub(mid).Milliseconds()
	if moved != nil {
		h.MovedTo = moved.To
		add(Finding{Code: FindingStoreMoved, Severity: SeverityError, Subject: up.Project(),
			Message: fmt.Sprintf("the project's log moved out of the shared store %s into %s at project_revision %d: the store takes no more writes", up.Describe(), moved.To, moved.Revision),
			Repair:  "awr migrate --to sqlite"})
	}
	return h, nil
}
