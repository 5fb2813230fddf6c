package tool

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"tai/vault/vaulttest"
)

func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func imageItem(mime string, data []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "image", "mimeType": mime, "data": base64.StdEncoding.EncodeToString(data)})
	return b
}

// TestImageContentDecoded: an image item is held as its bytes, shown as a
// label with its size read from the header, and encoded back as MCP's
// image item unchanged.
func TestImageContentDecoded(t *testing.T) {
	data := pngOf(t, 640, 480)
	raw := imageItem("image/png", data)
	var c Content
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if !c.ForModel() || c.Raw != nil || !bytes.Equal(c.Data, data) {
		t.Fatalf("not decoded: %+v", c)
	}
	want := "[image png 640×480, " + byteSize(len(data)) + "]"
	if got := (Result{Content: []Content{c}}).Text(); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(c.appendJSON(nil), &back); err != nil || back["data"] != base64.StdEncoding.EncodeToString(data) || back["mimeType"] != "image/png" || back["type"] != "image" {
		t.Errorf("encoded back as %v (%v)", back, err)
	}
	var j bytes.Buffer
	if err := jpeg.Encode(&j, image.NewGray(image.Rect(0, 0, 33, 7)), nil); err != nil {
		t.Fatal(err)
	}
	webp := append([]byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00"), 0x7f, 0x02, 0x00, 0xdf, 0x01, 0x00) // 640×480
	for _, tc := range []struct {
		c    Content
		want string
	}{
		{Content{Type: "image", MIME: "image/jpeg", Data: j.Bytes()}, "[image jpeg 33×7, "},
		{Content{Type: "image", MIME: "image/webp", Data: webp}, "[image webp 640×480, 30 B]"},
		{Content{Type: "image", MIME: "image/png", Data: []byte("not a png")}, "[image png, 9 B]"},
		{Content{Type: "audio", MIME: "audio/wav", Data: make([]byte, 45_000)}, "[audio wav, 45 KB]"},
		{Content{Type: "audio", MIME: "audio/mpeg", Data: make([]byte, 1_250_000)}, "[audio mpeg, 1.2 MB]"},
		// A server's media type cannot move the cursor or clear the screen.
		{Content{Type: "image", MIME: "image/\x1b[2Jpng", Data: []byte("x")}, "[image \\x1b[2Jpng, 1 B]"},
	} {
		if got := tc.c.Label(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Label = %q, want %q…", got, tc.want)
		}
	}
	// Data that is not base64 stays the item's JSON, never a wrong image.
	var bad Content
	if err := json.Unmarshal([]byte(`{"type":"image","mimeType":"image/png","data":"%%%"}`), &bad); err != nil || bad.Binary() || bad.Raw == nil {
		t.Errorf("bad base64 decoded as %+v (%v)", bad, err)
	}
}

// TestBinarySpill: a large text spills to a record and the image after it
// stays for the model; an image over BinaryMax and an embedded blob go to
// records of their own, and nothing of their base64 reaches the result.
func TestBinarySpill(t *testing.T) {
	store := vaulttest.Open(t)
	reg := NewRegistry(store, NewApprover(Yolo, nil))
	small := pngOf(t, 2, 2)
	huge := make([]byte, BinaryMax+1)
	blob := []byte("\x00\x01binary blob")
	big := strings.Repeat("0123456789abcdef", ResultMax/16+100)
	addTool(t, reg, Tool{Name: "shots", Run: func(context.Context, map[string]any) (Result, error) {
		return Result{Content: []Content{
			{Type: "text", Text: big},
			{Type: "image", MIME: "image/png", Data: small},
			{Type: "image", MIME: "image/png", Data: huge},
			{Type: "resource", MIME: "application/octet-stream", Data: blob, URI: "file:///x.bin"},
		}}, nil
	}})
	res, err := reg.Dispatch(context.Background(), "shots", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 4 || !res.Content[3].ForModel() || !bytes.Equal(res.Content[3].Data, small) {
		t.Fatalf("result: %d items, %q", len(res.Content), res.Text())
	}
	text := res.Text()
	if !strings.Contains(text, "stored as record") || strings.Count(text, "stored, base64, as record") != 2 || !strings.Contains(text, `[resource "file:///x.bin" application/octet-stream, 13 B]`) {
		t.Errorf("notes: %s", text[:min(len(text), 600)])
	}
	if strings.Contains(text, base64.StdEncoding.EncodeToString(blob)) || strings.Contains(text, "AAAAAAAA") {
		t.Error("base64 reached the result's text")
	}
	if len(text) > ResultMax {
		t.Errorf("result text is %d bytes", len(text))
	}
	entries, _ := store.AuditTail(1, "tool")
	if want := len(big) + len(small) + len(huge) + len(blob); entries[0].Size != want {
		t.Errorf("audit size = %d, want %d: every item's bytes", entries[0].Size, want)
	}
	// Small results keep their items, in order, unchanged.
	addTool(t, reg, Tool{Name: "one", Run: func(context.Context, map[string]any) (Result, error) {
		return Result{Content: []Content{{Type: "text", Text: "here"}, {Type: "image", MIME: "image/png", Data: small}}}, nil
	}})
	res, err = reg.Dispatch(context.Background(), "one", nil)
	if err != nil || len(res.Content) != 2 || res.Content[0].Text != "here" || !bytes.Equal(res.Content[1].Data, small) {
		t.Fatalf("small result changed: %+v, %v", res, err)
	}
}
