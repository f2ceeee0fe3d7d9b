package source

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

const yamlPath = "ledger/work-ledger.yaml"

// yamlRead parses src as a YAML ledger through the registered adapter.
func yamlRead(t *testing.T, src string, opts ...Options) Result {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return Parse(YAMLLedger, yamlPath, []byte(src), o)
}

// yamlRef is the source reference of lines start..end of src.
func yamlRef(src string, start, end int) events.SourceRef {
	return events.SourceRef{Path: yamlPath, LineStart: start, LineEnd: end, ContentHash: Hash([]byte(src))}
}

// yamlLinesOf returns the line ranges of the items of res, by key.
func yamlLinesOf(res Result) map[string][2]int {
	out := map[string][2]int{}
	for _, it := range res.Items {
		out[it.Key] = [2]int{it.Source.LineStart, it.Source.LineEnd}
	}
	return out
}

// yamlCodes returns the issues of res as "code@line".
func yamlCodes(res Result) []string {
	var out []string
	for _, is := range res.Issues {
		out = append(out, fmt.Sprintf("%s@%d", is.Code, is.Line))
	}
	return out
}

// itemFields lists one field of each item of res, in order.
func itemFields(res Result, field func(events.WorkItem) string) []string {
	var out []string
	for _, it := range res.Items {
		out = append(out, field(it))
	}
	return out
}

// yamlItem returns the item of res with key.
func yamlItem(t *testing.T, res Result, key string) events.WorkItem {
	t.Helper()
	for _, it := range res.Items {
		if it.Key == key {
			return it
		}
	}
	t.Fatalf("no item %s in %+v", key, res.Items)
	return events.WorkItem{}
}

const yamlFullLedger = `# Checkout work ledger.
version: 1
goals:
  - id: G-1
    title: Ship a resumable checkout flow
    status: active
    summary: A shopper can leave and come back without losing the cart.
milestones:
  - id: M-1
    title: Cart persistence
rules:
  - id: R-1
    text: Never log payment card numbers.
    strength: hard
    paths: [services/payments/**]
  - {id: R-2, text: Prefer small pull requests., strength: soft}
items:
  - id: CART-1
    title: Persist the cart server-side
    status: todo
    kind: feature
    priority: p1
    summary: >
      Carts live in the browser today
      and are lost on restart.
    next_action: Add a carts table and write the cart on every change
    blocker: Waiting on the schema review
    acceptance:
      - Cart survives a browser restart
      - Writes are idempotent
    goal: G-1
    milestone: M-1
    owner: dana
    tags: [backend, storage]
    paths:
      - services/cart/
      - db/migrations/

  # Restoring needs persistence first.
  - id: CART-2
    title: Restore the cart at sign-in
    status: planned
    priority: 2
    acceptance: Items from both carts are kept
    depends_on:
      - CART-1
      - {id: AUTH-3, required: false}
    goal: G-1
    milestone: M-1
    tags: frontend, auth
  - id: OPS-1
    title: Alert on checkout errors
    status: Done
    kind: chore
    notes: |
      The pager rota is in the ops handbook.

      Alert on the 5xx rate, not on single errors.
# end of ledger
`

func TestYAMLLedger_Registered(t *testing.T) {
	t.Parallel()
	require.Contains(t, Adapters(), YAMLLedger)
	require.NotNil(t, Parsers[YAMLLedger])
}

