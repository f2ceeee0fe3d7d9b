package projections

import (
	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Binding ties a host conversation to an awr session.
type Binding struct {
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	SessionID       string `json:"session_id"`
	Work            string `json:"work"`
	CheckpointID    string `json:"checkpoint_id,omitempty"`
	BoundAt         int64  `json:"bound_at"`
	Revision        int64  `json:"revision"`
}

type bindings struct{ base }

func newBindings() *bindings {
	return &bindings{base{name: "bindings", version: 1, schema: "bindings", tables: []Table{
		{Name: "p_bindings", Key: []string{"external_session"}, Temporal: true},
	}}}
}

func (p *bindings) Apply(conn *sqlite.Conn, e *events.Event) error {
	if e.Kind != events.KindClientBound {
		return nil
	}
	pl, err := payload[events.ClientBound](e)
	if err != nil {
		return err
	}
	if err := exec(conn, "binding_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", e.Seq)
		st.SetText(":external_session", pl.ExternalSession)
	}); err != nil {
		return err
	}
	return exec(conn, "binding_insert", func(st *sqlite.Stmt) {
		st.SetText(":external_session", pl.ExternalSession)
		st.SetText(":client", pl.Client)
		st.SetText(":session_id", pl.SessionID)
		st.SetText(":work", pl.Work)
		st.SetText(":checkpoint_id", pl.CheckpointID)
		st.SetInt64(":bound_at", e.OccurredAt)
		st.SetInt64(":valid_from", e.Seq)
	})
}

func scanBinding(st *sqlite.Stmt) Binding {
	return Binding{
		Client: st.GetText("client"), ExternalSession: st.GetText("external_session"), SessionID: st.GetText("session_id"),
		Work: st.GetText("work"), CheckpointID: st.GetText("checkpoint_id"), BoundAt: st.GetInt64("bound_at"),
		Revision: st.GetInt64("valid_from"),
	}
}

func bindingsBy(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt)) ([]Binding, error) {
	var out []Binding
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		out = append(out, scanBinding(st))
		return nil
	})
	return out, err
}

// BindingAt returns the binding of an external session at rev, or nil.
func BindingAt(conn *sqlite.Conn, external string, rev int64) (*Binding, error) {
	bs, err := bindingsBy(conn, "binding_at", func(st *sqlite.Stmt) {
		st.SetText(":external_session", external)
		st.SetInt64(":rev", rev)
	})
	if err != nil || len(bs) == 0 {
		return nil, err
	}
	return &bs[0], nil
}

// SessionBindingsAt lists the bindings pointing at session at rev.
func SessionBindingsAt(conn *sqlite.Conn, session string, rev int64) ([]Binding, error) {
	return bindingsBy(conn, "binding_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
	})
}

// BindingsAt lists every binding at rev.
func BindingsAt(conn *sqlite.Conn, rev int64) ([]Binding, error) {
	return bindingsBy(conn, "binding_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) })
}
