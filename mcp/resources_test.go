package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addSDKResources gives the go-sdk server three resources (one a blob;
// with sdkPageSize, listed over two pages), a template, and a tool,
// add_resource, that adds a fourth, so the server announces
// notifications/resources/list_changed.
func addSDKResources(s *sdk.Server) {
	text := func(uri, body string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: "test://notes/one", Name: "one", MIMEType: "text/plain"}, text("test://notes/one", "first note"))
	s.AddResource(&sdk.Resource{URI: "test://notes/two", Name: "two", Title: "Second", MIMEType: "text/plain", Size: 11}, text("test://notes/two", "second note"))
	s.AddResource(&sdk.Resource{URI: "test://bin/logo", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte("\x89PNG\r\n")}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://notes/{id}", Name: "note"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "note " + strings.TrimPrefix(req.Params.URI, "test://notes/")}}}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add_resource", Description: "adds test://notes/added"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			s.AddResource(&sdk.Resource{URI: "test://notes/added", Name: "added"}, text("test://notes/added", "added"))
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added"}}}, nil, nil
		})
}

// TestSDKResources: against the go-sdk server, resources are listed over
// its pages, templates too, text and blob reads come back decoded, a URI
// no listing names (a template's) is readable, an unknown one is an
// error, and a resource added later reaches the client as
// notifications/resources/list_changed through the method table.
func TestSDKResources(t *testing.T) {
	changed := make(chan struct{}, 4)
	c := connectFake(t, "sdk", &ClientOptions{Notifications: map[string]NotificationHandler{
		MethodResourcesListChanged: func(context.Context, json.RawMessage) { changed <- struct{}{} },
	}})
	ctx := testCtx(t)
	if !c.HasResources() {
		t.Fatalf("HasResources = false; capabilities %s", c.Capabilities())
	}
	list, more, err := c.Resources(ctx)
	if err != nil || more {
		t.Fatalf("Resources: %v (more %v)", err, more)
	}
	var uris []string
	for _, r := range list {
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); got != "test://bin/logo test://notes/one test://notes/two" {
		t.Fatalf("listed %s", got)
	}
	if list[2].Title != "Second" || list[2].Size == nil || *list[2].Size != 11 || list[2].MimeType != "text/plain" {
		t.Fatalf("resource two = %+v", list[2])
	}
	tmpl, _, err := c.ResourceTemplates(ctx)
	if err != nil || len(tmpl) != 1 || tmpl[0].URITemplate != "test://notes/{id}" {
		t.Fatalf("ResourceTemplates = %+v, %v", tmpl, err)
	}
	parts, err := c.ReadResource(ctx, "test://notes/one")
	if err != nil || len(parts) != 1 || parts[0].Text != "first note" || parts[0].IsBlob {
		t.Fatalf("read one = %+v, %v", parts, err)
	}
	parts, err = c.ReadResource(ctx, "test://bin/logo")
	if err != nil || len(parts) != 1 || !parts[0].IsBlob || string(parts[0].Blob) != "\x89PNG\r\n" || parts[0].MimeType != "image/png" {
		t.Fatalf("read logo = %+v, %v", parts, err)
	}
	parts, err = c.ReadResource(ctx, "test://notes/42")
	if err != nil || len(parts) != 1 || parts[0].Text != "note 42" {
		t.Fatalf("read through the template = %+v, %v", parts, err)
	}
	if _, err := c.ReadResource(ctx, "other://nothing"); err == nil {
		t.Fatal("reading an unknown resource succeeded")
	}
	if _, err := c.Call(ctx, "add_resource", nil); err != nil {
		t.Fatal(err)
	}
	within(t, changed, "resources/list_changed")
	if list, _, err = c.Resources(ctx); err != nil || len(list) != 4 {
		t.Fatalf("after list_changed: %d resources, %v", len(list), err)
	}
}

