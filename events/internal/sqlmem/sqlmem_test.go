package sqlmem

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"modernc.org/libc"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func TestClassBoundaries(t *testing.T) {
	for _, c := range []struct {
		n    int32
		want int
	}{
		{1, -1},
		{2040, -1}, // 2 KiB less the header: served by the default allocator
		{2041, 12},
		{4088, 12}, // fills a 4 KiB slot exactly
		{4089, 13},
		{8184, 13},
		{8185, 14},
		{1<<26 - header, 26},
		{1<<26 - header + 1, -1}, // beyond the largest class
	} {
		if got := classOf(c.n); got != c.want {
			t.Errorf("classOf(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		size int32
		want int
	}{
		{4088, 12},
		{4096, -1}, // not a class size: a block the default allocator sized itself
		{4000, -1},
		{8184, 13},
		{2040, -1},
	} {
		if got := classOfBlock(c.size); got != c.want {
			t.Errorf("classOfBlock(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// TestSQLiteUsesIt runs real SQLite work heavy enough to split pages and
// spill the page cache, and checks that the database is sound and that
// freed blocks came back as later allocations.
func TestSQLiteUsesIt(t *testing.T) {
	if !Install() {
		t.Fatal("Install: SQLite refused the allocator (a connection was opened before it?)")
	}
	if !Installed() {
		t.Fatal("Installed reports false after Install succeeded")
	}
	before := ReadStats()
	path := filepath.Join(t.TempDir(), "t.db")
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := sqlitex.ExecuteScript(conn, `
PRAGMA cache_size = 50;
CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID;
CREATE INDEX t_v ON t (v);`, nil); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	want := map[string][]byte{}
	for batch := 0; batch < 20; batch++ {
		if err := sqlitex.Execute(conn, "BEGIN", nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 200; i++ {
			k := fmt.Sprintf("k%08d", r.IntN(1_000_000))
			v := make([]byte, 100+r.IntN(3000))
			for j := range v {
				v[j] = byte(r.IntN(256))
			}
			want[k] = v
			if err := sqlitex.Execute(conn, "INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", &sqlitex.ExecOptions{Args: []any{k, v}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := sqlitex.Execute(conn, "COMMIT", nil); err != nil {
			t.Fatal(err)
		}
	}
	var check string
	if err := sqlitex.Execute(conn, "PRAGMA integrity_check", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		check = s.ColumnText(0)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if check != "ok" {
		t.Fatalf("integrity_check: %s", check)
	}
	got := 0
	if err := sqlitex.Execute(conn, "SELECT k, v FROM t", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		k := s.ColumnText(0)
		v := make([]byte, s.ColumnLen(1))
		s.ColumnBytes(1, v)
		if !bytes.Equal(v, want[k]) {
			return fmt.Errorf("row %s: read back %d bytes that differ from the %d written", k, len(v), len(want[k]))
		}
		got++
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if got != len(want) {
		t.Fatalf("read back %d rows, wrote %d distinct keys", got, len(want))
	}
	after := ReadStats()
	if after.Reused <= before.Reused {
		t.Errorf("no freed block was reused: %+v -> %+v", before, after)
	}
	if after.KeptBytes > keepBytes {
		t.Errorf("free lists hold %d bytes, over the bound %d", after.KeptBytes, keepBytes)
	}
}

// TestReallocAcrossClasses calls the entry points as SQLite does and
// checks that a block keeps its bytes when it grows or shrinks across
// classes and to and from the default allocator's sizes.
func TestReallocAcrossClasses(t *testing.T) {
	if !Install() {
		t.Fatal("Install failed")
	}
	tls := libc.NewTLS()
	defer tls.Close()
	fill := func(p uintptr, n int32, seed byte) {
		b := libc.GoBytes(p, int(n))
		for i := range b {
			b[i] = seed + byte(i*7)
		}
	}
	same := func(p uintptr, n int32, seed byte) bool {
		b := libc.GoBytes(p, int(n))
		for i := range b {
			if b[i] != seed+byte(i*7) {
				return false
			}
		}
		return true
	}
	p := xMalloc(tls, 100) // default allocator
	if p == 0 {
		t.Fatal("xMalloc(100) failed")
	}
	fill(p, 100, 1)
	steps := []int32{3000, 3500, 20000, 5000, 1000, 70000, 64}
	n := int32(100)
	for _, m := range steps {
		q := xRealloc(tls, p, m)
		if q == 0 {
			t.Fatalf("xRealloc(%d -> %d) failed", n, m)
		}
		keep := min(n, m)
		if !same(q, keep, 1) {
			t.Fatalf("xRealloc(%d -> %d) lost bytes", n, m)
		}
		if got := xSize(tls, q); got < m {
			t.Fatalf("xSize after xRealloc to %d = %d", m, got)
		}
		if k := classOf(m); k >= 0 && xSize(tls, q) != classSize(k) {
			t.Fatalf("a request of %d got %d bytes, want its class size %d", m, xSize(tls, q), classSize(k))
		}
		if classOf(m) >= 0 && classOf(m) == classOf(n) && q != p {
			t.Fatalf("xRealloc within class %d moved the block", classOf(m))
		}
		fill(q, m, 1)
		p, n = q, m
	}
	xFree(tls, p)
	if got := xRoundup(tls, 3000); got != 4088 {
		t.Errorf("xRoundup(3000) = %d, want 4088", got)
	}
	if got := xRoundup(tls, 4089); got != 8184 {
		t.Errorf("xRoundup(4089) = %d, want 8184", got)
	}
	// A freed block of a class comes back for the next request of it.
	a := xMalloc(tls, 9000)
	xFree(tls, a)
	if b := xMalloc(tls, 10000); b != a {
		t.Errorf("a freed 16 KiB-class block was not reused: got %#x, freed %#x", b, a)
	} else {
		xFree(tls, b)
	}
}
