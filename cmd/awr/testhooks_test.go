package main

import (
	"os"

	"github.com/awr-dev/awr/events"
)

// The test binary, which doubles as awr in the scripts, honours the test
// hooks AWR_TEST_NOW, AWR_TEST_CRASHPOINT (which only a rig package built
// with the awrtest tag acts on) and AWR_VERIFY_PAYLOADS=1: this init runs
// before testscript.Main hands a script's `exec awr` to main.
func init() {
	testNow = func() string { return os.Getenv("AWR_TEST_NOW") }
	testCrashpoint = func() string { return os.Getenv("AWR_TEST_CRASHPOINT") }
	events.SetVerifyPayloads(os.Getenv("AWR_VERIFY_PAYLOADS") == "1")
}