func TestYAMLLedger_FullLedger(t *testing.T) {
	t.Parallel()
	src := yamlFullLedger
	res := yamlRead(t, src)
	require.Empty(t, res.Issues)

	require.Equal(t, []events.Goal{{
		Key: "G-1", Title: "Ship a resumable checkout flow", Status: "active",
		Summary: "A shopper can leave and come back without losing the cart.",
		Source:  yamlRef(src, 4, 7),
	}}, res.Goals)

	require.Equal(t, []events.Rule{
		{Key: "R-1", Text: "Never log payment card numbers.", Strength: "hard", Paths: []string{"services/payments/**"}, Source: yamlRef(src, 12, 15)},
		{Key: "R-2", Text: "Prefer small pull requests.", Strength: "soft", Source: yamlRef(src, 16, 16)},
	}, res.Rules)

	require.Len(t, res.Items, 3)
	require.Equal(t, events.WorkItem{
		Key: "CART-1", Title: "Persist the cart server-side", Status: "planned", RawStatus: "todo",
		Kind: "feature", Priority: "p1",
		Summary:    "Carts live in the browser today and are lost on restart.",
		NextAction: "Add a carts table and write the cart on every change",
		Blocker:    "Waiting on the schema review",
		Acceptance: []string{"Cart survives a browser restart", "Writes are idempotent"},
		Goal:       "G-1", Milestone: "M-1", Owner: "dana",
		Tags:   []string{"backend", "storage"},
		Paths:  []string{"services/cart/", "db/migrations/"},
		Source: yamlRef(src, 18, 37),
	}, res.Items[0])
	require.Equal(t, events.WorkItem{
		Key: "CART-2", Title: "Restore the cart at sign-in", Status: "planned", Priority: "2",
		Acceptance: []string{"Items from both carts are kept"},
		DependsOn:  []events.Dependency{{Key: "CART-1", Required: true}, {Key: "AUTH-3", Required: false}},
		Goal:       "G-1", Milestone: "M-1",
		Tags:   []string{"frontend", "auth"},
		Source: yamlRef(src, 40, 50),
	}, res.Items[1])
	require.Equal(t, events.WorkItem{
		Key: "OPS-1", Title: "Alert on checkout errors", Status: "completed", RawStatus: "Done", Kind: "chore",
		Source: yamlRef(src, 51, 58),
	}, res.Items[2])
}

