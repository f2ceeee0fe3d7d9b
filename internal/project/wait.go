package project

import (
	"context"
	"time"

	"github.com/awr-dev/awr/events"
)

// WaitHead returns the project_revision once it has passed after, or
// after itself when ctx is done first (then with ctx's error). On a shared
// log it waits for the shared log's wake-up (LISTEN/NOTIFY), and looks
// anyway every followWake, so a lost notification only delays it; on a
// project's own log it looks every DefaultFollowInterval. Each look is a
// read through the door, so a shared log's cache has caught up with the
// revision it returns.
// Errors: those of opening and reading the log (not ctx's end).
func (p *Project) WaitHead(ctx context.Context, after int64) (int64, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return after, err
	}
	waker, _ := st.Upstream().(events.Waker)
	for {
		var head int64
		if err := st.Read(ctx, func(r *events.Reader) error { head = r.Head; return nil }); err != nil {
			if ctx.Err() != nil {
				return after, ctx.Err()
			}
			return after, err
		}
		if head > after {
			return head, nil
		}
		if waker != nil && waker.Wait(ctx, after, followWake) == nil {
			if ctx.Err() != nil {
				return after, ctx.Err()
			}
			continue
		}
		select {
		case <-ctx.Done():
			return after, ctx.Err()
		case <-time.After(DefaultFollowInterval):
		}
	}
}
