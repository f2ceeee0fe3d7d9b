// Package sqlmem keeps SQLite's large allocations for reuse instead of
// handing them back to the operating system at every free.
//
// The pure-Go SQLite (modernc.org/sqlite) allocates through modernc's
// libc, whose allocator maps a fresh region for every block over 16 KiB
// and unmaps it at its free, and unmaps a 64 KiB run of smaller slots as
// soon as its last slot is freed. SQLite frees and allocates such blocks
// all the time: a B-tree page split takes a scratch buffer of a few pages
// (balance_nonroot), the page cache and the statement journal allocate
// page buffers. Each round trip is an mmap, a munmap with its TLB
// shootdown, and page faults on memory that was just given back; in a
// rebuild of the projections that was a third of the time.
//
// Install puts an allocator in front of SQLite's default one (through
// sqlite3_config(SQLITE_CONFIG_MALLOC), before SQLite initialises): a
// request over 2 KiB is rounded up to a size class (a power of two less
// the default allocator's 8-byte header, so each class fills the slot
// or mapping it gets), and a freed block of a class is kept on that
// class's free list, up to a bound on the bytes kept, for the next
// request of the class. Smaller requests go straight to the default
// allocator, which serves them from shared slots.
package sqlmem

import (
	"math/bits"
	"sync"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/sqlite/lib"
)

const (
	// header is what the default allocator (sqlite3MemMalloc) adds in
	// front of every block to record its size.
	header = 8
	// minClass is the smallest class kept: log2 of 4 KiB. Requests of
	// at most 2 KiB - 8 bytes go straight through.
	minClass = 12
	// maxClass is the largest: 64 MiB. Bigger requests go straight
	// through (SQLite makes none in awr's use).
	maxClass = 26
	// keepBytes bounds the bytes of all free lists together: what a
	// long-lived process holds beyond what SQLite uses at its peak.
	keepBytes = 32 << 20
)

// classSize is the size a request of class k is rounded up to.
func classSize(k int) int32 { return int32(1)<<k - header }

// classOf returns the class of a request of n bytes, or -1 for one that
// goes straight to the default allocator.
func classOf(n int32) int {
	if n <= classSize(minClass-1) {
		return -1
	}
	k := bits.Len32(uint32(n + header - 1))
	if k > maxClass {
		return -1
	}
	return k
}

// classOfBlock returns the class of a block whose size the default
// allocator reports as size, or -1 for a block that is not of a class.
func classOfBlock(size int32) int {
	k := classOf(size)
	if k < 0 || classSize(k) != size {
		return -1
	}
	return k
}

var (
	installOnce sync.Once
	installed   bool

	// base is SQLite's default allocator, which Install wraps.
	base lib.Tsqlite3_mem_methods
	// methods is what Install hands SQLite; SQLite copies it.
	methods lib.Tsqlite3_mem_methods

	mu    sync.Mutex
	free  [maxClass + 1][]uintptr
	kept  int64 // bytes on the free lists
	stats Stats
)

// Stats counts what the allocator did since Install.
type Stats struct {
	// Reused is how many requests of a class were served from its free
	// list, Fresh how many went to the default allocator.
	Reused, Fresh int64
	// Kept is how many freed blocks went on a free list, Released how
	// many went back to the default allocator because the lists were
	// full.
	Kept, Released int64
	// KeptBytes is the bytes on the free lists now.
	KeptBytes int64
}

// Install puts the allocator in front of SQLite's default one. It must
// run before any SQLite connection is opened in the process; if one was
// opened first, SQLite refuses the change and Install reports false,
// leaving the default allocator in place (everything works the same,
// only slower). It is safe to call from several goroutines and more than
// once.
func Install() bool {
	installOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		va := tls.Alloc(16)
		defer tls.Free(16)
		if lib.Xsqlite3_config(tls, lib.SQLITE_CONFIG_GETMALLOC, libc.VaList(va, uintptr(unsafe.Pointer(&base)))) != lib.SQLITE_OK || base.FxMalloc == 0 {
			return
		}
		methods = lib.Tsqlite3_mem_methods{
			FxMalloc:   funcPointer(xMalloc),
			FxFree:     funcPointer(xFree),
			FxRealloc:  funcPointer(xRealloc),
			FxSize:     funcPointer(xSize),
			FxRoundup:  funcPointer(xRoundup),
			FxInit:     funcPointer(xInit),
			FxShutdown: funcPointer(xShutdown),
			FpAppData:  base.FpAppData,
		}
		installed = lib.Xsqlite3_config(tls, lib.SQLITE_CONFIG_MALLOC, libc.VaList(va, uintptr(unsafe.Pointer(&methods)))) == lib.SQLITE_OK
	})
	return installed
}

