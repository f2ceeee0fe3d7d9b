package pathcheck

import (
	"context"
	"io"
	"os"
	"syscall"
)

// chunk is how much a bounded read reads between two looks at its
// context.
const chunk = 64 << 10

// Open opens path (absolute, or relative to the working directory) for
// reading when it is a regular file of at most max bytes (no cap when max
// is negative). Symbolic links are followed. The type and size are checked
// before opening and again on the open file, which is opened non-blocking:
// a FIFO, a device or a directory is refused without waiting on it, even
// if it replaced the file between the two looks.
// Errors: *Error RuleNotRegular or RuleTooLarge; the *fs.PathError of a
// missing or unreadable file.
func Open(path string, max int64) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRead(path, fi, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = checkRead(path, fi, max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkRead(path string, fi os.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return refuse(path, RuleNotRegular, "is not a regular file (%s); awr reads only regular files", typeName(fi.Mode()))
	}
	if max >= 0 && fi.Size() > max {
		return tooLarge(path, max)
	}
	return nil
}

func tooLarge(name string, max int64) *Error {
	return refuse(name, RuleTooLarge, "is larger than the %d bytes awr reads here", max)
}

// ReadFile reads the regular file path whole (Open), at most max bytes:
// a file that grew past max since it was opened is refused too. The read
// stops when ctx is done.
// Errors: those of Open; *Error RuleTooLarge; ctx.Err().
func ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(ctx, f, max, path)
}

// ReadAll reads r to its end, at most max bytes (name says what r is in
// the error), looking at ctx between chunks so that a cancelled command
// stops reading.
// Errors: *Error RuleTooLarge past max; ctx.Err(); the reader's error.
func ReadAll(ctx context.Context, r io.Reader, max int64, name string) ([]byte, error) {
	return io.ReadAll(Reader(ctx, r, max, name))
}

// Reader returns r bounded: it reads at most max bytes of r (no cap when
// max is negative), fails with *Error RuleTooLarge when r holds more, and
// fails with ctx.Err() once ctx is done.
func Reader(ctx context.Context, r io.Reader, max int64, name string) io.Reader {
	return &bounded{ctx: ctx, r: r, left: max, max: max, name: name}
}

type bounded struct {
	ctx       context.Context
	r         io.Reader
	left, max int64
	name      string
}

func (b *bounded) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > chunk {
		p = p[:chunk]
	}
	if b.max < 0 {
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	if int64(n) > b.left {
		n, b.left = int(b.left), 0
		return n, tooLarge(b.name, b.max)
	}
	b.left -= int64(n)
	return n, err
}
