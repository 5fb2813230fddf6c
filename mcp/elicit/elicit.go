package elicit

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The modes of an elicitation/create request.
const (
	// ModeForm asks for the fields of a form (also what an absent mode means).
	ModeForm = "form"
	// ModeURL sends the person to a URL, out of band.
	ModeURL = "url"
)

// Action is a person's answer to an elicitation.
type Action string

// The three answers.
const (
	// Accept: the person answered (form mode: with the content).
	Accept Action = "accept"
	// Decline: the person said no.
	Decline Action = "decline"
	// Cancel: the person dismissed the question without choosing (Esc).
	Cancel Action = "cancel"
)

// ParseAction returns the Action s names, or an error naming the three.
func ParseAction(s string) (Action, error) {
	switch a := Action(s); a {
	case Accept, Decline, Cancel:
		return a, nil
	}
	return "", fmt.Errorf("elicitation action %q is not known: use accept, decline or cancel", s)
}

// Request is the params of elicitation/create, and one elicitation of a
// -32042 error's data.
type Request struct {
	// Mode is ModeForm or ModeURL; empty means ModeForm.
	Mode string `json:"mode,omitempty"`
	// Message says why the server asks.
	Message string `json:"message"`
	// RequestedSchema describes the form (form mode).
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL is where the person should go (URL mode).
	URL string `json:"url,omitempty"`
	// ElicitationID names a URL-mode elicitation, for its
	// notifications/elicitation/complete.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// Result is the answer to elicitation/create.
type Result struct {
	Action Action `json:"action"`
	// Content holds the form's values when Action is Accept in form mode.
	Content map[string]any `json:"content,omitempty"`
}

// ErrBadRequest is wrapped by ParseRequest's errors: the request is not
// one a client can answer (JSON-RPC -32602, invalid params).
var ErrBadRequest = errors.New("invalid elicitation request")

// ParseRequest reads the params of elicitation/create. A mode other than
// form or url, a form request without a schema and a URL request without
// a URL or an elicitationId are refused with an error wrapping
// ErrBadRequest; the schema and the URL themselves are read by ParseForm
// and ParseLink.
func ParseRequest(params json.RawMessage) (Request, error) {
	var r Request
	if err := json.Unmarshal(params, &r); err != nil {
		return Request{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	switch r.Mode {
	case "", ModeForm:
		r.Mode = ModeForm
		if len(r.RequestedSchema) == 0 || string(r.RequestedSchema) == "null" {
			return Request{}, fmt.Errorf("%w: a form-mode request needs a requestedSchema", ErrBadRequest)
		}
	case ModeURL:
		if r.URL == "" || r.ElicitationID == "" {
			return Request{}, fmt.Errorf("%w: a url-mode request needs a url and an elicitationId", ErrBadRequest)
		}
	default:
		return Request{}, fmt.Errorf("%w: mode %q is not one tai declares (form, url)", ErrBadRequest, r.Mode)
	}
	return r, nil
}

// Question is an elicitation as a person is asked it: which server asks,
// why, and the form to fill (form mode) or the link to open (URL mode).
type Question struct {
	// Server is the name of the server that asks, as tai knows it.
	Server string
	// Message is the server's reason, as sent (show it with mcp/screen).
	Message string
	// Form is set in form mode.
	Form *Form
	// Link is set in URL mode, with ID its elicitationId.
	Link *Link
	ID   string
}

// Mode returns ModeURL for a question with a link, else ModeForm.
func (q *Question) Mode() string {
	if q.Link != nil {
		return ModeURL
	}
	return ModeForm
}

// Required reads the data of a -32042 error (URL elicitation required):
// the URL-mode elicitations to complete before the request is retried.
// Anything else in the list is an error naming it.
func Required(data json.RawMessage) ([]Request, error) {
	var d struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	if err := json.Unmarshal(data, &d); err != nil || len(d.Elicitations) == 0 {
		return nil, fmt.Errorf("%w: the error lists no elicitations", ErrBadRequest)
	}
	out := make([]Request, 0, len(d.Elicitations))
	for _, raw := range d.Elicitations {
		r, err := ParseRequest(raw)
		if err != nil {
			return nil, err
		}
		if r.Mode != ModeURL {
			return nil, fmt.Errorf("%w: a required elicitation must be url mode", ErrBadRequest)
		}
		out = append(out, r)
	}
	return out, nil
}