func TestYAMLLedger_Shapes(t *testing.T) {
	t.Parallel()

	t.Run("TopLevelList", func(t *testing.T) {
		t.Parallel()
		src := `- id: A-1
  title: First
  status: ready
- key: A-2
  title: Second
  status: wip
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, map[string][2]int{"A-1": {1, 3}, "A-2": {4, 6}}, yamlLinesOf(res))
		require.Equal(t, "in_progress", yamlItem(t, res, "A-2").Status)
		require.Equal(t, "wip", yamlItem(t, res, "A-2").RawStatus)
	})

	t.Run("TopLevelMapKeyedByID", func(t *testing.T) {
		t.Parallel()
		src := `A-1:
  title: First
  status: ready

A-2:
  title: Second
  status: blocked
  blocker: Needs keys from ops
A-3: {title: Third, status: draft}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, map[string][2]int{"A-1": {1, 3}, "A-2": {5, 8}, "A-3": {9, 9}}, yamlLinesOf(res))
		require.Equal(t, "Needs keys from ops", yamlItem(t, res, "A-2").Blocker)
	})

	t.Run("KeyedIDDiffers", func(t *testing.T) {
		t.Parallel()
		src := "A-1:\n  id: B-1\n  title: First\n  status: ready\n"
		res := yamlRead(t, src)
		require.Equal(t, []string{"malformed@2"}, yamlCodes(res))
		require.Contains(t, res.Issues[0].Message, "B-1")
		require.Equal(t, "A-1", res.Items[0].Key)
	})

	t.Run("SectionsKeyedByID", func(t *testing.T) {
		t.Parallel()
		src := `goals:
  G-1: {title: Faster checkout}
  G-2:
    title: Fewer abandoned carts
    status: proposed
rules:
  R-1: Never log payment card numbers.
  R-2: {text: Prefer small pull requests., strength: should}
tasks:
  T-1:
    title: Profile the payment step
    status: open
    goal: G-1
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, []events.Goal{
			{Key: "G-1", Title: "Faster checkout", Source: yamlRef(src, 2, 2)},
			{Key: "G-2", Title: "Fewer abandoned carts", Status: "proposed", Source: yamlRef(src, 3, 5)},
		}, res.Goals)
		require.Equal(t, []events.Rule{
			{Key: "R-1", Text: "Never log payment card numbers.", Strength: "hard", Source: yamlRef(src, 7, 7)},
			{Key: "R-2", Text: "Prefer small pull requests.", Strength: "soft", Source: yamlRef(src, 8, 8)},
		}, res.Rules)
		require.Equal(t, events.WorkItem{Key: "T-1", Title: "Profile the payment step", Status: "planned", RawStatus: "open",
			Goal: "G-1", Source: yamlRef(src, 10, 13)}, res.Items[0])
	})

	t.Run("SectionSynonyms", func(t *testing.T) {
		t.Parallel()
		src := `work:
  - {id: W-1, title: One, status: done}
Work-Items:
  - {id: W-2, title: Two, status: done}
tasks:
  - {id: W-3, title: Three, status: done}
items:
  - {id: W-4, title: Four, status: done}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Len(t, res.Items, 4)
	})

	t.Run("FieldSynonyms", func(t *testing.T) {
		t.Parallel()
		src := `- key: S-1
  title: Synonyms
  status: ready
  acceptance_criteria: [one, two]
  dependencies: S-0
  Next-Action: Write it
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		it := res.Items[0]
		require.Equal(t, []string{"one", "two"}, it.Acceptance)
		require.Equal(t, []events.Dependency{{Key: "S-0", Required: true}}, it.DependsOn)
		require.Equal(t, "Write it", it.NextAction)
	})

	t.Run("MultipleDocuments", func(t *testing.T) {
		t.Parallel()
		src := `goals:
  - {id: G-1, title: Goal}
---
- {id: D-1, title: One, status: ready, goal: G-1}
---
D-2: {title: Two, status: ready}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, map[string][2]int{"D-1": {4, 4}, "D-2": {6, 6}}, yamlLinesOf(res))
		require.Len(t, res.Goals, 1)
	})

	t.Run("MergeKeys", func(t *testing.T) {
		t.Parallel()
		src := `defaults: &defaults
  kind: feature
  owner: dana
  status: todo
items:
  - <<: *defaults
    id: M-1
    title: Uses the defaults
  - <<: *defaults
    id: M-2
    title: Overrides the owner
    owner: lee
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, events.WorkItem{Key: "M-1", Title: "Uses the defaults", Status: "planned", RawStatus: "todo",
			Kind: "feature", Owner: "dana", Source: yamlRef(src, 6, 8)}, res.Items[0])
		require.Equal(t, "lee", res.Items[1].Owner)
		require.Equal(t, "feature", res.Items[1].Kind)
	})

	t.Run("Aliases", func(t *testing.T) {
		t.Parallel()
		src := `common_paths: &web [web/, shared/]
items:
  - {id: AL-1, title: One, status: ready, paths: *web}
  - {id: AL-2, title: Two, status: ready, paths: *web, depends_on: [AL-1]}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, []string{"web/", "shared/"}, res.Items[1].Paths)
	})
}

