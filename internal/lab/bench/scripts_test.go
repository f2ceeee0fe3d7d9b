package bench_test

import (
	"testing"

	"github.com/awr-dev/awr/fixtures/scripttest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// TestMain cleans up the programs testkit built for the scripts.
func TestMain(m *testing.M) { testkit.Run(m) }

// TestScripts runs the scripts of `awr bench` (testdata/script/*.txtar)
// against the real awr binary, and every hint they print.
// Slow: each script generates and measures projects of hundreds of events.
func TestScripts(t *testing.T) {
	// awr-mcp beside awr: bench run measures the resident path through it.
	testkit.Program(t, testkit.AWRMCP)
	scripttest.Scripts(t, nil)
}
