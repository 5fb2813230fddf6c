package pathrule

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/etc/passwd", "/", true},
		{"/", "/", true},
		{"a/b", "a", true},
		{"ab", "a", false},
	} {
		if got := Within(tt.path, tt.dir); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}

// Resolve follows a link in the part of a path that exists and keeps the
// rest as written, so a link inside a folder that points out of it is
// seen for what it is.
func TestResolve(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(in, "link")); err != nil {
		t.Fatal(err)
	}
	got := Resolve(filepath.Join(in, "link", "new", "file"))
	if want := filepath.Join(out, "new", "file"); got != want {
		t.Errorf("Resolve = %q, want %q", got, want)
	}
	if Within(got, in) {
		t.Errorf("%q, through a link out of %q, is taken as within it", got, in)
	}
	if got := Resolve("/no-such-root-folder/x"); got != "/no-such-root-folder/x" {
		t.Errorf("a path that does not exist changed: %q", got)
	}
}
