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

type bindings struct {
	versioned[Binding]
}

func newBindings() *bindings {
	p := &bindings{}
	p.base, p.step = base{name: "bindings", version: 2, schema: "bindings", tables: []Table{
		{Name: "p_bindings", Key: []string{"external_session"}, Temporal: true},
	}, fold: []string{"p_bindings_key"}}, p.apply
	p.rows = versions[Binding]{insert: putBinding, load: BindingAt, close: closeOpen("binding_close", ":external_session")}
	return p
}

// apply records a client_bound event as the new binding of its external session.
func (p *bindings) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	pl, ok := v.(*events.ClientBound)
	if !ok {
		return nil
	}
	return p.rows.put(conn, pl.ExternalSession, e.Seq, &Binding{
		Client: pl.Client, ExternalSession: pl.ExternalSession, SessionID: pl.SessionID, Work: pl.Work,
		CheckpointID: pl.CheckpointID, BoundAt: e.OccurredAt, Revision: e.Seq,
	})
}

func putBinding(conn *sqlite.Conn, b *Binding, from, to int64) error {
	return exec(conn, "binding_insert", func(st *sqlite.Stmt) {
		st.SetText(":external_session", b.ExternalSession)
		st.SetText(":client", b.Client)
		st.SetText(":session_id", b.SessionID)
		st.SetText(":work", b.Work)
		st.SetText(":checkpoint_id", b.CheckpointID)
		st.SetInt64(":bound_at", b.BoundAt)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
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
	return queryRows(conn, name, bind, always(scanBinding))
}

// BindingAt returns the binding of an external session at rev, or nil.
func BindingAt(conn *sqlite.Conn, external string, rev int64) (*Binding, error) {
	return firstRow(bindingsBy(conn, "binding_at", keyAt(":external_session", external, rev)))
}

// SessionBindingsAt lists the bindings pointing at session at rev.
func SessionBindingsAt(conn *sqlite.Conn, session string, rev int64) ([]Binding, error) {
	return bindingsBy(conn, "binding_by_session_at", keyAt(":session_id", session, rev))
}

// BindingsAt lists every binding at rev.
func BindingsAt(conn *sqlite.Conn, rev int64) ([]Binding, error) {
	return bindingsBy(conn, "binding_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) })
}
