package main

import "os"

// The test hooks read from the environment, each "" in the shipped binary:
// testNow returns AWR_TEST_NOW, the start of a test's clock (see clock);
// testCrashpoint returns AWR_TEST_CRASHPOINT, where `rig up` kills itself
// (internal/rig/crash_awrtest.go); testProgressAfter returns
// AWR_TEST_PROGRESS_AFTER, how long a job runs before its progress bar is
// drawn (progressDelay). Only a test build reads them: a binary built
// with the awrtest tag (testhooks_awrtest.go), which the test scripts
// run, and cmd/awr's test binary (testhooks_test.go). The shipped binary,
// built without the tag, reads no AWR_TEST_* variable (nor
// AWR_VERIFY_PAYLOADS, see events.SetVerifyPayloads): the names are not
// even in it.
var (
	testNow           = func() string { return "" }
	testCrashpoint    = func() string { return "" }
	testProgressAfter = func() string { return "" }
)

// testMain is what main runs: the command line, or in a test build run
// by a test script, the command line and then the hints it printed
// (hintrun_awrtest.go).
var testMain = func() int { return run(os.Args[1:], os.Stdout, os.Stderr) }
