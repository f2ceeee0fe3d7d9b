package main

import (
	"os"

	"github.com/awr-dev/awr/events"
)

// The test binary honours the test hooks AWR_TEST_NOW,
// AWR_TEST_CRASHPOINT (which only a rig package built with the awrtest
// tag acts on) and AWR_VERIFY_PAYLOADS=1 in the commands its tests run
// in process, as the awrtest build of awr does in the scripts.
func init() {
	testNow = func() string { return os.Getenv("AWR_TEST_NOW") }
	testCrashpoint = func() string { return os.Getenv("AWR_TEST_CRASHPOINT") }
	testProgressAfter = func() string { return os.Getenv("AWR_TEST_PROGRESS_AFTER") }
	events.SetVerifyPayloads(os.Getenv("AWR_VERIFY_PAYLOADS") == "1")
}
