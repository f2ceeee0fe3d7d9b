//go:build awrtest

package main

import "os"

// A binary built with the awrtest tag honours the test hooks (the events
// package reads AWR_VERIFY_PAYLOADS itself, events/testhook_awrtest.go).
func init() {
	testNow = func() string { return os.Getenv("AWR_TEST_NOW") }
	testCrashpoint = func() string { return os.Getenv("AWR_TEST_CRASHPOINT") }
	testProgressAfter = func() string { return os.Getenv("AWR_TEST_PROGRESS_AFTER") }
}
