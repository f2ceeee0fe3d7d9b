package rig_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/rig"
)

func writeSpec(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "rig.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func changes(res *rig.ApplyResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Seats {
		out[s.Address] = s.Change
	}
	return out
}

func TestApply(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	spec := `rig: portal
seats:
  - role: build
    runtime: generic
    command: fakeagent --conversation {conversation}
    resume_command: fakeagent --resume --conversation {conversation}
    work: T-1
  - role: review
    command: fakeagent --conversation {conversation}
    work: T-2
    policy: relaunch_fresh
`
	res, err := f.m.Apply(ctx, writeSpec(t, f.dir, spec))
	if err != nil {
		t.Fatal(err)
	}
	if c := changes(res); c["build@portal"] != "created" || c["review@portal"] != "created" {
		t.Fatalf("first apply: %v", c)
	}
	if s := f.seatAt("review@portal"); s.Policy != events.PolicyRelaunchFresh || s.Runtime != events.RuntimeGeneric {
		t.Fatalf("review: %+v", s)
	}
	rev := res.ProjectRevision
	res, err = f.m.Apply(ctx, writeSpec(t, f.dir, spec))
	if err != nil {
		t.Fatal(err)
	}
	if c := changes(res); c["build@portal"] != "unchanged" || c["review@portal"] != "unchanged" || res.ProjectRevision != rev {
		t.Fatalf("second apply: %v at %d (was %d)", c, res.ProjectRevision, rev)
	}

	// A running seat the spec drops refuses the whole apply.
	f.up(rig.UpOptions{})
	dropped := strings.Replace(spec, "policy: relaunch_fresh", "policy: checkpoint_only", 1)
	dropped = dropped[:strings.Index(dropped, "  - role: build")] + dropped[strings.Index(dropped, "  - role: review"):]
	before := f.kinds()
	if _, err := f.m.Apply(ctx, writeSpec(t, f.dir, dropped)); !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("removing a running seat: %v", err)
	}
	if after := f.kinds(); after[events.KindSeatDeclared] != before[events.KindSeatDeclared] {
		t.Fatal("a refused apply declared seats")
	}
	f.down(false)
	res, err = f.m.Apply(ctx, writeSpec(t, f.dir, dropped))
	if err != nil {
		t.Fatal(err)
	}
	if c := changes(res); c["build@portal"] != "removed" || c["review@portal"] != "updated" {
		t.Fatalf("third apply: %v", c)
	}
}

func TestParseSpec_SecretKeepsItsCode(t *testing.T) {
	t.Parallel()
	_, err := rig.ParseSpec("rig.yaml", []byte("rig: p\nseats:\n  - role: a\n    command: agent --key ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"))
	if !fault.Is(err, fault.RuleViolation) || !strings.HasPrefix(err.Error(), "rig.yaml:3:") || strings.Contains(err.Error(), "ghp_") {
		t.Fatalf("got %v", err)
	}
}

func TestParseSpec_Errors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"not yaml", "rig: [", "rig.yaml: not YAML"},
		{"not a mapping", "- a\n- b\n", "rig.yaml:1: the spec must be a mapping"},
		{"no rig", "seats: []\n", "rig: is missing"},
		{"no seats", "rig: p\n", "seats: is missing"},
		{"rig twice", "rig: a\nrig: b\nseats: []\n", "rig.yaml:2: rig is given twice (first at line 1)"},
		{"seat field twice", "rig: p\nseats:\n  - role: a\n    command: x\n    command: y\n", "rig.yaml:5: seat field command is given twice (first at line 4)"},
		{"bad rig", "rig: Portal!\nseats: []\n", "rig.yaml:1:"},
		{"unknown top field", "rig: p\nwhat: 1\nseats: []\n", "rig.yaml:2: unknown field \"what\""},
		{"seats not a list", "rig: p\nseats: 3\n", "rig.yaml:2: seats must be a list"},
		{"unknown seat field", "rig: p\nseats:\n  - role: a\n    comand: x\n", "rig.yaml:4: unknown seat field \"comand\""},
		{"no role", "rig: p\nseats:\n  - command: x\n", "rig.yaml:3: seat without role"},
		{"duplicate role", "rig: p\nseats:\n  - {role: a, command: x}\n  - {role: a, command: y}\n", "rig.yaml:4: role a is declared twice (first at line 3)"},
		{"generic without command", "rig: p\nseats:\n  - role: a\n", "rig.yaml:3: seat a@p: runtime generic needs --command"},
		{"bad policy", "rig: p\nseats:\n  - {role: a, command: x, policy: sometimes}\n", "rig.yaml:3:"},
		{"unknown placeholder", "rig: p\nseats:\n  - {role: a, command: 'x {nope}'}\n", "unknown placeholder {nope}"},
		{"non-string field", "rig: p\nseats:\n  - role: a\n    command: [x]\n", "rig.yaml:4: command must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rig.ParseSpec("rig.yaml", []byte(tc.body))
			if !fault.Is(err, fault.InvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want InvalidInput containing %q", err, tc.want)
			}
		})
	}
}

// FuzzParseSpec: any bytes give a spec or a typed InvalidInput (or
// RuleViolation, for a secret) naming the file; a spec that parses has a valid rig and unique roles.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("rig: p\nseats:\n  - {role: a, command: x}\n"))
	f.Add([]byte("rig: portal\nseats:\n  - role: build\n    runtime: claude\n    work: T-1\n"))
	f.Add([]byte("rig: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := rig.ParseSpec("f.yaml", data)
		if err != nil {
			if !(fault.Is(err, fault.InvalidInput) || fault.Is(err, fault.RuleViolation)) || !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("untyped or unlocated error: %v", err)
			}
			return
		}
		roles := map[string]bool{}
		for _, s := range spec.Seats {
			if roles[s.Role] {
				t.Fatalf("duplicate role %s accepted", s.Role)
			}
			roles[s.Role] = true
		}
	})
}
