package source

import (
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// FuzzYAMLLedger feeds arbitrary bytes to the YAML ledger parser (without
// its recover, so a panic fails): every item, goal and rule must have a
// key and a line range inside the file, every status must be canonical or
// unknown, every strength hard or soft, and two parses must agree.
func FuzzYAMLLedger(f *testing.F) {
	f.Add([]byte(yamlFullLedger), uint8(0))
	f.Add([]byte("A-1:\n  title: First\n  status: ready\nA-2: {title: Second, status: wip}\n"), uint8(1))
	f.Add([]byte("goals:\n  G-1: {title: g}\nrules:\n  R-1: Never.\nmilestones: [{id: M-1}]\ntasks:\n  - {key: T-1, title: t, status: open, goal: G-1}\n"), uint8(2))
	f.Add([]byte("defaults: &d {status: todo}\nitems:\n  - <<: *d\n    id: M-1\n    title: x\n    depends_on: [{id: A, required: no}, B]\n"), uint8(3))
	f.Add([]byte("- id: a\n  summary: |\n    one\n\n    two\n  tags: a, b\r\n- id: b\r\n"), uint8(4))
	f.Add([]byte("items:\n  - id: a\n    title: x\n   bad: 1\n  - id: b\n"), uint8(5))
	f.Add([]byte("a: &a [x, *a]\nitems: [{id: &k k, title: *k, status: *a, <<: [*a, *a]}]\n"), uint8(6))
	f.Add([]byte("- {id: L-1, title: a, status: ready}\u2028- {id: L-2}\u0085- {id: L-3}\r- x"), uint8(7))
	f.Add([]byte("\ufeff---\n- id: Ü\n  status: erledigt\n...\n---\n~\n"), uint8(8))
	f.Fuzz(func(t *testing.T, content []byte, o uint8) {
		var opts Options
		if o%2 == 1 {
			opts = Options{
				StatusMap: map[string]string{"erledigt": "completed", "review": "in_review"},
				FieldMap:  map[string]string{"next_action": "next_step", "key": "ticket"},
			}
		}
		const path = "ledger.yaml"
		res := readYAMLLedger(path, content, opts)
		lines := newYAMLLines(content).count()
		hash := Hash(content)
		checkRef := func(what, key string, ref events.SourceRef) {
			require.NotEmpty(t, key, "%s without a key", what)
			require.Equal(t, path, ref.Path)
			require.Equal(t, hash, ref.ContentHash)
			require.True(t, 1 <= ref.LineStart && ref.LineStart <= ref.LineEnd && ref.LineEnd <= lines,
				"%s %s: lines %d-%d outside 1-%d", what, key, ref.LineStart, ref.LineEnd, lines)
		}
		for _, it := range res.Items {
			checkRef("item", it.Key, it.Source)
			require.True(t, it.Status == Unknown || IsCanonical(it.Status), "item %s: status %q", it.Key, it.Status)
			for _, d := range it.DependsOn {
				require.NotEmpty(t, d.Key)
			}
		}
		for _, g := range res.Goals {
			checkRef("goal", g.Key, g.Source)
		}
		for _, r := range res.Rules {
			checkRef("rule", r.Key, r.Source)
			require.Contains(t, []string{"hard", "soft"}, r.Strength)
		}
		for _, is := range res.Issues {
			require.Equal(t, path, is.Path)
			require.NotEmpty(t, is.Code)
			require.NotEmpty(t, is.Message)
		}
		require.Equal(t, res, readYAMLLedger(path, content, opts), "two parses differ")
	})
}
