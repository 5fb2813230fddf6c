package lua

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
)

// shownMedia are the images, audio and blobs of tool results the front
// end was shown in this conversation, numbered from 1 in the order shown
// (tai.chat's on_tool_end media), and the folder they are saved to.
type shownMedia struct {
	items []engine.Media
	dir   string // made on the first save: private to this tai, 0700
}

// showMedia numbers media after those shown before and returns their
// labels with their numbers: "[image 2: png 640×480, 45 KB]".
func (h *Host) showMedia(media []engine.Media) []string {
	labels := make([]string, len(media))
	for i, m := range media {
		h.media.items = append(h.media.items, m)
		labels[i] = numberedLabel(m, len(h.media.items))
	}
	return labels
}

// numberedLabel puts n after the kind of m's label.
func numberedLabel(m engine.Media, n int) string {
	kind, rest, ok := strings.Cut(strings.TrimPrefix(m.Label, "["), " ")
	if !ok || !strings.HasPrefix(m.Label, "[") {
		return fmt.Sprintf("[%d] %s", n, m.Label)
	}
	return fmt.Sprintf("[%s %d: %s", kind, n, rest)
}

// mediaExt is the file name extension of each media type tai names a saved
// file after; any other type is saved as .bin.
var mediaExt = map[string]string{
	"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/svg+xml": "svg",
	"image/bmp": "bmp", "audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3",
	"audio/ogg": "ogg", "audio/webm": "weba", "audio/flac": "flac", "application/pdf": "pdf",
	"application/json": "json", "text/plain": "txt", "application/zip": "zip",
}

// passiveExt are the extensions of the formats a desktop opener shows
// without running anything a server put in them: binary images, audio
// and PDF. An SVG, HTML or XHTML file runs its script in a browser, and a
// .txt, .json or .bin is opened after sniffing what it holds, so those
// are saved and never opened.
var passiveExt = map[string]bool{
	"png": true, "jpg": true, "gif": true, "webp": true, "bmp": true, "wav": true, "mp3": true,
	"ogg": true, "weba": true, "flac": true, "pdf": true,
}

// notOpened says why the file saved as path with data is not handed to
// the desktop's opener, or "" when it may be: its type must be passive
// and its bytes must not be text (markup a server labelled png is
// sniffed as what it is by the opener).
func notOpened(path string, data []byte) string {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	switch {
	case ext == "svg":
		return "an SVG can hold script a browser would run"
	case !passiveExt[ext]:
		return "tai opens only images, audio and PDF"
	case strings.HasPrefix(http.DetectContentType(data), "text/"):
		return "its bytes are text, not the " + ext + " it claims to be"
	}
	return ""
}

// openMedia installs tai.media.
//
//	tai.media.count() -> n   the binaries shown in this conversation
//	tai.media.open(n) -> path, opened, why | nil, err
//	    writes the Nth binary shown to a file of its own (0600) in a folder
//	    private to this tai in the system's temporary folder (removed when
//	    tai exits), named after its kind, number and type (image-2.png),
//	    and opens it with the desktop's opener when there is a display
//	    (opened is then true); a type that can run script (SVG, HTML) or
//	    is not an image, audio or PDF is only saved, and why says so
func (h *Host) openMedia(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("media", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"count": func(L *glua.LState) int { L.Push(glua.LNumber(len(h.media.items))); return 1 },
		"open":  h.mediaOpen,
	}))
}

func (h *Host) mediaOpen(L *glua.LState) int {
	f := float64(L.CheckNumber(1))
	n := int(f)
	if float64(n) != f {
		L.ArgError(1, "give a whole number: the one shown in brackets")
	}
	switch count := len(h.media.items); {
	case count == 0:
		return fail(L, "no image, audio or blob has been shown in this conversation")
	case n < 1 || n > count:
		return fail(L, h.noMedia(n))
	}
	m := h.media.items[n-1]
	data := m.Data
	if data == nil {
		store, err := h.Vault()
		if err != nil {
			return fail(L, err.Error())
		}
		text, _, err := store.RecordGet(m.Record, 0, 0)
		if err != nil {
			return fail(L, fmt.Sprintf("binary %d was stored as record %s, which cannot be read: %v", n, m.Record, err))
		}
		if data, err = base64.StdEncoding.DecodeString(text); err != nil {
			return fail(L, fmt.Sprintf("binary %d: record %s does not hold base64 (%v)", n, m.Record, err))
		}
	}
	path, err := h.saveMedia(m, n, data)
	if err != nil {
		return fail(L, err.Error())
	}
	opened, why := false, ""
	if h.opts.OpenFile != nil {
		if why = notOpened(path, data); why == "" {
			if opened, err = h.opts.OpenFile(path); err != nil {
				return fail(L, fmt.Sprintf("saved to %s, but it could not be opened: %v", path, err))
			}
		}
	}
	L.Push(glua.LString(path))
	L.Push(glua.LBool(opened))
	L.Push(glua.LString(why))
	return 3
}

// mediaKind is the word m's label begins with (image, audio, resource),
// or "" when it has none.
func mediaKind(m engine.Media) string {
	kind, _, ok := strings.Cut(strings.TrimPrefix(m.Label, "["), " ")
	if !ok || !strings.HasPrefix(m.Label, "[") {
		return ""
	}
	return kind
}

// noMedia says there is no Nth binary, in the words the lines showing
// them used: "no image 0: the only one is /open 1".
func (h *Host) noMedia(n int) string {
	count := len(h.media.items)
	kind := mediaKind(h.media.items[0])
	for _, m := range h.media.items[1:] {
		if mediaKind(m) != kind {
			kind = ""
		}
	}
	what := fmt.Sprintf("nothing shown is numbered %d", n)
	if kind != "" {
		what = fmt.Sprintf("no %s %d", kind, n)
	}
	if count == 1 {
		return what + ": the only one is /open 1"
	}
	return fmt.Sprintf("%s: the ones shown are /open 1 to /open %d", what, count)
}

// removeMedia removes the folder /open saved files to, when tai exits.
func (h *Host) removeMedia() {
	if h.media.dir != "" {
		os.RemoveAll(h.media.dir)
		h.media.dir = ""
	}
}

// saveMedia writes data, the Nth binary m, to a file in the host's media
// folder and returns its path. The name is made of words tai chooses
// (kind, number, extension), never of anything a server sent.
func (h *Host) saveMedia(m engine.Media, n int, data []byte) (string, error) {
	if h.media.dir == "" {
		dir, err := os.MkdirTemp("", "tai-media-")
		if err != nil {
			return "", fmt.Errorf("cannot make a folder for the file: %v", err)
		}
		h.media.dir = dir
	}
	kind := "blob"
	if m.Type == "image" || m.Type == "audio" {
		kind = m.Type
	}
	ext, ok := mediaExt[strings.ToLower(strings.TrimSpace(strings.SplitN(m.MIME, ";", 2)[0]))]
	if !ok {
		ext = "bin"
	}
	path := filepath.Join(h.media.dir, fmt.Sprintf("%s-%d.%s", kind, n, ext))
	// The folder is this tai's own (0700), so the name is free; a file
	// left by an earlier /open of the same binary is replaced.
	_ = os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("cannot write the file: %v", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", fmt.Errorf("cannot write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("cannot write %s: %v", path, err)
	}
	return path, nil
}
