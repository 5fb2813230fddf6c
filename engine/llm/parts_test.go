package llm

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

func imageHistory() []Message {
	return []Message{
		{Role: "user", Content: "take a screenshot"},
		callMsg("", readCall("call_1"), readCall("call_2")),
		{Role: "tool", ToolCallID: "call_1", Name: "read_file", Content: "[image png 1×1, 70 B]",
			Parts: []Part{{Type: "image", MIME: "image/png", Data: tinyPNG}, {Type: "audio", MIME: "audio/wav", Data: []byte("RIFF")}}},
		{Role: "tool", ToolCallID: "call_2", Name: "read_file", Content: "two"},
	}
}

// TestToolImagesReachModel: an image a tool returned reaches each
// provider as the API takes it (Anthropic: an image block in the
// tool_result; OpenAI: an image part in a user message after the tool
// messages), valid against the published request schema; audio neither
// takes stays its label.
func TestToolImagesReachModel(t *testing.T) {
	both(t, func(t *testing.T, p provider, stream bool) {
		cl, srv, _ := p.start(t, llmtest.Say("a red dot"))
		if _, err := complete(t, cl, Request{Messages: imageHistory()}, stream); err != nil {
			t.Fatal(err)
		}
		req := srv.Requests()[0]
		imgs := req.Images()
		if len(imgs) != 1 || imgs[0].MIME != "image/png" || !bytes.Equal(imgs[0].Data, tinyPNG) {
			t.Fatalf("images the model got: %+v\n%s", imgs, req.Body)
		}
		if res := req.ToolResults(); len(res) != 2 || res[0].Text != "[image png 1×1, 70 B]" {
			t.Errorf("tool results: %+v", res)
		}
		if p.name == "anthropic" && len(req.ToolResults()[0].Images) != 1 {
			t.Errorf("the image is not in the tool_result block: %s", req.Body)
		}
		if bytes.Contains(req.Body, []byte("UklGR")) {
			t.Errorf("audio went out: %s", req.Body)
		}
	})
}

// TestImagesOff: a profile whose model takes no images sends labels only.
func TestImagesOff(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.fake(t, llmtest.Say("ok"))
			cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "fake-model", NoImages: true})
			if _, err := complete(t, cl, Request{Messages: imageHistory()}, false); err != nil {
				t.Fatal(err)
			}
			req := srv.Requests()[0]
			if n := len(req.Images()); n != 0 || !strings.Contains(req.ToolResults()[0].Text, "[image png") {
				t.Errorf("%d images went out, results %+v", n, req.ToolResults())
			}
		})
	}
}

// TestImageRefusedFallsBack: a model that answers 400 naming images gets
// the request again with labels, and no image for the rest of the
// client's life; a 400 about something else is an error as before.
func TestImageRefusedFallsBack(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			cl, srv, _ := p.start(t,
				llmtest.Fail(http.StatusBadRequest, "Invalid content type. image_url is only supported by certain models."),
				llmtest.Say("no picture, fine"),
				llmtest.Say("still fine"),
				llmtest.Fail(http.StatusBadRequest, "max_tokens is too large"),
			)
			for i := range 2 {
				resp, err := complete(t, cl, Request{Messages: imageHistory()}, false)
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				if resp.Message.Content == "" {
					t.Fatalf("turn %d: empty answer", i)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 3 || len(reqs[0].Images()) != 1 || len(reqs[1].Images()) != 0 || len(reqs[2].Images()) != 0 {
				t.Fatalf("requests: %d, images %d", len(reqs), len(reqs[0].Images()))
			}
			fresh, srv2, _ := p.start(t, llmtest.Fail(http.StatusBadRequest, "max_tokens is too large"))
			if _, err := complete(t, fresh, Request{Messages: imageHistory()}, false); err == nil || len(srv2.Requests()) != 1 {
				t.Errorf("a 400 not about images: err %v after %d requests", err, len(srv2.Requests()))
			}
		})
	}
}

// TestToolAudio: wav audio a tool returned reaches an OpenAI audio model
// as an input_audio part after the tool messages, valid against the
// schema; any other model gets its label only.
func TestToolAudio(t *testing.T) {
	wav := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	hist := imageHistory()
	hist[2].Parts = []Part{{Type: "audio", MIME: "audio/wav", Data: wav}}
	for _, model := range []string{"gpt-4o-audio-preview", "gpt-4.1"} {
		srv := llmtest.NewOpenAI(t, llmtest.Say("a beep"))
		cl := NewOpenAI(ProviderConfig{BaseURL: srv.BaseURL, Model: model})
		if _, err := complete(t, cl, Request{Messages: hist}, false); err != nil {
			t.Fatal(err)
		}
		var audio []llmtest.Image
		for _, m := range srv.Requests()[0].Messages {
			audio = append(audio, m.Audio...)
		}
		want := 0
		if strings.Contains(model, "audio") {
			want = 1
		}
		if len(audio) != want || want == 1 && (audio[0].MIME != "wav" || !bytes.Equal(audio[0].Data, wav)) {
			t.Errorf("%s: audio sent %+v", model, audio)
		}
	}
}

// TestOldImagesBecomeLabels: a long session's images do not all go out
// with every request: only the latest maxRequestParts do, the older ones
// stand as their labels.
func TestOldImagesBecomeLabels(t *testing.T) {
	hist := []Message{{Role: "user", Content: "take screenshots"}}
	for i := range maxRequestParts + 5 {
		id := fmt.Sprintf("call_%d", i)
		hist = append(hist, callMsg("", readCall(id)),
			Message{Role: "tool", ToolCallID: id, Name: "read_file", Content: "[image png 1×1, 70 B]",
				Parts: []Part{{Type: "image", MIME: "image/png", Data: tinyPNG}}})
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			cl, srv, _ := p.start(t, llmtest.Say("many"))
			if _, err := complete(t, cl, Request{Messages: hist}, false); err != nil {
				t.Fatal(err)
			}
			var n int
			var last bool
			for i, m := range srv.Requests()[0].Messages {
				n += len(m.Images)
				if i == len(srv.Requests()[0].Messages)-1 || m.Role == "tool" && m.ToolCallID == fmt.Sprintf("call_%d", maxRequestParts+4) {
					last = last || len(m.Images) > 0
				}
			}
			if n != maxRequestParts || !last {
				t.Errorf("%d images went out (the latest among them: %v), want the latest %d", n, last, maxRequestParts)
			}
		})
	}
}
