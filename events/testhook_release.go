//go:build !awrtest

package events

// verifyPayloadsOn reports whether the payload check runs: only when a
// test turned it on (SetVerifyPayloads); AWR_VERIFY_PAYLOADS is not read.
func verifyPayloadsOn() bool { return verifyPayloads.Load() }