// Installed reports whether Install put the allocator in place.
func Installed() bool {
	installOnce.Do(func() {}) // a call racing Install waits for it
	return installed
}

// ReadStats returns the counters.
func ReadStats() Stats {
	mu.Lock()
	defer mu.Unlock()
	s := stats
	s.KeptBytes = kept
	return s
}

// funcPointer is a Go function as the transpiled SQLite holds a C
// function pointer: the data word of an interface holding the func
// value, which the generated code calls through (see __ccgo_fp in
// modernc.org/sqlite/lib). A top-level function's func value is static,
// so the pointer stays valid.
func funcPointer(f any) uintptr {
	return (*[2]uintptr)(unsafe.Pointer(&f))[1]
}

// The default allocator's entry points, called as the transpiled code
// calls a C function pointer.
func baseMalloc(tls *libc.TLS, n int32) uintptr {
	return (*(*func(*libc.TLS, int32) uintptr)(unsafe.Pointer(&struct{ uintptr }{base.FxMalloc})))(tls, n)
}

func baseFree(tls *libc.TLS, p uintptr) {
	(*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&struct{ uintptr }{base.FxFree})))(tls, p)
}

func baseRealloc(tls *libc.TLS, p uintptr, n int32) uintptr {
	return (*(*func(*libc.TLS, uintptr, int32) uintptr)(unsafe.Pointer(&struct{ uintptr }{base.FxRealloc})))(tls, p, n)
}

func baseSize(tls *libc.TLS, p uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{base.FxSize})))(tls, p)
}

func xMalloc(tls *libc.TLS, n int32) uintptr {
	k := classOf(n)
	if k < 0 {
		return baseMalloc(tls, n)
	}
	mu.Lock()
	if l := free[k]; len(l) > 0 {
		p := l[len(l)-1]
		free[k] = l[:len(l)-1]
		kept -= int64(classSize(k))
		stats.Reused++
		mu.Unlock()
		return p
	}
	stats.Fresh++
	mu.Unlock()
	return baseMalloc(tls, classSize(k))
}

func xFree(tls *libc.TLS, p uintptr) {
	if k := classOfBlock(baseSize(tls, p)); k >= 0 {
		mu.Lock()
		if kept+int64(classSize(k)) <= keepBytes {
			free[k] = append(free[k], p)
			kept += int64(classSize(k))
			stats.Kept++
			mu.Unlock()
			return
		}
		stats.Released++
		mu.Unlock()
	}
	baseFree(tls, p)
}

func xRealloc(tls *libc.TLS, p uintptr, n int32) uintptr {
	old := baseSize(tls, p)
	oldClass, newClass := classOfBlock(old), classOf(n)
	if oldClass < 0 && newClass < 0 {
		return baseRealloc(tls, p, n)
	}
	if oldClass >= 0 && oldClass == newClass {
		return p
	}
	q := xMalloc(tls, n)
	if q == 0 {
		return 0 // p is left as it was, as realloc does
	}
	copy(libc.GoBytes(q, int(min(old, n))), libc.GoBytes(p, int(min(old, n))))
	xFree(tls, p)
	return q
}

func xSize(tls *libc.TLS, p uintptr) int32 { return baseSize(tls, p) }

// xRoundup tells SQLite the size it will get, so it can use all of it.
func xRoundup(tls *libc.TLS, n int32) int32 {
	if k := classOf(n); k >= 0 {
		return classSize(k)
	}
	return (*(*func(*libc.TLS, int32) int32)(unsafe.Pointer(&struct{ uintptr }{base.FxRoundup})))(tls, n)
}

func xInit(tls *libc.TLS, app uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{base.FxInit})))(tls, app)
}

// xShutdown runs at sqlite3_shutdown, after SQLite freed everything: the
// kept blocks go back to the default allocator first.
func xShutdown(tls *libc.TLS, app uintptr) {
	mu.Lock()
	var all []uintptr
	for k := range free {
		all = append(all, free[k]...)
		free[k] = nil
	}
	kept = 0
	mu.Unlock()
	for _, p := range all {
		baseFree(tls, p)
	}
	(*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&struct{ uintptr }{base.FxShutdown})))(tls, app)
}
