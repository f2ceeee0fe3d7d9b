package bench

import (
	"sync"

	"modernc.org/libc"
)

// keepAllocatorPages works around a cost of the pure-Go SQLite's memory
// allocator (modernc.org/memory): it returns a page of small slots to the
// operating system as soon as the page's last slot is freed. Every append
// opens a statement journal (the events table has a trigger), which
// allocates and frees a few dozen small chunks; without a live slot on
// their pages that is an mmap and a munmap per statement, a fifth of the
// time of a long bulk append. Keeping one slot allocated on a few pages of
// each small size class, for the life of the process (at most a few MiB),
// keeps those pages mapped and their free slots reused. It changes no
// result, only where SQLite's transient allocations come from.
var keepAllocatorPages = sync.OnceFunc(func() {
	const (
		pageSize = 1 << 16 // modernc.org/memory's page
		pages    = 8       // pages kept per size class
	)
	tls := libc.NewTLS()
	for log := 4; log <= 12; log++ {
		size := uint64(1<<log - 16)
		kept := map[uintptr]bool{}
		var spare []uintptr
		for len(kept) < pages {
			p := libc.Xmalloc(tls, size)
			if p == 0 {
				break
			}
			if pg := p &^ (pageSize - 1); !kept[pg] {
				kept[pg] = true
				continue
			}
			spare = append(spare, p)
		}
		for _, p := range spare {
			libc.Xfree(tls, p)
		}
	}
})
