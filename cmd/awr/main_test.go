package main

import (
	"testing"

	"github.com/awr-dev/awr/fixtures/scripttest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// TestMain cleans up the programs testkit built.
func TestMain(m *testing.M) { testkit.Run(m) }

// TestScripts runs every testdata/script/*.txtar against the real awr
// binary, and every hint the scripts print (fixtures/scripttest).
// Slow: the scripts start a few hundred awr processes, and the hints they print run too.
func TestScripts(t *testing.T) { scripttest.Scripts(t, nil) }
