package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"tai/engine/llm/llmtest"
)

// cameraServer serves a go-sdk MCP server over Streamable HTTP whose tool
// shot gives some text, a PNG and an embedded PDF; it returns the URL's
// port and the two files' bytes.
func cameraServer(t *testing.T) (api *httptest.Server, port string, shot, pdf []byte) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	img.Set(3, 4, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	shot = buf.Bytes()
	pdf = []byte("%PDF-1.4\n% a report\n" + strings.Repeat("x", 3000) + "\n%%EOF\n")
	s := sdk.NewServer(&sdk.Implementation{Name: "camera", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "shot", Description: "takes a screenshot"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{Data: shot, MIMEType: "image/png"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///report.pdf", MIMEType: "application/pdf", Blob: pdf}},
			}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	api = httptest.NewServer(mux)
	t.Cleanup(api.Close)
	u, _ := url.Parse(api.URL)
	port = u.Port()
	return api, port, shot, pdf
}

// TestREPLOpensWhatAToolShowed: a tool of an MCP server (the go-sdk, over
// Streamable HTTP) gives an image and an embedded PDF; the terminal shows
// each on a numbered line, and /open writes each to a private file whose
// bytes are the server's: the image from the result, the PDF read back
// from the vault record it was stored in. Without a display nothing is
// opened and the path is printed.
func TestREPLOpensWhatAToolShowed(t *testing.T) {
	api, port, shot, pdf := cameraServer(t)
	e := newEnv(t)
	tmp := filepath.Join(e.root, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	r := startREPLWith(t, e, append(e.modelVars(srv), "TMPDIR="+tmp), "--clean")
	r.expect("tai:default> ")
	r.typeKeys("/open 1\r")
	r.expect("nothing to open: no tool has given an image, audio or blob in this conversation")
	r.typeKeys("/mcp add " + api.URL + "/mcp\r")
	r.expect("Add it? [y/d/N]")
	r.expect("answer> ")
	r.typeKeys("y\r")
	r.expect("1 tool: shot")
	r.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("mcp_local_"+port+"_shot", `{}`)))
	r.typeKeys("take a screenshot\r")
	r.expect("[s]how everything: ")
	r.typeKeys("y\r")
	r.expect("[image 1: png 64×48, ")
	r.expect(`[resource 2: "file:///report.pdf" application/pdf, 3 KB]`)
	r.expect("the tool said: here it is")
	r.expect("tai:default> ")
	saved := regexp.MustCompile(`\(saved to (\S+)\)`)
	open := func(n string, want []byte, name string) {
		t.Helper()
		r.typeKeys("/open " + n + "\r")
		r.expect("(saved to ")
		r.expect("tai:default> ")
		m := saved.FindAllStringSubmatch(r.seen.String(), -1)
		path := m[len(m)-1][1]
		if filepath.Base(path) != name || !strings.HasPrefix(path, tmp+string(filepath.Separator)) {
			t.Fatalf("/open %s saved to %s, want %s in a folder under %s", n, path, name, tmp)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("/open %s wrote %d bytes (%v), want the %d the server sent", n, len(got), err, len(want))
		}
		for p, mode := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
			if st, err := os.Stat(p); err != nil || st.Mode() != mode {
				t.Fatalf("%s: mode %v (%v), want %v", p, st.Mode(), err, mode)
			}
		}
	}
	open("1", shot, "image-1.png")
	open("2", pdf, "blob-2.pdf")
	r.typeKeys("/open 3\r")
	r.expect("nothing shown is numbered 3: the ones shown are /open 1 to /open 2")
	r.typeKeys("/open ../../etc/passwd\r")
	r.expect("give the number shown in brackets: /open 1 to /open 2")
	r.typeKeys("/open 1.5\r")
	r.expect("give the number shown in brackets: /open 1 to /open 2")
	r.typeKeys("/open -1\r")
	r.expect("nothing shown is numbered -1: the ones shown are /open 1 to /open 2")
	r.typeKeys("/exit\r")
	if status := r.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	// The folder the files were saved to went with tai.
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("left in the temporary folder after exit: %s", left[0].Name())
	}
	if entries, _ := os.ReadDir(e.root); len(entries) > 0 {
		for _, d := range entries {
			if strings.HasPrefix(d.Name(), "image-") || strings.HasPrefix(d.Name(), "blob-") {
				t.Fatalf("a file was written into the working folder: %s", d.Name())
			}
		}
	}
}

// TestREPLOpenUsesTheDesktopOpener: with a display, /open hands the file
// to xdg-open (here a script on PATH that passes on what it was given)
// and says it opened it.
func TestREPLOpenUsesTheDesktopOpener(t *testing.T) {
	api, port, shot, _ := cameraServer(t)
	e := newEnv(t)
	bin := filepath.Join(e.root, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.root, "opened")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" > " + fifo + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	vars := e.modelVars(srv)
	for i, v := range vars {
		if strings.HasPrefix(v, "PATH=") {
			vars[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(v, "PATH=")
		}
	}
	r := startREPLWith(t, e, append(vars, "DISPLAY=:77"), "--clean")
	r.expect("tai:default> ")
	r.typeKeys("/mcp add " + api.URL + "/mcp\r")
	r.expect("Add it? [y/d/N]")
	r.expect("answer> ")
	r.typeKeys("y\r")
	r.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("mcp_local_"+port+"_shot", `{}`)))
	r.typeKeys("take a screenshot\r")
	r.expect("[s]how everything: ")
	r.typeKeys("y\r")
	r.expect("[image 1: png 64×48, ")
	r.expect("tai:default> ")
	got := make(chan string, 1)
	go func() {
		data, _ := os.ReadFile(fifo) // returns once the opener has written and closed
		got <- strings.TrimSpace(string(data))
	}()
	r.typeKeys("/open 1\r")
	r.expect("(opened ")
	var path string
	select {
	case path = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("xdg-open was not run")
	}
	if filepath.Base(path) != "image-1.png" || !strings.Contains(r.seen.String(), "(opened "+path+")") {
		t.Fatalf("xdg-open was given %q", path)
	}
	if data, err := os.ReadFile(path); err != nil || !bytes.Equal(data, shot) {
		t.Fatalf("the opened file holds %d bytes (%v), want the image", len(data), err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(path)) })
}
