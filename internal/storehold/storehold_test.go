package storehold_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/internal/storehold"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// hold serves a holder of url in a new directory for the test, and
// returns its directory and the channel Serve's result arrives on; the
// holder stops when the test ends.
func hold(t *testing.T, url string, opts storehold.Options) (string, <-chan error) {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "hold") // a socket's path must be short
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o700))
	dir := filepath.Join(base, "store")
	ctx, cancel := context.WithCancel(context.Background())
	done, stopped := make(chan error, 1), make(chan struct{})
	go func() {
		done <- storehold.Serve(ctx, url, dir, opts)
		close(stopped)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(60 * time.Second):
			t.Error("the holder did not stop")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(storehold.Socket(dir)); err == nil {
			return dir, done
		}
		select {
		case err := <-done:
			t.Fatalf("the holder ended: %v", err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "the holder's socket never appeared")
		time.Sleep(10 * time.Millisecond)
	}
}

// through connects to the store through the holder in dir.
func through(t *testing.T, url, dir string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	cfg.Host, cfg.Port, cfg.TLSConfig, cfg.Fallbacks = dir, storehold.Port, nil, nil
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	require.NoError(t, err)
	return conn
}

func backend(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var pid int
	require.NoError(t, c.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid))
	return pid
}

// TestHolder_KeepsConnections: clients that come one after the other
// through the holder get backends the holder keeps, not one started for
// each, and each reset: a setting, a
// temporary table and a transaction a client left behind are gone for
// the next.
func TestHolder_KeepsConnections(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	dir, _ := hold(t, url, storehold.Options{})

	first := through(t, url, dir)
	pid := backend(t, first)
	_, err := first.Exec(ctx, "SET application_name = 'left behind'")
	require.NoError(t, err)
	_, err = first.Exec(ctx, "CREATE TEMP TABLE left_behind (x int)")
	require.NoError(t, err)
	require.NoError(t, first.Close(ctx))

	served := map[int]int{} // backend: clients
	for range 10 {
		c := through(t, url, dir)
		var name string
		var temp bool
		require.NoError(t, c.QueryRow(ctx, "SELECT current_setting('application_name'), to_regclass('pg_temp.left_behind') IS NOT NULL").Scan(&name, &temp))
		require.NotEqual(t, "left behind", name, "the setting was reset")
		require.False(t, temp, "the temporary table was dropped")
		served[backend(t, c)]++
		require.NoError(t, c.Close(ctx))
	}
	// Connected directly, 10 clients are 10 backends; through the holder,
	// the backends it keeps serve them by turns (the first client's, a
	// spare, and one started when a client came before the connection the
	// previous one left was back).
	require.Less(t, len(served), 10, "backends of 10 clients: %v (the first: %d)", served, pid)
	most := 0
	for _, n := range served {
		most = max(most, n)
	}
	require.GreaterOrEqual(t, most, 3, "a kept backend serves client after client: %v", served)
}

// TestHolder_AbandonedTransaction: a client that leaves inside a
// transaction (killed mid-write) leaves nothing behind: the holder closes
// that server connection, so the server rolls the transaction back and
// releases its locks, and the next client gets another backend.
func TestHolder_AbandonedTransaction(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	direct, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer direct.Close(ctx)
	_, err = direct.Exec(ctx, "CREATE TABLE t (x int PRIMARY KEY)")
	require.NoError(t, err)
	dir, _ := hold(t, url, storehold.Options{})

	c := through(t, url, dir)
	pid := backend(t, c)
	_, err = c.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "SELECT * FROM t WHERE x = 1 FOR UPDATE")
	require.NoError(t, err)
	require.NoError(t, c.PgConn().Conn().Close()) // gone without a word

	next := through(t, url, dir)
	defer next.Close(ctx)
	require.NotEqual(t, pid, backend(t, next), "the abandoned backend is not handed on")
	// The row's insert was rolled back: inserting it again neither
	// waits on a lock nor conflicts.
	lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err = next.Exec(lctx, "INSERT INTO t VALUES (1)")
	require.NoError(t, err)
}

// TestHolder_ServerEndedConnection: a kept connection the server ended
// while it was idle (pg_terminate_backend, a restart) is not handed to a
// client: the next client gets a working one.
func TestHolder_ServerEndedConnection(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	dir, _ := hold(t, url, storehold.Options{})
	c := through(t, url, dir)
	pid := backend(t, c)
	require.NoError(t, c.Close(ctx))

	direct, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer direct.Close(ctx)
	// Every backend of the database but this one: the kept ones. Ended
	// until none is left: the holder may still be starting the spare it
	// began when it handed c its connection, whose backend appears only
	// after a first round of ends (a loaded machine made that race real).
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err = direct.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
		require.NoError(t, err)
		var n int
		require.NoError(t, direct.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&n))
		if n == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the kept backends (%d) never ended", n)
		time.Sleep(10 * time.Millisecond)
	}

	for range 3 {
		next := through(t, url, dir)
		require.NotEqual(t, pid, backend(t, next))
		require.NoError(t, next.Close(ctx))
	}
}

// TestHolder_IdleExit: a holder with no client for its idle time closes
// its socket and returns.
func TestHolder_IdleExit(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir, done := hold(t, url, storehold.Options{Idle: 100 * time.Millisecond})
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the holder did not exit when idle")
	}
	_, err := os.Stat(storehold.Socket(dir))
	require.ErrorIs(t, err, os.ErrNotExist, "the socket is removed")
}

