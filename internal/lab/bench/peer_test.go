package bench_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// peerBD is the bd to compare with: AWR_TEST_PEER_BD (what
// .ci/peer-install prints), else bd on PATH. Without one the test is
// skipped, except under CI, where bd must be installed.
func peerBD(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AWR_TEST_PEER_BD"); p != "" {
		return p
	}
	if p, err := exec.LookPath("bd"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no bd: under CI the peer must be installed (eval \"$(.ci/peer-install)\" exports AWR_TEST_PEER_BD)")
	}
	t.Skip("no bd on PATH and no AWR_TEST_PEER_BD: go install github.com/steveyegge/beads/cmd/bd@v0.22.0")
	return ""
}

// TestComparePeer_Quick runs the short form of `awr bench compare --peer
// bd` in process against the real bd: both sides hold the same work
// (the same items, the same ready set), every operation is timed on
// every side in every round, the ratios and scaling figures are there,
// claims are undone, and bd's daemon is gone at the end. No time is
// asserted. One round of each on one workload of 10 items: bd direct
// costs a second or more a process (it compiles its WebAssembly SQLite
// each time). The scaling figures, which need two workloads, are
// bench_peer.txtar's (awr's sides alone).
func TestComparePeer_Quick(t *testing.T) {
	testkit.PlainOnly(t, "its subject runs in awr and bd processes")
	t.Parallel()
	bd := peerBD(t)
	bin := testkit.Programs(t, testkit.AWR, testkit.AWRMCP)
	dir := t.TempDir()
	const rounds = 1
	sizes := []int{10}
	res, err := bench.ComparePeer(context.Background(), bench.PeerOptions{Exe: filepath.Join(bin, "awr"), MCPExe: filepath.Join(bin, "awr-mcp"),
		Peer: "bd", PeerBin: bd, Sizes: sizes, Rounds: rounds, ImportRounds: 1, Dir: dir})
	require.NoError(t, err)
	require.Empty(t, res.PeerMissing)
	require.True(t, strings.HasPrefix(res.PeerVersion, "bd version "), res.PeerVersion)
	require.Equal(t, filepath.Join(bin, "awr-mcp"), res.Resident)
	require.Len(t, res.Sizes, len(sizes))
	allSides := []string{bench.SideCLI, bench.SideStdio, bench.SideHTTP, bench.SideDirect, bench.SideDaemon}
	for i, sz := range res.Sizes {
		require.Equal(t, sizes[i], sz.Items)
		require.True(t, sz.Same, "%+v", sz)
		require.Equal(t, sz.Items, sz.PeerItems)
		require.Equal(t, sz.Ready, sz.PeerReady)
		require.Equal(t, sz.Ready, sz.PeerReadyListed)
		require.Positive(t, sz.Ready)
		require.Positive(t, sz.SearchHits[bench.SideCLI], sz.SearchWord)
		require.Positive(t, sz.SearchHits[bench.SideDirect], sz.SearchWord)
		var ops []string
		for _, op := range sz.Ops {
			ops = append(ops, op.Op)
			var names []string
			for _, m := range op.Sides {
				names = append(names, m.Name)
				require.Equal(t, "ms", m.Unit)
				require.Positive(t, m.Median, "%s %s", op.Op, m.Name)
			}
			if op.Op == "import" {
				require.Equal(t, []string{bench.SideCLI, bench.SideDirect}, names)
				require.Len(t, op.Ratios, 1)
				require.Equal(t, 1, op.Sides[0].Count)
				continue
			}
			require.Equal(t, allSides, names, op.Op)
			require.Len(t, op.Ratios, 6, op.Op)
			for _, m := range op.Sides {
				require.Equal(t, rounds, m.Count, "%s %s", op.Op, m.Name)
			}
			for _, r := range op.Ratios {
				require.Positive(t, r.Ratio)
			}
			require.Len(t, op.Commands, len(allSides))
		}
		require.Equal(t, []string{"ready", "ready --limit 10", "show", "status", "search", "claim", "import"}, ops)

		// The claims were undone: awr's ready set is what it was.
		p, err := project.Open(context.Background(), filepath.Join(dir, strconv.Itoa(sz.Items), "awr"), project.Options{})
		require.NoError(t, err)
		ready, err := p.Ready(context.Background(), project.ReadyRequest{})
		p.Close()
		require.NoError(t, err)
		require.Equal(t, sz.Ready, ready.ReadyTotal)

		// bd's daemon is gone.
		raw, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(sz.Items), "bd", ".beads", "daemon.pid"))
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			require.NoError(t, err)
			deadline := time.Now().Add(60 * time.Second)
			for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				require.True(t, time.Now().Before(deadline), "bd's daemon %d still runs", pid)
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	require.Empty(t, res.Scaling)
	require.Len(t, res.Limited, len(allSides))
	for i, f := range res.Limited {
		require.Equal(t, allSides[i], f.Side)
		require.Equal(t, "ready --limit 10 / ready", f.Op)
		require.Positive(t, f.Ratio)
	}
}

// TestComparePeer_BadInput: an unknown peer, a --peer-bin that is not
// an executable file and a size out of range are InvalidInput, before
// anything is built. (Without bd the run measures awr alone:
// bench_peer.txtar.)
func TestComparePeer_BadInput(t *testing.T) {
	t.Parallel()
	for _, opts := range []bench.PeerOptions{
		{Peer: "linear"},
		{Peer: "bd", PeerBin: filepath.Join(t.TempDir(), "nope")},
		{Peer: "bd", Sizes: []int{0}},
		{Peer: "bd", Sizes: []int{bench.MaxTasks + 1}},
	} {
		_, err := bench.ComparePeer(context.Background(), opts)
		require.Equal(t, fault.InvalidInput, fault.As(err).Code, "%+v: %v", opts, err)
	}
}
