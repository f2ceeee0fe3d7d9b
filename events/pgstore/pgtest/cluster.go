package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/jackc/pgx/v5"
)

// Cluster is a PostgreSQL cluster of one test's own (.ci/pg-up), which the
// test may restart and end the connections of without disturbing the
// other tests' server.
type Cluster struct {
	// URL is the cluster's postgres database; Dir holds its data, its
	// binaries' directory (bindir) and its server log.
	URL, Dir string
}

// OwnCluster starts a cluster for t, stopped when t ends. It runs where
// the PostgreSQL tests run (ServerURL: AWR_TEST_POSTGRES set; in CI they
// must).
func OwnCluster(t testing.TB) *Cluster {
	t.Helper()
	ServerURL(t)
	out, err := exec.Command(testkit.Path(".ci", "pg-up")).Output()
	if err != nil {
		t.Fatalf(".ci/pg-up: %v: %s", err, out)
	}
	c := &Cluster{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, "'")
		switch k {
		case EnvURL:
			c.URL = v
		case "AWR_TEST_POSTGRES_DIR":
			c.Dir = v
		}
	}
	if c.Dir == "" {
		t.Fatalf(".ci/pg-up printed no directory: %s", out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(testkit.Path(".ci", "pg-down"), c.Dir).CombinedOutput(); err != nil {
			t.Errorf(".ci/pg-down: %v: %s", err, out)
		}
	})
	return c
}

// CreateDatabase creates the database name on the cluster and returns its
// URL.
func (c *Cluster) CreateDatabase(t testing.TB, name string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatalf("connect to the cluster: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return strings.Replace(c.URL, "///postgres?", "///"+name+"?", 1)
}

// Restart restarts the server (pg_ctl restart, fast shutdown), waiting at
// most 60 s for it to be up again; its output goes to the server log in
// Dir. It runs pg_ctl as the postgres user when root.
func (c *Cluster) Restart() error {
	bindir, err := os.ReadFile(filepath.Join(c.Dir, "bindir"))
	if err != nil {
		return err
	}
	argv := []string{filepath.Join(strings.TrimSpace(string(bindir)), "pg_ctl"), "-D", filepath.Join(c.Dir, "data"),
		"restart", "-m", "fast", "-w", "-t", "60", "-l", filepath.Join(c.Dir, "server.log")}
	if os.Getuid() == 0 {
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	// The server's output goes to its log (-l): a pipe held by the
	// restarted server would never close.
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %v: %s", argv, err, out)
	}
	return nil
}

// Terminate ends every other connection to database db, or with db ""
// every other client connection to the cluster (pg_terminate_backend), and
// returns how many it ended.
func (c *Cluster) Terminate(db string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	query := `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND backend_type = 'client backend') AS ended`
	var args []any
	if db != "" {
		query = `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND datname = $1) AS ended`
		args = append(args, db)
	}
	var n int
	err = conn.QueryRow(ctx, query, args...).Scan(&n)
	return n, err
}