// TestHolder_OneByDirectory: a second holder of the same directory
// returns at once, leaving the first serving.
func TestHolder_OneByDirectory(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir, _ := hold(t, url, storehold.Options{})
	require.NoError(t, storehold.Serve(context.Background(), url, dir, storehold.Options{}))
	c := through(t, url, dir)
	require.NoError(t, c.Close(context.Background()))
}

// TestHolder_RefusesOpenDirectory: a directory others may enter is
// refused, nothing listens there.
func TestHolder_RefusesOpenDirectory(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	base, err := os.MkdirTemp("/tmp", "hold")
	require.NoError(t, err)
	defer os.RemoveAll(base)
	require.NoError(t, os.Chmod(base, 0o755))
	dir := filepath.Join(base, "store")
	require.NoError(t, os.Mkdir(dir, 0o755))
	err = storehold.Serve(context.Background(), url, dir, storehold.Options{})
	require.ErrorContains(t, err, "not a directory of this user's alone")
	_, err = os.Stat(storehold.Socket(dir))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestDir: the holder's directory follows the URL and the PG*
// environment, and AWR_STORE_HOLD=off turns the holder off.
func TestDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/test")
	a := storehold.Dir("postgres://h/db")
	require.NotEmpty(t, a)
	require.Equal(t, a, storehold.Dir("postgres://h/db"))
	require.NotEqual(t, a, storehold.Dir("postgres://h/other"))
	t.Setenv("PGPASSWORD", "another")
	require.NotEqual(t, a, storehold.Dir("postgres://h/db"), "another password, another holder")
	t.Setenv(storehold.EnvOff, "off")
	require.Empty(t, storehold.Dir("postgres://h/db"))
}

// TestPrivate: a command connects only to a socket in directories of its
// user's alone: not one another user owns, others may enter, or a link.
func TestPrivate(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	require.NoError(t, os.Chmod(base, 0o700))
	dir := filepath.Join(base, "store")
	require.False(t, storehold.Private(dir), "missing")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.True(t, storehold.Private(dir))
	require.NoError(t, os.Chmod(dir, 0o755))
	require.False(t, storehold.Private(dir), "others may enter")
	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, os.Chmod(base, 0o777))
	require.False(t, storehold.Private(dir), "others may enter the directory above")
	require.NoError(t, os.Chmod(base, 0o700))
	other := filepath.Join(base, "other")
	require.NoError(t, os.Mkdir(other, 0o700))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(other, link))
	require.False(t, storehold.Private(link), "a link")
	if os.Getuid() == 0 {
		require.NoError(t, os.Chown(dir, 65534, 65534))
		require.False(t, storehold.Private(dir), "another user's")
	}
}

// TestDir_CredentialFiles: a holder is named by the content of the files
// credentials come from, not only by their names: the same URL with
// another ~/.pgpass (PGPASSFILE) content, another service file or
// another client key names another holder, and an unchanged file the
// same one.
func TestDir_CredentialFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/test")
	t.Setenv(storehold.EnvOff, "")
	for _, k := range []string{"PGPASSFILE", "PGSERVICEFILE", "PGSSLCERT", "PGSSLKEY", "PGSSLROOTCERT", "PGPASSWORD"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	const url = "postgres://alice@db.internal:5432/awr"
	none := storehold.Dir(url)
	require.NotEmpty(t, none)

	pgpass := filepath.Join(home, ".pgpass")
	require.NoError(t, os.WriteFile(pgpass, []byte("db.internal:5432:awr:alice:first\n"), 0o600))
	first := storehold.Dir(url)
	require.NotEqual(t, none, first, "a ~/.pgpass appeared")
	require.Equal(t, first, storehold.Dir(url), "the same file, the same holder")
	require.NoError(t, os.WriteFile(pgpass, []byte("db.internal:5432:awr:alice:second\n"), 0o600))
	second := storehold.Dir(url)
	require.NotEqual(t, first, second, "another password in ~/.pgpass")

	// PGPASSFILE names another file: its content counts, not ~/.pgpass's.
	other := filepath.Join(t.TempDir(), "pass")
	require.NoError(t, os.WriteFile(other, []byte("db.internal:5432:awr:alice:first\n"), 0o600))
	t.Setenv("PGPASSFILE", other)
	viaEnv := storehold.Dir(url)
	require.NotEqual(t, second, viaEnv)
	require.NoError(t, os.WriteFile(other, []byte("db.internal:5432:awr:alice:third\n"), 0o600))
	require.NotEqual(t, viaEnv, storehold.Dir(url), "another password in PGPASSFILE's file")
	// So does a passfile named in the URL.
	withParam := storehold.Dir(url + "?passfile=" + other)
	require.NoError(t, os.WriteFile(other, []byte("db.internal:5432:awr:alice:fourth\n"), 0o600))
	require.NotEqual(t, withParam, storehold.Dir(url+"?passfile="+other), "another password in the URL's passfile")

	// The service file and the client's key too.
	before := storehold.Dir(url)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".pg_service.conf"), []byte("[awr]\nhost=db.internal\n"), 0o600))
	require.NotEqual(t, before, storehold.Dir(url), "a service file")
	before = storehold.Dir(url)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".postgresql"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".postgresql", "postgresql.key"), []byte("key"), 0o600))
	require.NotEqual(t, before, storehold.Dir(url), "a client key")
}
