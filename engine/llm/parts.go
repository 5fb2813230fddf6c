package llm

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
)

// imageMIME lists the image types both Anthropic's image blocks and
// OpenAI's image_url parts take; another type stays a label.
var imageMIME = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// sendsImage reports whether p is an image a provider takes.
func sendsImage(p Part) bool { return p.Type == "image" && imageMIME[p.MIME] }

// audioFormat is the input_audio format of an audio part OpenAI's audio
// models take (wav and mp3), or "".
func audioFormat(p Part) string {
	if p.Type != "audio" {
		return ""
	}
	switch p.MIME {
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav"
	case "audio/mpeg", "audio/mp3":
		return "mp3"
	}
	return ""
}

// takesAudio reports whether an OpenAI model takes input_audio: its
// audio models (gpt-4o-audio-preview, gpt-audio) do, the others refuse it.
func takesAudio(model string) bool { return strings.Contains(strings.ToLower(model), "audio") }

// partGate decides, for one client, whether tool messages' parts are
// sent: not when the profile says so, nor after the model refused one.
type partGate struct {
	refused atomic.Bool
}

// hasParts reports whether req carries a part a provider could take.
func hasParts(req Request) bool {
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if sendsImage(p) || audioFormat(p) != "" {
				return true
			}
		}
	}
	return false
}

// withoutParts returns req with no message carrying parts; the labels in
// their text stay.
func withoutParts(req Request) Request {
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		m.Parts = nil
		msgs[i] = m
	}
	req.Messages = msgs
	return req
}

// The parts a request carries are the latest ones within these bounds
// (under Anthropic's 100 images and 32 MB a request, OpenAI's 50 MB): an
// older image is its label, so a long session of screenshots does not
// grow every request until the API refuses it.
const (
	maxRequestParts     = 20
	maxRequestPartBytes = 16 << 20
)

// latestParts returns req with the parts of its latest messages within
// maxRequestParts and maxRequestPartBytes; older messages lose theirs.
func latestParts(req Request) Request {
	n, size, cut := 0, 0, -1
	for i := len(req.Messages) - 1; i >= 0 && cut < 0; i-- {
		for _, p := range req.Messages[i].Parts {
			n, size = n+1, size+len(p.Data)
			if n > maxRequestParts || size > maxRequestPartBytes {
				cut = i
				break
			}
		}
	}
	if cut < 0 {
		return req
	}
	msgs := make([]Message, len(req.Messages))
	copy(msgs, req.Messages)
	for i := 0; i <= cut; i++ {
		msgs[i].Parts = nil
	}
	req.Messages = msgs
	return req
}

// complete runs send with the request's parts when the profile and the
// model allow them; a 400 that names images makes it send again without
// them and remember that for the client's life (the session).
func (g *partGate) complete(cfg *ProviderConfig, req Request, send func(Request) (Response, error)) (Response, error) {
	if cfg.NoImages || g.refused.Load() || !hasParts(req) {
		return send(withoutParts(req))
	}
	req = latestParts(req)
	resp, err := send(req)
	if refusesImages(err) {
		g.refused.Store(true)
		return send(withoutParts(req))
	}
	return resp, err
}

// refusesImages reports whether err is an API's refusal of image or
// audio input: HTTP 400 whose message names images or audio.
func refusesImages(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(apiErr.Message + " " + apiErr.Type)
	return strings.Contains(msg, "image") || strings.Contains(msg, "audio")
}

// inputAudio is an audio part's input_audio object, its base64 data
// encoded into JSON without an intermediate copy.
type inputAudio Part

func (a inputAudio) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(`{"data":"","format":"wav"}`)+base64.StdEncoding.EncodedLen(len(a.Data)))
	b = append(b, `{"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, a.Data)
	b = append(b, `","format":"`...)
	b = append(b, audioFormat(Part(a))...)
	return append(b, `"}`...), nil
}

// dataURL is an image part's URL for OpenAI's image_url, encoded into
// JSON without an intermediate copy of its base64 text.
type dataURL Part

func (d dataURL) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(`{"url":"data:;base64,"}`)+len(d.MIME)+base64.StdEncoding.EncodedLen(len(d.Data)))
	b = append(b, `{"url":"data:`...)
	b = append(b, d.MIME...)
	b = append(b, `;base64,`...)
	b = base64.StdEncoding.AppendEncode(b, d.Data)
	return append(b, `"}`...), nil
}
