package engine

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// TestProfileImages: a tool's image reaches the model of a profile that
// says nothing of images, and only its label reaches one whose profile
// says images false; the terminal is told the label either way.
func TestProfileImages(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 640, 480))); err != nil {
		t.Fatal(err)
	}
	shot := buf.Bytes()
	for _, images := range []*bool{nil, new(bool)} {
		srv := llmtest.NewAnthropic(t, llmtest.Calls(llmtest.Call("shot", `{}`)), llmtest.Say("seen"))
		store := vaulttest.Open(t)
		p := llm.Profile{Name: "fake", Provider: llm.ProviderAnthropic, BaseURL: srv.BaseURL, Model: "claude-fake", KeyEnv: "KEY", Images: images}
		if err := llm.SaveProfile(store, p); err != nil {
			t.Fatal(err)
		}
		e, err := New(store, &Options{Profile: "fake", Mode: tool.Yolo, Dir: t.TempDir(), Getenv: func(k string) string {
			if k == "KEY" {
				return "sk-ant-test"
			}
			return ""
		}})
		if err != nil {
			t.Fatal(err)
		}
		addTool(t, e.Tools(), tool.Tool{Name: "shot", Description: "a screenshot", Safe: true,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{}},
			Run: func(context.Context, map[string]any) (tool.Result, error) {
				return tool.Result{Content: []tool.Content{{Type: "image", MIME: "image/png", Data: shot}}}, nil
			}})
		a := newSession(t, e).NewAgent(nil)
		var media []Media
		ev := Events{OnToolEnd: func(te ToolEvent) { media = te.Media }}
		if _, err := a.RunTurn(context.Background(), "look", &TurnOptions{Events: ev}); err != nil {
			t.Fatal(err)
		}
		if len(media) != 1 || !strings.HasPrefix(media[0].Label, "[image png 640×480, ") || !bytes.Equal(media[0].Data, shot) {
			t.Errorf("the terminal is told of %q", media)
		}
		req := srv.Requests()[1]
		want := 1
		if images != nil {
			want = 0
		}
		if got := len(req.Images()); got != want {
			t.Errorf("images %v: the model got %d images, want %d", images, got, want)
		}
		if res := req.ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "[image png 640×480, ") {
			t.Errorf("tool result: %+v", res)
		}
	}
}