func TestYAMLLedger_Fields(t *testing.T) {
	t.Parallel()

	t.Run("PriorityAsWritten", func(t *testing.T) {
		t.Parallel()
		src := `- {id: P-1, title: a, status: ready, priority: 1}
- {id: P-2, title: b, status: ready, priority: P0}
- {id: P-3, title: c, status: ready, priority: high}
- {id: P-4, title: d, status: ready, priority: 2.5}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, []string{"1", "P0", "high", "2.5"}, itemFields(res, func(it events.WorkItem) string { return it.Priority }))
	})

	t.Run("CommaStrings", func(t *testing.T) {
		t.Parallel()
		src := `- id: C-1
  title: Commas
  status: ready
  tags: "api, , backend ,"
  paths: cmd/awr/, source/
  depends_on: C-0, B-2
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		it := res.Items[0]
		require.Equal(t, []string{"api", "backend"}, it.Tags)
		require.Equal(t, []string{"cmd/awr/", "source/"}, it.Paths)
		require.Equal(t, []events.Dependency{{Key: "C-0", Required: true}, {Key: "B-2", Required: true}}, it.DependsOn)
	})

	t.Run("Dependencies", func(t *testing.T) {
		t.Parallel()
		src := `- id: D-1
  title: Deps
  status: ready
  depends_on:
    - D-0
    - {id: X-1}
    - key: X-2
      required: no
    - {id: X-3, required: true}
    - D-0
    - ~
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, []events.Dependency{
			{Key: "D-0", Required: true}, {Key: "X-1", Required: true},
			{Key: "X-2", Required: false}, {Key: "X-3", Required: true},
		}, res.Items[0].DependsOn)
	})

	t.Run("Blocker", func(t *testing.T) {
		t.Parallel()
		src := `- {id: B-1, title: a, status: ready, blocker: false}
- {id: B-2, title: b, status: ready, blocker: none}
- {id: B-3, title: c, status: ready, blocker: ~}
- {id: B-4, title: d, status: blocked, blocker: CI is red}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, []string{"", "", "", "CI is red"}, itemFields(res, func(it events.WorkItem) string { return it.Blocker }))
	})

	t.Run("AcceptancePairReadAsText", func(t *testing.T) {
		t.Parallel()
		src := `- id: AC-1
  title: Criteria with colons
  status: ready
  acceptance:
    - Given: an anonymous cart
    - Then the cart is merged
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, []string{"Given: an anonymous cart", "Then the cart is merged"}, res.Items[0].Acceptance)
	})

	t.Run("RuleStrength", func(t *testing.T) {
		t.Parallel()
		src := `rules:
  - {id: R-1, text: a, strength: MUST}
  - {id: R-2, text: b, strength: Should}
  - {id: R-3, text: c}
  - {id: R-4, title: d, strength: maybe, paths: "a/, b/"}
  - {id: R-5, strength: soft}
`
		res := yamlRead(t, src)
		require.Equal(t, []string{"malformed@5", "missing_title@6"}, yamlCodes(res))
		var got []string
		for _, r := range res.Rules {
			got = append(got, r.Key+"="+r.Strength+":"+r.Text)
		}
		require.Equal(t, []string{"R-1=hard:a", "R-2=soft:b", "R-3=hard:c", "R-4=hard:d", "R-5=soft:"}, got)
		require.Equal(t, []string{"a/", "b/"}, res.Rules[3].Paths)
	})
}

func TestYAMLLedger_Options(t *testing.T) {
	t.Parallel()

	t.Run("FieldMap", func(t *testing.T) {
		t.Parallel()
		src := `stories:
  - ticket: ST-1
    name: Mapped fields
    state: In Review
    next_step: Ask for a review
    next_action: not this one
    done_when: [Reviewed]
`
		opts := Options{
			FieldMap: map[string]string{
				"items": "stories", "key": "ticket", "title": "name", "status": "state",
				"next_action": "next_step", "acceptance": "done_when",
			},
			StatusMap: map[string]string{"in review": "in_progress"},
		}
		res := yamlRead(t, src, opts)
		require.Empty(t, res.Issues)
		require.Equal(t, events.WorkItem{Key: "ST-1", Title: "Mapped fields", Status: "in_progress", RawStatus: "In Review",
			NextAction: "Ask for a review", Acceptance: []string{"Reviewed"}, Source: yamlRef(src, 2, 7)}, res.Items[0])
	})

	t.Run("StatusMapWins", func(t *testing.T) {
		t.Parallel()
		src := "- {id: S-1, title: a, status: done}\n"
		res := yamlRead(t, src, Options{StatusMap: map[string]string{"DONE": "cancelled"}})
		require.Empty(t, res.Issues)
		require.Equal(t, "cancelled", res.Items[0].Status)
		require.Equal(t, "done", res.Items[0].RawStatus)
	})

	t.Run("StatusMapNotCanonical", func(t *testing.T) {
		t.Parallel()
		src := "- {id: S-1, title: a, status: review}\n"
		res := yamlRead(t, src, Options{StatusMap: map[string]string{"review": "in_review"}})
		require.Equal(t, []string{"status_unmapped@1"}, yamlCodes(res))
		require.Equal(t, Unknown, res.Items[0].Status)
		require.Equal(t, "review", res.Items[0].RawStatus)
	})
}

func TestYAMLLedger_Issues(t *testing.T) {
	t.Parallel()

	t.Run("UnknownStatus", func(t *testing.T) {
		t.Parallel()
		src := `items:
  - id: U-1
    title: Reviewed by a human
    status: reviewing
`
		res := yamlRead(t, src)
		require.Equal(t, []events.SourceIssue{{
			Code: IssueStatusUnmapped, Path: yamlPath, Line: 4, Key: "U-1",
			Message: `item U-1: status "reviewing" is not a known status; map it in the source's status_map`,
		}}, res.Issues)
		require.Equal(t, Unknown, res.Items[0].Status)
		require.Equal(t, "reviewing", res.Items[0].RawStatus)
	})

	t.Run("MissingStatus", func(t *testing.T) {
		t.Parallel()
		src := "- id: N-1\n  title: No status\n- id: N-2\n  title: Empty status\n  status:\n"
		res := yamlRead(t, src)
		require.Equal(t, []string{"status_unmapped@1", "status_unmapped@5"}, yamlCodes(res))
		require.Equal(t, Unknown, res.Items[0].Status)
		require.Equal(t, Unknown, res.Items[1].Status)
	})

	t.Run("Duplicates", func(t *testing.T) {
		t.Parallel()
		src := `goals:
  - {id: G-1, title: One}
  - {id: G-1, title: Again}
items:
  - id: DUP-1
    title: First
    status: ready
  - id: DUP-1
    title: Second
    status: ready
`
		res := yamlRead(t, src)
		require.Len(t, res.Items, 2)
		require.Len(t, res.Goals, 2)
		require.Equal(t, []events.SourceIssue{
			{Code: IssueDuplicateKey, Path: yamlPath, Line: 3, Key: "G-1", Message: "duplicate goal key G-1 at lines 2 and 3; the first is used and the item is not claimable until one is renamed"},
			{Code: IssueDuplicateKey, Path: yamlPath, Line: 8, Key: "DUP-1", Message: "duplicate item key DUP-1 at lines 5 and 8; the first is used and the item is not claimable until one is renamed"},
		}, res.Issues)
	})

	t.Run("DuplicatesKeyedMap", func(t *testing.T) {
		t.Parallel()
		src := "K-1: {title: a, status: ready}\nK-1: {title: b, status: ready}\n"
		res := yamlRead(t, src)
		require.Len(t, res.Items, 2)
		require.Equal(t, []string{"duplicate_key@2"}, yamlCodes(res))
	})

	t.Run("MissingKey", func(t *testing.T) {
		t.Parallel()
		src := `- id: K-1
  title: Has a key
  status: ready
- title: Has no key
  status: ready
- id: ""
  title: Empty key
- id: [a, b]
  title: List key
`
		res := yamlRead(t, src)
		require.Equal(t, []string{"K-1"}, []string{res.Items[0].Key})
		require.Len(t, res.Items, 1)
		require.Equal(t, []string{"missing_key@4", "missing_key@6", "malformed@8", "missing_key@8"}, yamlCodes(res))
		require.Contains(t, res.Issues[0].Message, `"Has no key"`)
	})

	t.Run("MissingTitle", func(t *testing.T) {
		t.Parallel()
		src := "- id: T-1\n  status: ready\n"
		res := yamlRead(t, src)
		require.Equal(t, []events.SourceIssue{{Code: IssueMissingTitle, Path: yamlPath, Line: 1, Key: "T-1", Message: "item T-1: no title"}}, res.Issues)
		require.Len(t, res.Items, 1)
	})

	t.Run("WrongTypes", func(t *testing.T) {
		t.Parallel()
		src := `items:
  - id: W-1
    title: Wrong types
    status: ready
    acceptance: 5
    depends_on: {x: y}
    tags: {a: b}
    owner: [dana, lee]
    paths:
      - src/
      - {deep: [1]}
  - id: W-2
    title: [not, text]
    status: [ready]
    acceptance: [fine, [nested]]
    depends_on: [{required: true}, [W-1]]
    required: maybe
  - Just a string
  - 42
`
		res := yamlRead(t, src)
		require.Equal(t, []string{
			"malformed@5", "malformed@6", "malformed@7", "malformed@8", "malformed@11",
			"missing_title@12", "malformed@13", "status_unmapped@14", "malformed@15", "malformed@16", "malformed@16",
			"malformed@18", "malformed@19",
		}, yamlCodes(res))
		require.Equal(t, "item W-1: acceptance: expected a string or a list of strings, got a number; ignored", res.Issues[0].Message)
		require.Equal(t, "item W-1: depends_on: expected a list of keys, got a map; ignored", res.Issues[1].Message)
		require.Equal(t, "W-1", res.Issues[0].Key)
		require.Len(t, res.Items, 2)
		w1 := res.Items[0]
		require.Equal(t, "ready", w1.Status)
		require.Nil(t, w1.Acceptance)
		require.Nil(t, w1.DependsOn)
		require.Nil(t, w1.Tags)
		require.Empty(t, w1.Owner)
		require.Equal(t, []string{"src/"}, w1.Paths)
		w2 := res.Items[1]
		require.Equal(t, Unknown, w2.Status)
		require.Equal(t, []string{"fine"}, w2.Acceptance)
		require.Nil(t, w2.DependsOn)
	})

	t.Run("SectionWrongType", func(t *testing.T) {
		t.Parallel()
		src := "goals: 3\nitems: just text\nrules: ~\n"
		res := yamlRead(t, src)
		require.Equal(t, []string{"malformed@1", "malformed@2"}, yamlCodes(res))
		require.Empty(t, res.Items)
	})

	t.Run("TopLevelScalar", func(t *testing.T) {
		t.Parallel()
		res := yamlRead(t, "just some words\n")
		require.Equal(t, []string{"malformed@1"}, yamlCodes(res))
	})

	t.Run("RepeatedField", func(t *testing.T) {
		t.Parallel()
		src := "- id: RF-1\n  title: First\n  status: ready\n  title: Second\n"
		res := yamlRead(t, src)
		require.Equal(t, []string{"malformed@4"}, yamlCodes(res))
		require.Equal(t, "Second", res.Items[0].Title)
	})

	t.Run("BothSynonyms", func(t *testing.T) {
		t.Parallel()
		src := "- id: BS-1\n  title: t\n  status: ready\n  acceptance: [a]\n  acceptance_criteria: [b]\n"
		res := yamlRead(t, src)
		require.Equal(t, []string{"malformed@5"}, yamlCodes(res))
		require.Equal(t, []string{"a"}, res.Items[0].Acceptance)
	})

	t.Run("UndeclaredReferences", func(t *testing.T) {
		t.Parallel()
		src := `goals:
  - {id: G-1, title: Goal}
milestones:
  M-1: {title: First}
  M-1: {title: Again}
items:
  - {id: R-1, title: a, status: ready, goal: G-1, milestone: M-1}
  - {id: R-2, title: b, status: ready, goal: G-9, milestone: M-9}
`
		res := yamlRead(t, src)
		require.Equal(t, []string{"duplicate_key@5", "unknown_reference@8", "unknown_reference@8"}, yamlCodes(res))
		require.Equal(t, "item R-2: goal G-9 is not declared in this file's goals", res.Issues[1].Message)
	})

	t.Run("CompactDeclarations", func(t *testing.T) {
		t.Parallel()
		src := `goals:
  G-1: Faster checkout
milestones: [M-1, M-2]
items:
  - {id: C-1, title: a, status: ready, goal: G-1, milestone: M-2}
  - {id: C-2, title: b, status: ready, goal: G-1, milestone: M-3}
`
		res := yamlRead(t, src)
		require.Equal(t, []string{"unknown_reference@6"}, yamlCodes(res))
		require.Equal(t, []events.Goal{{Key: "G-1", Title: "Faster checkout", Source: yamlRef(src, 2, 2)}}, res.Goals)
	})

	t.Run("ReferencesUncheckedWithoutDeclarations", func(t *testing.T) {
		t.Parallel()
		res := yamlRead(t, "- {id: R-1, title: a, status: ready, goal: G-9, milestone: M-9}\n")
		require.Empty(t, res.Issues)
	})
}

