package lua

import (
	"encoding/base64"
	"fmt"
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

// openMedia installs tai.media.
//
//	tai.media.count() -> n   the binaries shown in this conversation
//	tai.media.open(n) -> path, opened | nil, err
//	    writes the Nth binary shown to a file of its own (0600) in a folder
//	    private to this tai in the system's temporary folder, named after
//	    its kind, number and type (image-2.png), and opens it with the
//	    desktop's opener when there is a display (opened is then true)
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
		return fail(L, fmt.Sprintf("there is no binary %d: give 1 to %d", n, count))
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
	opened := false
	if h.opts.OpenFile != nil {
		if opened, err = h.opts.OpenFile(path); err != nil {
			return fail(L, fmt.Sprintf("saved to %s, but it could not be opened: %v", path, err))
		}
	}
	L.Push(glua.LString(path))
	L.Push(glua.LBool(opened))
	return 2
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
