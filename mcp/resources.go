package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Wire methods of a server's resources.
const (
	// MethodResourcesList lists a server's resources, one page per call.
	MethodResourcesList = "resources/list"
	// MethodResourceTemplatesList lists a server's URI templates.
	MethodResourceTemplatesList = "resources/templates/list"
	// MethodResourcesRead reads one resource by its URI.
	MethodResourcesRead = "resources/read"
	// MethodResourcesListChanged says the resource list changed.
	MethodResourcesListChanged = "notifications/resources/list_changed"
)

// MaxResources caps the resources (or templates) one listing keeps: a
// server listing a million gets its first MaxResources shown, and a note.
const MaxResources = 10000

// Resource is one resource a server lists. Every string is the server's,
// untrusted: show it through Clip or screen.VisibleLine.
type Resource struct {
	// URI is what resources/read takes.
	URI string `json:"uri"`
	// Name is the programmatic name.
	Name string `json:"name"`
	// Title is the display name, when given.
	Title string `json:"title,omitempty"`
	// Description is the server's description.
	Description string `json:"description,omitempty"`
	// MimeType is the content's type, when given.
	MimeType string `json:"mimeType,omitempty"`
	// Size is the content's size in bytes, when given.
	Size *int64 `json:"size,omitempty"`
}

// ResourceTemplate is one URI template a server lists (RFC 6570): a
// family of resources the client fills in and reads.
type ResourceTemplate struct {
	// URITemplate is the template, such as file:///{path}.
	URITemplate string `json:"uriTemplate"`
	// Name is the programmatic name.
	Name string `json:"name"`
	// Title is the display name, when given.
	Title string `json:"title,omitempty"`
	// Description is the server's description.
	Description string `json:"description,omitempty"`
	// MimeType is the type of what it names, when given.
	MimeType string `json:"mimeType,omitempty"`
}

// ResourceContents is one part of what resources/read returns: text, or a
// blob already decoded from base64.
type ResourceContents struct {
	// URI is the part's URI (a read of a directory may return several).
	URI string
	// MimeType is the part's type, when given.
	MimeType string
	// Text holds a text part.
	Text string
	// Blob holds a binary part's bytes; IsBlob says it is one.
	Blob   []byte
	IsBlob bool
}

// errEnough stops a listing that reached MaxResources.
var errEnough = errors.New("enough")

// HasResources reports whether the server declared the resources
// capability in initialize.
func (c *Client) HasResources() bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.Capabilities(), &caps) != nil {
		return false
	}
	r, ok := caps["resources"]
	return ok && !isNull(r)
}

// errNoResources says the server offers no resources.
func (c *Client) errNoResources() error {
	return fmt.Errorf("mcp server %q offers no resources (it did not declare them in initialize)", c.name)
}

// Resources lists the server's resources through every page within
// CallTimeout, keeping the first MaxResources; more says the server listed more than that. A server
// that did not declare resources gets an error naming it, never a request.
func (c *Client) Resources(ctx context.Context) (list []Resource, more bool, err error) {
	if !c.HasResources() {
		return nil, false, c.errNoResources()
	}
	more, err = listCapped(c, ctx, MethodResourcesList, "resources", func(r Resource) error {
		if r.URI == "" {
			return errors.New("a resource has no uri")
		}
		list = append(list, r)
		return nil
	})
	return list, more, c.scrub(err)
}

// ResourceTemplates lists the server's URI templates through every page,
// as Resources does.
func (c *Client) ResourceTemplates(ctx context.Context) (list []ResourceTemplate, more bool, err error) {
	if !c.HasResources() {
		return nil, false, c.errNoResources()
	}
	more, err = listCapped(c, ctx, MethodResourceTemplatesList, "resourceTemplates", func(t ResourceTemplate) error {
		if t.URITemplate == "" {
			return errors.New("a template has no uriTemplate")
		}
		list = append(list, t)
		return nil
	})
	if werr := (*WireError)(nil); errors.As(err, &werr) && werr.Code == CodeMethodNotFound {
		// Templates are optional beside resources.
		return nil, false, nil
	}
	return list, more, c.scrub(err)
}

// listCapped runs listAll for method within CallTimeout, decoding each
// item of key as a T and keeping at most MaxResources.
func listCapped[T any](c *Client, ctx context.Context, method, key string, keep func(T) error) (more bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	n := 0
	err = c.listAll(ctx, method, key, func(raw []byte) error {
		if n == MaxResources {
			return errEnough
		}
		var item T
		if err := json.Unmarshal(raw, &item); err != nil {
			return fmt.Errorf("mcp server %q: malformed item in %s: %v", c.name, method, err)
		}
		if err := keep(item); err != nil {
			return fmt.Errorf("mcp server %q: %s: %v", c.name, method, err)
		}
		n++
		return nil
	})
	if errors.Is(err, errEnough) {
		return true, nil
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return false, fmt.Errorf("mcp server %q did not answer %s within %s: %w", c.name, method, c.opts.CallTimeout, err)
	}
	return false, err
}

// ReadResource reads the resource at uri within CallTimeout: its text and
// blob parts, blobs decoded. The answer is as large as one message may be
// (MCP_HTTP_MAX_BODY), no larger.
func (c *Client) ReadResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	parts, err := c.readResource(ctx, uri)
	return parts, c.scrub(err)
}

func (c *Client) readResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	if !c.HasResources() {
		return nil, c.errNoResources()
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	raw, err := c.request(ctx, MethodResourcesRead, map[string]string{"uri": uri})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("mcp server %q: reading %s timed out after %s: %w", c.name, Clip(uri), c.opts.CallTimeout, err)
		}
		return nil, err
	}
	var res struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("mcp server %q: malformed %s result for %s: %v", c.name, MethodResourcesRead, Clip(uri), err)
	}
	parts := make([]ResourceContents, 0, len(res.Contents))
	for _, p := range res.Contents {
		part := ResourceContents{URI: p.URI, MimeType: p.MimeType}
		switch {
		case p.Blob != nil:
			data, err := base64.StdEncoding.DecodeString(*p.Blob)
			if err != nil {
				return nil, fmt.Errorf("mcp server %q: %s of %s: a blob is not base64", c.name, MethodResourcesRead, Clip(uri))
			}
			part.Blob, part.IsBlob = data, true
		case p.Text != nil:
			part.Text = *p.Text
		default:
			return nil, fmt.Errorf("mcp server %q: %s of %s: a part has neither text nor blob", c.name, MethodResourcesRead, Clip(uri))
		}
		parts = append(parts, part)
	}
	return parts, nil
}
