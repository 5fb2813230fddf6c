package lua

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
)

// TestReadTextRefusesWhatIsNotAFile: a FIFO (which would block a read)
// and a folder are refused without waiting; a file is read up to max.
func TestReadTextRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "AGENTS.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("hello world"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, `
		local a, aerr = tai.read_text(`+strconv.Quote(fifo)+`)
		local b, btrunc = tai.read_text(`+strconv.Quote(file)+`, 5)
		local c, cerr = tai.read_text(`+strconv.Quote(dir)+`)
		return a, aerr, b, btrunc, c, cerr, tai.file_kind(`+strconv.Quote(fifo)+`), tai.file_kind(`+strconv.Quote(dir)+`), tai.file_kind(`+strconv.Quote(file)+`), tai.file_kind(`+strconv.Quote(dir+"/none")+`)`)
	want := []any{nil, fifo + " is not a regular file", "hello", true, nil, dir + " is not a regular file", "other", "dir", "file", nil}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}
