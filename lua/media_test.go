package lua

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"tai/engine"
)

// TestMediaOpen: /open's tai.media.open hands the desktop's opener only
// an image, audio or PDF whose bytes are not text (an SVG, an HTML page
// and markup labelled png are saved and never opened, with why), says a
// number it does not have in the kind shown ("no image 0: the only one
// is /open 1"), and the folder it saved to goes when tai exits.
func TestMediaOpen(t *testing.T) {
	var opened []string
	h := newHost(t, Options{OpenFile: func(path string) (bool, error) {
		opened = append(opened, filepath.Base(path))
		return true, nil
	}}, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	h.showMedia([]engine.Media{{Label: "[image png, 1 KB]", Type: "image", MIME: "image/png", Data: png}})
	got := mustRun(t, h, `return select(2, tai.media.open(0)), select(2, tai.media.open(2))`)
	if want := []any{"no image 0: the only one is /open 1", "no image 2: the only one is /open 1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	h.showMedia([]engine.Media{
		{Label: "[image svg]", Type: "image", MIME: "image/svg+xml", Data: svg},
		{Label: "[image png]", Type: "image", MIME: "image/png", Data: []byte("<html><script>alert(1)</script></html>")},
		{Label: "[resource \"x://p\" text/html]", Type: "resource", MIME: "text/html", Data: []byte("<p>hi")},
	})
	got = mustRun(t, h, `
		local out = {}
		for n = 1, 4 do
			local path, opened, why = tai.media.open(n)
			out[#out + 1] = path:match("[^/]+$") .. " " .. tostring(opened) .. " " .. why
		end
		out[#out + 1] = select(2, tai.media.open(5))
		return table.concat(out, "|")`)
	want := "image-1.png true |image-2.svg false an SVG can hold script a browser would run|" +
		"image-3.png false its bytes are text, not the png it claims to be|blob-4.bin false tai opens only images, audio and PDF|" +
		"nothing shown is numbered 5: the ones shown are /open 1 to /open 4"
	if got[0] != want {
		t.Fatalf("got  %q\nwant %q", got[0], want)
	}
	if !reflect.DeepEqual(opened, []string{"image-1.png"}) {
		t.Fatalf("the opener was given %v", opened)
	}
	dir := h.media.dir
	if _, err := os.Stat(filepath.Join(dir, "image-2.svg")); err != nil {
		t.Fatalf("the SVG was not saved: %v", err)
	}
	h.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the media folder is left after Close: %v", err)
	}
}
