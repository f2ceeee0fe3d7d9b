package doctor

import (
	"context"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/hook"
	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/projections"
)

// Log runs the checks that read the log at rev (now is the read's clock,
// ttl the project's lease): projections behind it, sessions whose claim
// lapsed and stale ones. It returns what the later checks need from the
// same read: the executions (Executions) and the clients bound to a
// session, the hosts in use (Files).
// Errors: those of reading the projections.
func Log(r *events.Reader, rev, now, ttl int64, add func(Finding)) (xs []projections.Execution, clients map[string]bool, err error) {
	if err := Projections(r, add); err != nil {
		return nil, nil, err
	}
	if err := Sessions(r, rev, now, ttl, add); err != nil {
		return nil, nil, err
	}
	if xs, err = projections.ExecutionsAt(r.Conn, rev, "", ""); err != nil {
		return nil, nil, err
	}
	bs, err := projections.BindingsAt(r.Conn, rev)
	if err != nil {
		return nil, nil, err
	}
	clients = map[string]bool{}
	for _, b := range bs {
		clients[b.Client] = true
	}
	return xs, clients, nil
}

// Files runs the checks of the project in dir, whose log is st, that
// read its files: sources missing, changed or with issues; the hosts in
// use (clients) without awr's hooks, and when a hook last ran (the hook
// log, hook.RanLog); hook events that got no answer; permissions others
// may write; anchors far behind the head. It returns, per host whose
// settings hold awr's hooks, where they are installed and when one last
// ran.
func Files(ctx context.Context, dir string, st *events.Store, clients map[string]bool, add func(Finding)) []Hook {
	Sources(ctx, dir, st, add)
	target := func(client, scope string) (string, error) {
		_, _, path, err := hosts.Target(client, scope, dir)
		return path, err
	}
	ran := HooksRan(ctx, filepath.Join(dir, ".awr", hook.RanLog), hook.LogLimit)
	hooks := Hooks(clients, ran, target, add)
	Unanswered(ctx, filepath.Join(dir, ".awr"), hook.LogLimit, ran, hooks, add)
	Permissions(dir, add)
	Anchors(ctx, dir, st, add)
	return hooks
}