func TestYAMLLedger_Malformed(t *testing.T) {
	t.Parallel()

	t.Run("NothingReadable", func(t *testing.T) {
		t.Parallel()
		src := "items:\n  - id: a\n    title: x: y\n"
		res := yamlRead(t, src)
		require.Empty(t, res.Items)
		require.Equal(t, []events.SourceIssue{{Code: IssueMalformed, Path: yamlPath, Line: 3,
			Message: "malformed YAML: mapping values are not allowed in this context"}}, res.Issues)
	})

	t.Run("LibraryLineKept", func(t *testing.T) {
		t.Parallel()
		// The library names the line where the enclosing block opens.
		src := "items:\n  - id: a\n    title: x\n   bad: 1\n"
		res := yamlRead(t, src)
		require.Equal(t, []events.SourceIssue{{Code: IssueMalformed, Path: yamlPath, Line: 1,
			Message: "malformed YAML: did not find expected '-' indicator (the first line that does not parse is 4)"}}, res.Issues)
	})

	t.Run("CleanPrefixKept", func(t *testing.T) {
		t.Parallel()
		src := `items:
  - id: OK-1
    title: Complete before the damage
    status: ready
  - id: OK-2
    title: Also complete
    status: ready
  - id: CUT-1
    title: Half edited
   status: ready
  - id: LOST-1
    title: After the damage
    status: ready
`
		res := yamlRead(t, src)
		require.Equal(t, map[string][2]int{"OK-1": {2, 4}, "OK-2": {5, 7}}, yamlLinesOf(res))
		require.Equal(t, []events.SourceIssue{{Code: IssueMalformed, Path: yamlPath, Line: 1,
			Message: "malformed YAML: did not find expected '-' indicator (the first line that does not parse is 10); only lines 1-7 are read"}}, res.Issues)
	})

	t.Run("UnterminatedQuote", func(t *testing.T) {
		t.Parallel()
		src := "- id: Q-1\n  title: fine\n  status: ready\n- id: Q-2\n  title: \"never closed\n  status: ready\n"
		res := yamlRead(t, src)
		require.Equal(t, map[string][2]int{"Q-1": {1, 3}}, yamlLinesOf(res))
		require.Len(t, res.Issues, 1)
		require.Equal(t, IssueMalformed, res.Issues[0].Code)
		require.Equal(t, 5, res.Issues[0].Line)
	})

	t.Run("Tabs", func(t *testing.T) {
		t.Parallel()
		res := yamlRead(t, "- id: a\n\ttitle: x\n")
		require.Equal(t, []string{"malformed@2"}, yamlCodes(res))
		require.Empty(t, res.Items)
	})
}

