package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/process"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
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
// and the server's CPU per call, and the p50 of two floors of the
// transport on the same server (floorSamples). Slow: each project is served twice and
// every tool called b.N times in each mode; skipped without the variable.
//
//	AWR_BENCH_RESIDENT=/tmp/r150,/tmp/r10k go test ./internal/lab/bench -run '^$' -bench '^BenchmarkResident$' -benchtime 200x
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
	for _, dir := range strings.Split(dirs, ",") {
		id, work := residentTarget(b, dir)
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
				// The transport's floors on the same warm server: ping (a
				// round trip the SDK answers) and a tool call refused
				// before the door (an unknown field, InvalidInput).
				for name, p50 := range floorSamples(b, r, b.N) {
					b.ReportMetric(p50, name+"-p50-ms")
				}
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

// BenchmarkResidentInProcess serves each project of AWR_BENCH_RESIDENT
// from this test process (the same mcpserver awr-mcp runs, on a pipe as
// on stdio, and the shared service's HTTP handler on a loopback port)
// and calls each tool through the benchmark's own client, one
// sub-benchmark a tool: a CPU profile of the test process then shows
// where a call's time goes on the server's side. It also calls the
// floors of the transport: ping (a JSON-RPC round trip the SDK answers)
// and a tool call refused before the door (awr_status with an unknown
// field). Slow: every tool is called b.N times; skipped without the
// variable.
//
//	AWR_BENCH_RESIDENT=/tmp/r150 go test ./internal/lab/bench -run '^$' -bench 'ResidentInProcess/r150/stdio/status' -benchtime 2000x -cpuprofile /tmp/status.cpu
func BenchmarkResidentInProcess(b *testing.B) {
	dirs := os.Getenv("AWR_BENCH_RESIDENT")
	if dirs == "" {
		b.Skip("AWR_BENCH_RESIDENT names no project")
	}
	for _, dir := range strings.Split(dirs, ",") {
		id, work := residentTarget(b, dir)
		calls := append(residentCalls(work, "migrations", 5000),
			residentCall{name: "ping", tool: "ping"},
			residentCall{name: "refused", tool: "awr_status", args: map[string]any{"no_such_field": true}})
		for _, mode := range []string{"stdio", "http"} {
			for _, c := range calls {
				b.Run(filepath.Base(dir)+"/"+mode+"/"+strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
					r := startInProcess(b, mode, dir, id)
					call := func() error {
						switch {
						case c.tool == "ping":
							return r.rpc("ping", map[string]any{}, nil)
						case c.name == "refused":
							_, err := r.Call(c.tool, c.args)
							if err == nil {
								return fmt.Errorf("awr_status with an unknown field answered")
							}
							return nil
						}
						_, err := r.Call(c.tool, c.args)
						return err
					}
					require.NoError(b, call())
					took := make([]float64, 0, b.N)
					b.ResetTimer()
					for range b.N {
						t0 := time.Now()
						if err := call(); err != nil {
							b.Fatal(err)
						}
						took = append(took, float64(time.Since(t0).Microseconds())/1000)
					}
					b.StopTimer()
					slices.Sort(took)
					b.ReportMetric(took[len(took)/2], "p50-ms")
					b.ReportMetric(took[int(0.95*float64(len(took)-1))], "p95-ms")
				})
			}
		}
	}
}

// floorSamples times count rounds of ping and of a refused tool call
// through r and returns each one's p50 in ms, by name.
func floorSamples(b *testing.B, r *resident, count int) map[string]float64 {
	calls := map[string]func() error{
		"floor_ping": func() error { return r.rpc("ping", map[string]any{}, nil) },
		"floor_refused": func() error {
			if _, err := r.Call("awr_status", map[string]any{"no_such_field": true}); err == nil {
				return fmt.Errorf("awr_status with an unknown field answered")
			}
			return nil
		},
	}
	took := map[string][]float64{}
	for range count {
		for name, call := range calls {
			t0 := time.Now()
			require.NoError(b, call())
			took[name] = append(took[name], float64(time.Since(t0).Microseconds())/1000)
		}
	}
	out := map[string]float64{}
	for name, s := range took {
		slices.Sort(s)
		out[name] = s[len(s)/2]
	}
	return out
}

// residentTarget reads dir's project id and its first ready item with
// the CLI.
func residentTarget(b *testing.B, dir string) (id, work string) {
	awr := testkit.Release(b, testkit.AWR)
	out, err := exec.Command(awr, "--project", dir, "status", "--json").Output()
	require.NoError(b, err, dir)
	id = strings.Trim(strings.TrimPrefix(string(regexpProjectID.Find(out)), `"project_id":`), `"`)
	require.NotEmpty(b, id)
	out, err = exec.Command(awr, "--project", dir, "ready", "--json", "--limit", "1").Output()
	require.NoError(b, err)
	work = strings.Trim(strings.TrimPrefix(string(regexpKey.Find(out)), `"key":`), `"`)
	require.NotEmpty(b, work)
	return id, work
}

