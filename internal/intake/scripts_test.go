package intake_test

import (
	"testing"

	"github.com/awr-dev/awr/fixtures/scripttest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// TestMain cleans up the programs testkit built for the scripts.
func TestMain(m *testing.M) { testkit.Run(m) }

// TestScripts runs the scripts of intake (`awr init`, `awr intake`,
// discovery and the manifest: testdata/script/*.txtar) against the real
// awr binary, and every hint they print.
// Slow: about 200 awr processes, and the hints they print run too.
func TestScripts(t *testing.T) { scripttest.Scripts(t, nil) }
