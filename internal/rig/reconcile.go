package rig

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
)

// Reconcile adopts, as the seat's session, the session someone resumed
// from it by hand (see commands.ReconcileSeat), recording the seat's
// repository now as the reference the next restore compares with. It
// types nothing into the seat's pane.
// Errors: those of commands.ReconcileSeat.
func (m *Manager) Reconcile(ctx context.Context, req commands.ReconcileRequest) (*commands.ReconcileResult, error) {
	var cwd string
	if err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		s, err := commands.RequireSeat(r.Conn, req.Address, r.Head)
		if err == nil {
			cwd = s.Cwd
		}
		return err
	}); err != nil {
		if _, _, perr := commands.ParseAddress(req.Address); perr != nil {
			return nil, perr
		}
		return nil, err
	}
	if cur, _, ok := m.repoState(ctx, m.seatDir(cwd)); ok {
		req.Repo = cur
	}
	return commands.ReconcileSeat(ctx, m.Env, req)
}
