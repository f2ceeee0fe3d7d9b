package events

import "sync/atomic"

// verifyPayloads is the tests' check that a typed append hands the
// projectors what a replay reads (see insertTyped); off unless a test
// turns it on.
var verifyPayloads atomic.Bool

// SetVerifyPayloads turns the payload check on or off for every store of
// the process and returns the previous setting: with it on, each append of
// a typed payload also decodes the stored bytes and refuses (Internal) a
// payload that does not decode to the value given. It is the tests'
// check; nothing in awr's commands calls it, and the shipped binary does
// not read AWR_VERIFY_PAYLOADS (only a binary built with the awrtest tag
// does, testhook_awrtest.go).
func SetVerifyPayloads(on bool) (was bool) { return verifyPayloads.Swap(on) }
