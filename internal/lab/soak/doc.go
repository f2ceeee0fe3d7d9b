// Package soak holds the crash soak of the full handoff and the storage
// fault tests. Its test binary doubles as the child process: with
// AWR_TEST_CHILD set, TestMain runs the named child mode instead of the
// tests.
package soak