// startResourcePipe starts a client over a pipe whose server declares
// resources (when declare is set).
func startResourcePipe(t *testing.T, declare bool) (*Client, *pipeTransport) {
	t.Helper()
	p := newPipe()
	c := NewClient("pipe", p, nil)
	t.Cleanup(func() { c.Close() })
	errc := make(chan error, 1)
	go func() { errc <- c.Start(context.Background()) }()
	init := within(t, p.toServer, "initialize")
	caps := `{"tools":{}}`
	if declare {
		caps = `{"tools":{},"resources":{"listChanged":true}}`
	}
	p.toClient <- &Message{ID: init.ID, Result: json.RawMessage(`{"protocolVersion":"` + MCP_PROTOCOL_VERSION + `","capabilities":` + caps + `,"serverInfo":{"name":"pipe","version":"1"}}`)}
	within(t, p.toServer, "initialized")
	if err := within(t, errc, "Start"); err != nil {
		t.Fatal(err)
	}
	return c, p
}

// TestResourcesHostile: a server listing without end is cut at
// MaxResources (more set) however it pages; one that declared no
// resources is never asked; a URI with terminal escapes comes back as
// sent, for the caller to show through Clip.
func TestResourcesHostile(t *testing.T) {
	t.Run("no capability", func(t *testing.T) {
		c, p := startResourcePipe(t, false)
		if _, _, err := c.Resources(testCtx(t)); err == nil || !strings.Contains(err.Error(), "offers no resources") {
			t.Fatalf("Resources = %v", err)
		}
		if _, err := c.ReadResource(testCtx(t), "x://y"); err == nil {
			t.Fatal("ReadResource without the capability succeeded")
		}
		select {
		case m := <-p.toServer:
			t.Fatalf("the client sent %s to a server without resources", m.Method)
		default:
		}
	})
	t.Run("a million entries", func(t *testing.T) {
		c, p := startResourcePipe(t, true)
		done := make(chan struct{})
		defer close(done)
		go func() {
			for page := 0; ; page++ {
				var m *Message
				select {
				case m = <-p.toServer:
				case <-done:
					return
				}
				var b strings.Builder
				b.WriteString(`{"resources":[`)
				for i := range 1000 {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"uri":"x://%d/%d","name":"\u001b[31mred"}`, page, i)
				}
				fmt.Fprintf(&b, `],"nextCursor":"p%d"}`, page)
				select {
				case p.toClient <- &Message{ID: m.ID, Result: json.RawMessage(b.String())}:
				case <-done:
					return
				}
			}
		}()
		list, more, err := c.Resources(testCtx(t))
		if err != nil || !more || len(list) != MaxResources {
			t.Fatalf("Resources: %d, more %v, %v", len(list), more, err)
		}
		if list[0].Name != "\x1b[31mred" {
			t.Fatalf("name = %q", list[0].Name)
		}
	})
	t.Run("a read that is not base64", func(t *testing.T) {
		c, p := startResourcePipe(t, true)
		go func() {
			m := <-p.toServer
			p.toClient <- &Message{ID: m.ID, Result: json.RawMessage(`{"contents":[{"uri":"x://y","blob":"!!!"}]}`)}
		}()
		_, err := c.ReadResource(testCtx(t), "x://y")
		if err == nil || !strings.Contains(err.Error(), "not base64") {
			t.Fatalf("ReadResource = %v", err)
		}
		var we *WireError
		if errors.As(err, &we) {
			t.Fatalf("a local refusal wraps a wire error: %v", err)
		}
	})
}

// TestResourcesListingIsBounded: a server that never answers
// resources/list fails the listing after CallTimeout, naming it.
func TestResourcesListingIsBounded(t *testing.T) {
	p := newPipe()
	c := NewClient("pipe", p, &ClientOptions{CallTimeout: 50 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	errc := make(chan error, 1)
	go func() { errc <- c.Start(context.Background()) }()
	init := within(t, p.toServer, "initialize")
	p.toClient <- &Message{ID: init.ID, Result: json.RawMessage(`{"protocolVersion":"` + MCP_PROTOCOL_VERSION + `","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"pipe","version":"1"}}`)}
	within(t, p.toServer, "initialized")
	if err := within(t, errc, "Start"); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.Resources(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "did not answer resources/list within 50ms") {
		t.Fatalf("Resources = %v", err)
	}
}