func TestYAMLLedger_Limits(t *testing.T) {
	t.Parallel()

	t.Run("BillionLaughs", func(t *testing.T) {
		t.Parallel()
		// Nine levels of nine aliases: 9^9 strings if expanded. The
		// ledger reads only what it needs, so nothing is expanded.
		var b strings.Builder
		b.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
		for c := 'b'; c <= 'i'; c++ {
			fmt.Fprintf(&b, "%c: &%c [%s]\n", c, c, strings.Repeat(fmt.Sprintf("*%c, ", c-1), 8)+fmt.Sprintf("*%c", c-1))
		}
		b.WriteString("items:\n")
		for j := 0; j < 9; j++ {
			fmt.Fprintf(&b, "  - {id: X-%d, title: t, status: ready, tags: *i, acceptance: *i, depends_on: *i}\n", j)
		}
		res := yamlRead(t, b.String())
		require.Len(t, res.Items, 9)
		require.Nil(t, res.Items[0].Tags)
		require.Len(t, res.Issues, 9*3*9)
	})

	t.Run("AliasExpansionRefused", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		b.WriteString("all_paths: &p\n")
		for j := 0; j < 2000; j++ {
			fmt.Fprintf(&b, "  - src/pkg%d/\n", j)
		}
		b.WriteString("items:\n")
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&b, "  - {id: X-%d, title: t, status: ready, paths: *p}\n", j)
		}
		res := yamlRead(t, b.String())
		require.Empty(t, res.Items)
		require.Len(t, res.Issues, 1)
		require.Equal(t, IssueMalformed, res.Issues[0].Code)
		require.Equal(t, 2052, res.Issues[0].Line)
		require.Equal(t, "YAML aliases expand to more than 100000 nodes; the ledger is not read", res.Issues[0].Message)
	})

	t.Run("SelfReference", func(t *testing.T) {
		t.Parallel()
		src := "base: &b\n  <<: *b\n  kind: x\nitems:\n  - &i {id: S-1, title: t, status: ready, tags: [*i], <<: *b}\n"
		res := yamlRead(t, src)
		require.Len(t, res.Items, 1)
		require.Equal(t, "x", res.Items[0].Kind)
	})

	t.Run("TooLarge", func(t *testing.T) {
		t.Parallel()
		big := bytes.Repeat([]byte("# padding padding padding padding\n"), yamlMaxBytes/30)
		res := Parse(YAMLLedger, yamlPath, big, Options{})
		require.Empty(t, res.Items)
		require.Equal(t, []string{"unreadable@1"}, yamlCodes(res))
	})
}

