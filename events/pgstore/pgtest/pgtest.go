// Package pgtest gives tests a PostgreSQL database of their own on the
// server AWR_TEST_POSTGRES names (.ci/pg-up starts one): without it a test
// skips, naming the command that starts a server, except in CI, where the
// PostgreSQL tests must run and it fails. OwnCluster gives the fault tests
// (the soak's storms, cmd/awr's Jepsen run) a cluster of their own to
// restart and end the connections of. Listen, Refuse and Relay put a
// server the tests shape in front of it: one that refuses connections
// with a SQLSTATE, or one that relays them over TCP.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable that points the tests at a
// PostgreSQL server whose databases they may create and drop.
const EnvURL = "AWR_TEST_POSTGRES"

// ServerURL returns the test server's URL, or skips t (fails it in CI).
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: the PostgreSQL tests must run in CI; .ci/run starts a cluster (.ci/pg-up) and sets it", EnvURL)
		}
		t.Skipf("%s is not set: start a throwaway PostgreSQL cluster with `eval \"$(.ci/pg-up)\"` from the repository root, then rerun", EnvURL)
	}
	return u
}

var count atomic.Int64

// NewDatabase creates an empty database on the test server, dropped when t
// ends, and returns its URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := ServerURL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvURL, err)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("awr_test_%d_%d", os.Getpid(), count.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s must be a postgres:// URL: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}
