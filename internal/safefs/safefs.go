// Package safefs reads the files of a folder whose content someone else wrote — a plugin folder
// and its recorded tests' fixtures (seed 004 "Recorded tests"; docs/PLUGIN-LANGUAGE.md
// "Limits") — without letting the folder reach outside itself or stall the reader:
//
//   - every path is resolved inside the folder through os.Root, so ".." and symbolic links that
//     lead out of it (to a secret elsewhere, to /dev/zero) are refused;
//   - only regular files are read: a named pipe, device or socket is an error, and it is opened
//     without blocking, so a FIFO cannot hang the reader waiting for a writer;
//   - the size is checked (fstat) before any byte is read, and the read itself is capped, so a
//     file that grows while it is read still stops at the limit;
//   - the reader's context is checked between chunks.
//
// A hard link is an ordinary file of the folder and is read as one (git does not record hard
// links, so a checked-out folder has none to a file outside it).
package safefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

// ErrTooLarge is wrapped by ReadFile's error for a file longer than the bytes allowed.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is wrapped by the error for a path that is a named pipe, device, socket or other
// file that is neither a regular file nor a folder.
var ErrNotRegular = errors.New("not a regular file")

// chunk is how much ReadFile reads between two checks of its context.
const chunk = 64 << 10

// Dir is an open folder. It implements fs.FS, fs.StatFS and fs.ReadDirFS with the rules of the
// package (Open refuses files that are not regular files or folders), and ReadFile with a size
// limit and a context. Close releases it. Safe for concurrent use.
type Dir struct {
	root *os.Root
}

// Open opens the folder dir.
func Open(dir string) (*Dir, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r}, nil
}

// Close closes the folder; files opened from it stay usable.
func (d *Dir) Close() error { return d.root.Close() }

// Open opens name, a slash-separated path inside the folder (fs.ValidPath), for reading. A path
// that leaves the folder, or that is not a regular file or a folder, is a *fs.PathError (wrapping
// ErrNotRegular for pipes and devices).
func (d *Dir) Open(name string) (fs.File, error) {
	f, _, err := d.open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d *Dir) open(name string) (*os.File, fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// Non-blocking, so that opening a FIFO does not wait for a writer; it is refused just below.
	f, err := d.root.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (it is %s)", ErrNotRegular, kind(st.Mode()))}
	}
	return f, st, nil
}

// kind names a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}

// Stat returns the file information of name, following symbolic links inside the folder.
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return d.root.Stat(name)
}

// ReadDir lists the folder name, sorted by file name.
func (d *Dir) ReadDir(name string) ([]fs.DirEntry, error) {
	f, st, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a folder")}
	}
	return fs.ReadDir(rootFS{d.root}, name)
}

// rootFS lends fs.ReadDir the root's own listing.
type rootFS struct{ r *os.Root }

func (r rootFS) Open(name string) (fs.File, error) { return r.r.Open(name) }

// ReadFile reads the regular file name, of at most max bytes: a longer one is an error wrapping
// ErrTooLarge, found from its size before anything is read. ctx is checked between chunks.
func (d *Dir) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, st, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a folder, not a file")}
	}
	return read(ctx, f, st.Size(), name, max)
}

// ReadFS reads name from fsys under the rules of ReadFile: through the Dir itself when fsys is a
// *Dir, otherwise by Stat (regular files only, size checked first) and a capped read.
func ReadFS(ctx context.Context, fsys fs.FS, name string, max int64) ([]byte, error) {
	if d, ok := fsys.(*Dir); ok {
		return d.ReadFile(ctx, name, max)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a folder, not a file")}
	case !st.Mode().IsRegular():
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (it is %s)", ErrNotRegular, kind(st.Mode()))}
	}
	return read(ctx, f, st.Size(), name, max)
}

// read reads r, whose size was size when it was opened, up to max bytes.
func read(ctx context.Context, r io.Reader, size int64, name string, max int64) ([]byte, error) {
	if max < 0 {
		max = 0
	}
	if size > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, size, max)}
	}
	// Read into one buffer of the size stat gave (plus one byte to see growth), chunk by chunk.
	buf := make([]byte, 0, size+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			// The file grew since stat: keep reading, up to one byte past the limit.
			if int64(len(buf)) > max {
				return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
			}
			buf = slices.Grow(buf, int(min(int64(chunk), max+1-int64(len(buf)))))
		}
		end := min(cap(buf), len(buf)+chunk)
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
