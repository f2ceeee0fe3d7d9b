package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// BenchmarkResident times the resident path as `awr bench run` does
// (residentSamples: each tool called in turn through one warm awr-mcp,
// on stdio and over HTTP), on each project of AWR_BENCH_RESIDENT (a
// comma-separated list of directories made by `awr bench project` and
// `awr bench generate`), without the rest of bench run: to set the
// per-call figures of two registers side by side (issue #44: status at
// 10,000 items against 150), or of two builds (AWR_BENCH_MCP names the
// awr-mcp to serve with; default: this tree's). It reports each tool's p50 and p95 in ms
// and the server's CPU per call. Slow: each project is served twice and
// every tool called b.N times in each mode; skipped without the variable.
//
//	AWR_BENCH_RESIDENT=/tmp/r150,/tmp/r10k go test ./internal/lab/bench -run '^$' -bench Resident -benchtime 200x
func BenchmarkResident(b *testing.B) {
	dirs := os.Getenv("AWR_BENCH_RESIDENT")
	if dirs == "" {
		b.Skip("AWR_BENCH_RESIDENT names no project")
	}
	// The servers as a user builds them, or AWR_BENCH_MCP (another
	// build, to compare).
	mcpExe := os.Getenv("AWR_BENCH_MCP")
	if mcpExe == "" {
		mcpExe = testkit.Release(b, testkit.AWRMCP)
	}
	awr := testkit.Release(b, testkit.AWR)
	for _, dir := range strings.Split(dirs, ",") {
		out, err := exec.Command(awr, "--project", dir, "status", "--json").Output()
		require.NoError(b, err, dir)
		id := string(regexpProjectID.Find(out))
		require.NotEmpty(b, id)
		id = strings.Trim(strings.TrimPrefix(id, `"project_id":`), `"`)
		out, err = exec.Command(awr, "--project", dir, "ready", "--json", "--limit", "1").Output()
		require.NoError(b, err)
		work := strings.Trim(strings.TrimPrefix(string(regexpKey.Find(out)), `"key":`), `"`)
		require.NotEmpty(b, work)
		calls := residentCalls(work, "migrations", 5000)
		for _, mode := range []string{"stdio", "http"} {
			b.Run(filepath.Base(dir)+"/"+mode, func(b *testing.B) {
				var r *resident
				var err error
				if mode == "stdio" {
					r, err = startStdio(context.Background(), mcpExe, dir)
				} else {
					r, err = startHTTP(context.Background(), mcpExe, dir, id)
				}
				require.NoError(b, err)
				defer r.Close()
				wall, cpu, err := residentSamples(r, calls, b.N)
				require.NoError(b, err)
				for i, c := range calls {
					s := slices.Clone(wall[i])
					slices.Sort(s)
					q := func(f float64) float64 { return s[int(f*float64(len(s)-1))] }
					name := strings.ReplaceAll(c.name, " ", "_")
					b.ReportMetric(q(0.5), name+"-p50-ms")
					b.ReportMetric(q(0.95), name+"-p95-ms")
					if cpu != nil {
						b.ReportMetric(cpu[i], name+"-cpu-ms")
					}
				}
			})
		}
	}
}

var (
	regexpProjectID = regexp.MustCompile(`"project_id":"[^"]+"`)
	regexpKey       = regexp.MustCompile(`"key":"[^"]+"`)
)
