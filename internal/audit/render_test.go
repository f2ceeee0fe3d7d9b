package audit_test

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/audit"
	"github.com/stretchr/testify/require"
)

const hostile = "<script>alert('x')</script> & \"quoted\" `tick` \xfe"

// report is a report whose every agent-written value is hostile.
func report() *audit.Report {
	ref := audit.Ref{Seq: 3, Hash: strings.Repeat("ab", 32), At: audit.Time(1796000000000), Actor: hostile}
	return &audit.Report{
		Subject: audit.Subject{Kind: audit.SubjectWork, ID: "W-1"}, ProjectID: "P", ProjectName: hostile, ProjectRevision: 3,
		HeadHash: ref.Hash, HeadAt: ref.At, Chain: audit.Chain{Verified: false, Through: 3, FirstBadSeq: 2, Problem: hostile},
		Work: []audit.WorkItem{{Key: "W-1", Title: hostile, Status: "planned", Source: hostile}},
		Sessions: []audit.Session{{Started: ref, ID: "S-1", Work: "W-1", Agent: hostile, Repo: &audit.Repo{Head: "c0ffee", Branch: hostile, Dirty: true,
			DirtyFiles: []audit.File{{Path: hostile, Status: "modified"}}}}},
		Claims: []audit.ClaimEvent{{Ref: ref, Event: audit.ClaimReleased, ClaimID: "C-1", Work: "W-1", Session: "S-1", Reason: hostile, Note: hostile}},
		Checkpoints: []audit.Checkpoint{{Ref: ref, ID: "K-1", Session: "S-1", Work: "W-1", Agent: hostile, Digest: hostile + "\nsecond line",
			NextAction: hostile, Changes: []audit.Change{{Op: "open", ID: "L-1", Kind: "loop", Text: hostile}},
			Kept: audit.Knowledge{Decisions: []audit.Item{{ID: "D-1", Text: hostile}}}}},
		Restatements: []audit.Restatement{{Ref: ref, Session: "S-1", Work: "W-1", Verdict: "attention_required",
			Items: []audit.RestatementField{{Field: "next_action", Status: "mismatch", Expected: hostile, Stated: hostile}}}},
		Executions: []audit.Execution{{Started: ref, ID: "X-1", Work: "W-1", Session: "S-1", Key: hostile, Purpose: hostile, Argv: []string{"sh", "-c", hostile}}},
		Evidence:   []audit.Evidence{{Ref: ref, ID: "E-1", Work: "W-1", Criterion: hostile, Basis: "note", Level: "note", Passed: true, Detail: hostile}},
	}
}

func TestHTML_EscapesEveryValue(t *testing.T) {
	t.Parallel()
	page := string(audit.HTML(report()))
	require.NotContains(t, page, "<script")
	require.NotContains(t, page, "\xfe")
	require.Contains(t, page, "`tick` \uFFFD")
	require.Contains(t, page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;quoted&#34;")
	require.Contains(t, page, `<span class="bad">NOT VERIFIED: seq 2: &lt;script&gt;`)
	require.Contains(t, page, "<style>")
	require.NotContains(t, page, "http:")
	require.NotContains(t, page, "https:")
	require.NotContains(t, page, " src=")
	require.Equal(t, page, string(audit.HTML(report())), "the same report renders to the same bytes")
}

func TestMarkdown_NoRawHTML(t *testing.T) {
	t.Parallel()
	doc := string(audit.Markdown(report()))
	require.NotRegexp(t, `(^|[^\\])<`, outsideCode(doc), "every < outside a code span is escaped")
	require.Contains(t, doc, "branch ``<script>alert('x')</script> & \"quoted\" `tick` \uFFFD``")
	require.Contains(t, doc, `\<script>alert('x')\</script>`)
	require.Contains(t, doc, "- digest: \\<script>alert('x')\\</script> & \"quoted\" `tick` \uFFFD\n  second line\n")
	require.Contains(t, doc, "- chain: NOT VERIFIED: seq 2: ")
	require.Equal(t, doc, string(audit.Markdown(report())))
}

func TestArgv(t *testing.T) {
	t.Parallel()
	require.Equal(t, `sh -c 'echo it'\''s' '' a=b`, audit.Argv([]string{"sh", "-c", "echo it's", "", "a=b"}))
}

// outsideCode returns doc without its code spans (a run of n backticks up
// to the next run of exactly n), where "<" is literal text.
func outsideCode(doc string) string {
	var b strings.Builder
	for len(doc) > 0 {
		i := strings.IndexByte(doc, '`')
		if i < 0 {
			b.WriteString(doc)
			break
		}
		b.WriteString(doc[:i])
		n := len(doc[i:]) - len(strings.TrimLeft(doc[i:], "`"))
		fence, rest := doc[i:i+n], doc[i+n:]
		end := -1
		for j := 0; j < len(rest); {
			k := strings.Index(rest[j:], fence)
			if k < 0 {
				break
			}
			k += j
			m := len(rest[k:]) - len(strings.TrimLeft(rest[k:], "`"))
			if m == n {
				end = k
				break
			}
			j = k + m
		}
		if end < 0 {
			b.WriteString(fence)
			doc = rest
			continue
		}
		doc = rest[end+n:]
	}
	return b.String()
}