// startInProcess serves dir from this process in mode (stdio: the
// server on a pair of pipes; http: the shared service's handler on a
// loopback port) and returns the benchmark's client of it, initialized.
func startInProcess(b *testing.B, mode, dir, id string) *resident {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	r := &resident{Mode: mode, stderr: &process.Output{}}
	if mode == "stdio" {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- mcpserver.Serve(ctx, mcpserver.Options{Project: dir}, inR, outW) }()
		b.Cleanup(func() { inW.Close(); cancel(); outR.Close(); <-done })
		r.in, r.out = inW, bufio.NewReaderSize(outR, 1<<20)
	} else {
		regPath := filepath.Join(b.TempDir(), "registry.toml")
		reg := fmt.Sprintf("[projects.bench]\nroot = %q\nid = %q\n\n[clients.bench]\ntoken_env = \"AWR_BENCH_MCP_TOKEN\"\ngrants = { bench = \"write\" }\n", dir, id)
		require.NoError(b, os.WriteFile(regPath, []byte(reg), 0o600))
		r.token = strings.Repeat("in-process-bench-token-", 2)
		registry, err := mcpserver.ReadRegistry(regPath, func(string) string { return r.token })
		require.NoError(b, err)
		sh, err := mcpserver.NewShared(ctx, mcpserver.SharedOptions{Registry: registry})
		require.NoError(b, err)
		ln, err := mcpserver.Listen("127.0.0.1:0")
		require.NoError(b, err)
		done := make(chan struct{})
		go func() { defer close(done); _ = sh.Serve(ctx, ln, nil) }()
		b.Cleanup(func() { cancel(); <-done; sh.Close() })
		r.url, r.project, r.client = "http://"+ln.Addr().String()+mcpserver.SharedPath, "bench", &http.Client{}
	}
	require.NoError(b, r.initialize())
	return r
}

// BenchmarkResidentPaused calls each tool of residentCalls through warm
// awr-mcp servers on stdio after a pause (AWR_BENCH_PAUSE, default
// 1.5 s: an agent's pause between two calls, past pgxpool's one second
// after which it pinged a connection before handing it out), one server
// for each project of AWR_BENCH_RESIDENT and each build of
// AWR_BENCH_MCPS (comma-separated NAME=PATH; default: this tree's),
// every server called in turn in each round, so that the builds and the
// stores share the machine's load. It reports each server's p50 and p95
// per tool, in ms. Slow: every call waits the pause first; skipped
// without AWR_BENCH_RESIDENT.
//
//	AWR_BENCH_RESIDENT=/tmp/P,/tmp/PG AWR_BENCH_MCPS=main=/tmp/mcp-main,new=/tmp/mcp-new go test ./internal/lab/bench -run '^$' -bench '^BenchmarkResidentPaused$' -benchtime 10x
func BenchmarkResidentPaused(b *testing.B) {
	dirs := os.Getenv("AWR_BENCH_RESIDENT")
	if dirs == "" {
		b.Skip("AWR_BENCH_RESIDENT names no project")
	}
	pause := 1500 * time.Millisecond
	if v := os.Getenv("AWR_BENCH_PAUSE"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(b, err, "AWR_BENCH_PAUSE")
		pause = d
	}
	builds := [][2]string{{"this", ""}}
	if v := os.Getenv("AWR_BENCH_MCPS"); v != "" {
		builds = nil
		for _, nb := range strings.Split(v, ",") {
			name, path, ok := strings.Cut(nb, "=")
			require.True(b, ok, "AWR_BENCH_MCPS: NAME=PATH, not %q", nb)
			builds = append(builds, [2]string{name, path})
		}
	}
	type server struct {
		name  string
		r     *resident
		calls []residentCall
		wall  [][]float64
	}
	var servers []*server
	for _, dir := range strings.Split(dirs, ",") {
		_, work := residentTarget(b, dir)
		for _, build := range builds {
			exe := build[1]
			if exe == "" {
				exe = testkit.Release(b, testkit.AWRMCP)
			}
			r, err := startStdio(context.Background(), exe, dir)
			require.NoError(b, err)
			defer r.Close()
			calls := residentCalls(work, "migrations", 5000)
			for _, c := range calls {
				_, err := r.Call(c.tool, c.args)
				require.NoError(b, err)
			}
			servers = append(servers, &server{name: filepath.Base(dir) + "/" + build[0], r: r, calls: calls, wall: make([][]float64, len(calls))})
		}
	}
	b.ResetTimer()
	for range b.N {
		for ci := range servers[0].calls {
			for _, s := range servers {
				c := s.calls[ci]
				time.Sleep(pause)
				t0 := time.Now()
				_, err := s.r.Call(c.tool, c.args)
				require.NoError(b, err)
				s.wall[ci] = append(s.wall[ci], float64(time.Since(t0).Microseconds())/1000)
			}
		}
	}
	b.StopTimer()
	for _, s := range servers {
		for ci, c := range s.calls {
			w := slices.Clone(s.wall[ci])
			slices.Sort(w)
			name := strings.ReplaceAll(c.name, " ", "_")
			b.ReportMetric(w[len(w)/2], s.name+"/"+name+"-p50-ms")
			b.ReportMetric(w[int(0.95*float64(len(w)-1))], s.name+"/"+name+"-p95-ms")
		}
	}
}