func TestYAMLLedger_Text(t *testing.T) {
	t.Parallel()

	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		for _, src := range []string{"", "\n\n", "# only a comment\n", "---\n", "---\n...\n", "~\n", "items:\n", "items: []\ngoals: {}\n"} {
			res := yamlRead(t, src)
			require.Empty(t, res.Items, "%q", src)
			require.Empty(t, res.Issues, "%q", src)
		}
	})

	t.Run("CRLF", func(t *testing.T) {
		t.Parallel()
		lf := yamlFullLedger
		crlf := strings.ReplaceAll(lf, "\n", "\r\n")
		a, b := yamlRead(t, lf), yamlRead(t, crlf)
		require.Empty(t, b.Issues)
		require.Equal(t, len(a.Items), len(b.Items))
		for i := range a.Items {
			x, y := a.Items[i], b.Items[i]
			x.Source.ContentHash, y.Source.ContentHash = "", ""
			require.Equal(t, x, y)
		}
		require.Equal(t, Hash([]byte(crlf)), b.Items[0].Source.ContentHash)
	})

	t.Run("Unicode", func(t *testing.T) {
		t.Parallel()
		src := "\ufeff# Übersicht\n- id: Ü-1\n  title: Kasse beschleunigen 🚀\n  status: erledigt\n  owner: 李\n- id: 任务-2\n  title: 支付页面\n  status: done\n"
		res := yamlRead(t, src, Options{StatusMap: map[string]string{"Erledigt": "completed"}})
		require.Empty(t, res.Issues)
		require.Equal(t, map[string][2]int{"Ü-1": {2, 5}, "任务-2": {6, 8}}, yamlLinesOf(res))
		require.Equal(t, "Kasse beschleunigen 🚀", res.Items[0].Title)
		require.Equal(t, "erledigt", res.Items[0].RawStatus)
		require.Equal(t, "李", res.Items[0].Owner)
	})

	t.Run("UnicodeLineBreaks", func(t *testing.T) {
		t.Parallel()
		src := "- {id: L-1, title: a, status: ready}\u2028- {id: L-2, title: b, status: ready}\u0085- {id: L-3, title: c, status: ready}"
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, map[string][2]int{"L-1": {1, 1}, "L-2": {2, 2}, "L-3": {3, 3}}, yamlLinesOf(res))
	})

	t.Run("BlockScalarRanges", func(t *testing.T) {
		t.Parallel()
		src := `- id: BL-1
  title: Literal summary last
  status: ready
  summary: |
    first

    third
    # not a comment, text


  # a comment between items
- id: BL-2
  title: Flow item across lines
  status: ready
  tags: [a,
    b]
- {id: BL-3, title: last, status: ready}
`
		res := yamlRead(t, src)
		require.Empty(t, res.Issues)
		require.Equal(t, map[string][2]int{"BL-1": {1, 8}, "BL-2": {12, 16}, "BL-3": {17, 17}}, yamlLinesOf(res))
		require.Equal(t, "first\n\nthird\n# not a comment, text", res.Items[0].Summary)
	})
}
