package main

// The test hooks read from the environment, each "" in the shipped binary:
// testNow returns AWR_TEST_NOW, the start of a test's clock (see clock);
// testCrashpoint returns AWR_TEST_CRASHPOINT, where `rig up` kills itself
// (internal/rig/crash_awrtest.go). Only a test build reads them: a binary built
// with the awrtest tag (testhooks_awrtest.go) and the test binary that
// doubles as awr in the scripts (testhooks_test.go). The shipped binary,
// built without the tag, reads no AWR_TEST_* variable (nor
// AWR_VERIFY_PAYLOADS, see events.SetVerifyPayloads): the names are not
// even in it.
var (
	testNow        = func() string { return "" }
	testCrashpoint = func() string { return "" }
)
