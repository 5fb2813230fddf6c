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

// partGate decides, for one client, whether tool messages' parts are
// sent: not when the profile says so, nor after the model refused one.
type partGate struct {
	refused atomic.Bool
}

// hasParts reports whether req carries a part a provider could take.
func hasParts(req Request) bool {
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if sendsImage(p) {
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

// complete runs send with the request's parts when the profile and the
// model allow them; a 400 that names images makes it send again without
// them and remember that for the client's life (the session).
func (g *partGate) complete(cfg *ProviderConfig, req Request, send func(Request) (Response, error)) (Response, error) {
	if cfg.NoImages || g.refused.Load() || !hasParts(req) {
		return send(withoutParts(req))
	}
	resp, err := send(req)
	if refusesImages(err) {
		g.refused.Store(true)
		return send(withoutParts(req))
	}
	return resp, err
}

// refusesImages reports whether err is an API's refusal of image input:
// HTTP 400 whose message names images.
func refusesImages(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(apiErr.Message + " " + apiErr.Type)
	return strings.Contains(msg, "image")
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
