package project_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestSessionShow_ClaimsAndBindingsPaged: a session that re-acquired its
// claim and was bound to more conversations than a page shows a page of
// each (50 by default; its claims the highest fencing token first, its
// bindings by conversation) with claims_total and bindings_total and the
// cursor of the next page; following the cursors lists every claim and
// binding exactly once, in order, at the head and at a past revision;
// All lists them whole; recovery inspect pages the bindings the same
// way. A cursor awr did not give is InvalidInput naming its flag, with
// the command of the first page.
func TestSessionShow_ClaimsAndBindingsPaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	id := s.Session.ID
	n := commands.DefaultPage + 5
	tokens := []int64{s.Claim.FencingToken}
	var conversations []string
	var past int64
	for i := range n {
		_, err := p.ClaimRelease(ctx, project.ClaimReleaseRequest{SessionID: id})
		require.NoError(t, err)
		c, err := p.ClaimAcquire(ctx, project.ClaimAcquireRequest{SessionID: id})
		require.NoError(t, err)
		tokens = append(tokens, c.Claim.FencingToken)
		key := fmt.Sprintf("host:conv-%03d", i)
		b, err := p.ClientBind(ctx, project.ClientBindRequest{Client: "generic", ExternalSession: key, Work: "W-1", SessionID: id})
		require.NoError(t, err)
		conversations = append(conversations, key)
		if i == 11 {
			past = b.ProjectRevision
		}
	}
	newest := func(tokens []int64) []int64 {
		out := make([]int64, len(tokens))
		for i, t := range tokens {
			out[len(tokens)-1-i] = t
		}
		return out
	}
	type lists struct {
		claims, bindings       []string
		claimsTotal, bindTotal int
		claimsNext, bindNext   string
	}
	show := func(at *int64, claims, bindings string, limit *int, all bool) (lists, error) {
		v, err := p.SessionShow(ctx, project.SessionShowRequest{Session: id, Read: commands.Read{At: at}, ClaimsCursor: claims, BindingsCursor: bindings, Limit: limit, All: all})
		if err != nil {
			return lists{}, err
		}
		var l lists
		for _, c := range v.Claims {
			l.claims = append(l.claims, fmt.Sprint(c.FencingToken))
		}
		for _, b := range v.Bindings {
			l.bindings = append(l.bindings, b.ExternalSession)
		}
		l.claimsTotal, l.bindTotal, l.claimsNext, l.bindNext = v.ClaimsTotal, v.BindingsTotal, v.ClaimsNextCursor, v.BindingsNextCursor
		return l, nil
	}
	strs := func(ts []int64) (out []string) {
		for _, t := range ts {
			out = append(out, fmt.Sprint(t))
		}
		return out
	}
	for _, at := range []struct {
		name     string
		at       *int64
		claims   []string
		bindings []string
	}{{"head", nil, strs(newest(tokens)), conversations}, {"past", &past, strs(newest(tokens[:13])), conversations[:12]}} {
		t.Run(at.name, func(t *testing.T) {
			first, err := show(at.at, "", "", nil, false)
			require.NoError(t, err)
			require.Equal(t, len(at.claims), first.claimsTotal)
			require.Equal(t, len(at.bindings), first.bindTotal)
			require.Equal(t, at.claims[:min(len(at.claims), commands.DefaultPage)], first.claims, "the highest fencing token first")
			require.Equal(t, at.bindings[:min(len(at.bindings), commands.DefaultPage)], first.bindings)
			require.Equal(t, len(at.claims) > commands.DefaultPage, first.claimsNext != "")
			require.Equal(t, len(at.bindings) > commands.DefaultPage, first.bindNext != "")

			whole, err := show(at.at, "", "", nil, true)
			require.NoError(t, err)
			require.Equal(t, at.claims, whole.claims)
			require.Equal(t, at.bindings, whole.bindings)
			require.Empty(t, whole.claimsNext)
			require.Empty(t, whole.bindNext)

			// Each list following its own cursor.
			var claims, bindings []string
			for c := ""; ; {
				l, err := show(at.at, c, "", new(7), false)
				require.NoError(t, err)
				claims = append(claims, l.claims...)
				if l.claimsNext == "" {
					break
				}
				require.Len(t, l.claims, 7)
				c = l.claimsNext
			}
			require.Equal(t, at.claims, claims, "every claim once, in order")
			bindings = nil
			for c := ""; ; {
				l, err := show(at.at, "", c, new(7), false)
				require.NoError(t, err)
				bindings = append(bindings, l.bindings...)
				if l.bindNext == "" {
					break
				}
				require.Len(t, l.bindings, 7)
				c = l.bindNext
			}
			require.Equal(t, at.bindings, bindings, "every binding once, in order")

			// recovery inspect pages the same bindings.
			bindings = nil
			for c := ""; ; {
				rep, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: id, Read: commands.Read{At: at.at}, BindingsCursor: c, Limit: new(7)})
				require.NoError(t, err)
				require.Equal(t, len(at.bindings), rep.BindingsTotal)
				require.Equal(t, at.claims[0], fmt.Sprint(rep.Claim.FencingToken), "the claim is the latest")
				for _, b := range rep.Bindings {
					bindings = append(bindings, b.ExternalSession)
				}
				if rep.BindingsNextCursor == "" {
					break
				}
				require.Len(t, rep.Bindings, 7)
				c = rep.BindingsNextCursor
			}
			require.Equal(t, at.bindings, bindings, "recovery inspect: every binding once, in order")
			rep, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: id, Read: commands.Read{At: at.at}})
			require.NoError(t, err)
			require.Len(t, rep.Bindings, min(len(at.bindings), commands.DefaultPage))
			err = p.RecoveryInspectEach(ctx, project.RecoveryInspectRequest{Session: id, Read: commands.Read{At: at.at}}, func(rep *project.RecoveryReport) error {
				require.Len(t, rep.Bindings, len(at.bindings), "--all: every binding")
				require.Empty(t, rep.BindingsNextCursor)
				return nil
			}, func(project.LogEvent) error { return nil }, func(*project.KnowledgeItem) error { return nil })
			require.NoError(t, err)
		})
	}
	t.Run("ErrCursor", func(t *testing.T) {
		other := commandsCursorOfAnotherList(t, p)
		for _, bad := range []string{"not-a-cursor", other} {
			for _, c := range []struct {
				flag string
				req  project.SessionShowRequest
			}{
				{"--claims-cursor", project.SessionShowRequest{Session: id, ClaimsCursor: bad}},
				{"--bindings-cursor", project.SessionShowRequest{Session: id, BindingsCursor: bad}},
				{"--bindings-cursor", project.SessionShowRequest{Session: id, BindingsCursor: bad, Read: commands.Read{At: &past}}},
			} {
				_, err := p.SessionShow(ctx, c.req)
				require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
				require.Equal(t, c.flag, fault.As(err).Details["flag"])
				require.Equal(t, 1, fault.ExitCode(err))
				want := "awr session show " + id
				if c.req.At != nil {
					want += fmt.Sprintf(" --at %d", past)
				}
				require.Equal(t, want, fault.As(err).Hint)
			}
			_, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: id, BindingsCursor: bad})
			require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
			require.Equal(t, "--bindings-cursor", fault.As(err).Details["flag"])
			require.Equal(t, "awr recovery inspect --session "+id, fault.As(err).Hint)
		}
	})
}
