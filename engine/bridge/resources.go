package bridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// ReadResourceTool and ResourcesTool are the agent tools that list and
// read the resources of the servers a profile enables.
const (
	ResourcesTool    = "mcp_resources"
	ReadResourceTool = "mcp_read_resource"
)

// resourcesPage is how many resources one mcp_resources answer shows.
const resourcesPage = 50

// uriMax is the longest URI shown whole to a model or a person; a longer
// one is clipped (and can only be read by naming it whole).
const uriMax = 2048

// ResourceList is what one server lists of its resources.
type ResourceList struct {
	Server    string                 `json:"server"`
	Resources []mcp.Resource         `json:"resources"`
	Templates []mcp.ResourceTemplate `json:"templates"`
	// More says the server listed more than mcp.MaxResources.
	More bool `json:"more,omitempty"`
}

// quietWait bounds a quiet listing (Tab completion): a server slower to
// start or to list gives no candidates rather than a frozen line.
const quietWait = 5 * time.Second

// ErrWouldAsk is returned by a quiet listing (see Resources) that would
// have to start a server a person has not consented to as it stands.
var ErrWouldAsk = errors.New("the server is not running and starting it needs a person's consent")

// resourceServer returns the state of server when the caller in ctx may
// reach it: registered and enabled for its profile.
func (b *Bridge) resourceServer(ctx context.Context, server string) (*serverState, error) {
	if server == "" {
		return nil, errors.New("give server (a name from mcp_list)")
	}
	s, err := b.reload()
	if err != nil {
		return nil, err
	}
	st := s.servers[server]
	if st == nil {
		return nil, fmt.Errorf("mcp server %s is not registered: mcp_list shows the servers", mcp.Clip(server))
	}
	if profile := b.profileFor(ctx); !st.profiles[profile] {
		return nil, errors.New(st.disabledFor(profile))
	}
	return st, nil
}

// Resources lists server's resources and templates, from the
// connection's cache when the server has not said its list changed since.
// The server must be enabled for the caller's profile. With quiet set it
// never asks a person anything: a server whose start would need consent
// gets ErrWouldAsk, and it gives up after quietWait (Tab completion lists
// quietly).
func (b *Bridge) Resources(ctx context.Context, server string, quiet bool) (ResourceList, error) {
	if quiet {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, quietWait)
		defer cancel()
		list, err := b.resources(ctx, server, true)
		if err != nil && ctx.Err() == context.DeadlineExceeded {
			return list, fmt.Errorf("mcp server %s did not list its resources within %s: /mcp resources %s waits for it", mcp.Clip(server), quietWait, server)
		}
		return list, err
	}
	return b.resources(ctx, server, false)
}

func (b *Bridge) resources(ctx context.Context, server string, quiet bool) (ResourceList, error) {
	st, err := b.resourceServer(ctx, server)
	if err != nil {
		return ResourceList{}, err
	}
	cn, err := b.connFor(server)
	if err != nil {
		return ResourceList{}, err
	}
	cn.mu.Lock()
	if cn.res != nil && !cn.resStale.Load() && cn.c != nil {
		list := *cn.res
		cn.mu.Unlock()
		return list, nil
	}
	open := cn.c != nil
	cn.mu.Unlock()
	if quiet && !open && !b.opensQuietly(st) {
		return ResourceList{}, ErrWouldAsk
	}
	c, err := b.client(ctx, st, !quiet)
	if err != nil {
		return ResourceList{}, err
	}
	// A list_changed from now on makes this listing stale in turn.
	cn.resStale.Store(false)
	list := ResourceList{Server: server}
	if list.Resources, list.More, err = c.Resources(ctx); err != nil {
		return ResourceList{}, b.resourceFailure(server, c, err)
	}
	var more bool
	if list.Templates, more, err = c.ResourceTemplates(ctx); err != nil {
		return ResourceList{}, b.resourceFailure(server, c, err)
	}
	list.More = list.More || more
	// Lists go to Lua through JSON, where a nil slice would be null (a
	// truthy value, not a table): none is an empty list.
	if list.Resources == nil {
		list.Resources = []mcp.Resource{}
	}
	if list.Templates == nil {
		list.Templates = []mcp.ResourceTemplate{}
	}
	cn.mu.Lock()
	if cn.c == c {
		cn.res = &list
	}
	cn.mu.Unlock()
	return list, nil
}

// resourceFailure drops a dead connection (the next use opens a new one)
// and words err for a person and a model.
func (b *Bridge) resourceFailure(server string, c *mcp.Client, err error) error {
	if dead(err) || errors.Is(err, mcp.ErrTooLarge) {
		stderr := c.Stderr()
		b.forget(server, c)
		return b.failure(fmt.Errorf("%w (tai starts it again on the next use)", err), stderr)
	}
	return err
}

// opensQuietly reports whether st's server starts without asking anyone:
// its expanded spawn is the one consented to.
func (b *Bridge) opensQuietly(st *serverState) bool {
	e, _, err := b.expand(st.entry)
	if err != nil {
		return false
	}
	return b.spawnFor(e, st.entry).digest() == st.row.Consented
}

// readResource reads uri from server for the caller in ctx, who must have
// the server enabled: text parts as text under a line naming them, blobs
// as bytes (the spill stores them as a record, as an embedded resource's).
// Approval, audit, redaction and the spill happen around it (see
// ReadResource).
func (b *Bridge) readResource(ctx context.Context, server, uri string) (tool.Result, error) {
	st, err := b.resourceServer(ctx, server)
	if err != nil {
		return tool.ErrorResult("%s: %v", ReadResourceTool, err), nil
	}
	c, err := b.client(ctx, st, true)
	if err != nil {
		return tool.Result{}, err
	}
	parts, err := c.ReadResource(ctx, uri)
	if err != nil {
		if dead(err) || errors.Is(err, mcp.ErrTooLarge) {
			// A stdio server that sent too large a line has lost its
			// connection with it.
			return tool.Result{}, b.resourceFailure(server, c, err)
		}
		return tool.ErrorResult("%s: %v", ReadResourceTool, err), nil
	}
	return readResult(uri, parts), nil
}

// readResult turns what resources/read returned into a result.
func readResult(uri string, parts []mcp.ResourceContents) tool.Result {
	if len(parts) == 0 {
		return tool.TextResult("[resource " + uriText(uri) + " is empty]")
	}
	out := tool.Result{Content: make([]tool.Content, 0, len(parts))}
	for _, p := range parts {
		u := cmp.Or(p.URI, uri)
		if p.IsBlob {
			mime := cmp.Or(p.MimeType, "application/octet-stream")
			out.Content = append(out.Content, tool.Content{Type: "resource", MIME: mime, Data: p.Blob, URI: u})
			continue
		}
		head := "[resource " + uriText(u)
		if p.MimeType != "" {
			head += " (" + screen.VisibleLine(p.MimeType) + ")"
		}
		out.Content = append(out.Content, tool.Content{Type: "text", Text: head + "]\n" + p.Text})
	}
	return out
}

// uriText is uri quoted on one line for a model or a person: whole up to
// uriMax bytes, with anything a terminal would act on made visible.
func uriText(uri string) string {
	if len(uri) > uriMax {
		return mcp.Clip(uri)
	}
	return `"` + screen.VisibleLine(uri) + `"`
}

// ReadResource reads uri from server as the caller in ctx: approved as a
// call of that server's tools would be (same approver, same kept rules,
// keyed "server/resources/read"), audited as an "mcp-call" of that
// origin, its result redacted, capped and spilled like any tool result.
// A call the person makes themselves (tool.ByPerson: an @server:uri
// mention) is not asked about. A served client never reaches it.
func (b *Bridge) ReadResource(ctx context.Context, server, uri string) (tool.Result, error) {
	c := tool.CallerFrom(ctx)
	if c.NativeOnly {
		return tool.ErrorResult("%s: tai never serves the resources of the MCP servers it uses", ReadResourceTool), nil
	}
	if _, err := b.resourceServer(ctx, server); err != nil {
		return tool.ErrorResult("%s: %v", ReadResourceTool, err), nil
	}
	if uri == "" {
		return tool.ErrorResult("%s: give uri (from mcp_resources, or a resource link in a tool result)", ReadResourceTool), nil
	}
	read := tool.Tool{
		Name:        ReadResourceTool,
		Description: "reads one resource of " + server,
		Parameters:  readParams(),
		Origin:      server + "/resources/read",
		Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
			return b.readResource(ctx, server, uri)
		},
	}
	// The read is the caller's own tool for this one dispatch, so it goes
	// through the registry's whole path under its origin.
	own := make(map[string]tool.Tool, len(c.Own)+1)
	maps.Copy(own, c.Own)
	own[read.Name] = read
	c.Own = own
	res, err := b.reg.Dispatch(tool.WithCaller(ctx, c), read.Name, map[string]any{"server": server, "uri": uri})
	if err != nil {
		// The tool that ran this one names it again.
		return res, mcp.Reworded(err, strings.TrimPrefix(err.Error(), "tool "+ReadResourceTool+": "))
	}
	return res, nil
}

func readParams() map[string]any {
	return obj([]string{"server", "uri"}, map[string]any{
		"server": str("server name (from mcp_list; a resource link names it)"),
		"uri":    str("the resource's URI, as mcp_resources or a resource link gives it; a URI a template makes is readable too"),
	})
}

// resourceTools are the agent tools over resources.
func (b *Bridge) resourceTools() []tool.Tool {
	return []tool.Tool{
		{
			Name: ResourcesTool,
			Description: "List the resources (URI, name, type, size) and URI templates of an MCP server enabled for this profile, or of every " +
				"enabled server; read one with mcp_read_resource. Long lists come in pages: pass the cursor an answer ends with.",
			Parameters: obj(nil, map[string]any{
				"server": str("server name (default: every enabled server)"),
				"cursor": str("the cursor a previous answer ended with, for the next page"),
			}),
			// Listing is what tai does itself to know a server: it reads
			// names, not contents. Starting a server still needs consent.
			Safe:     true,
			HostOnly: true,
			Run:      b.runResources,
		},
		{
			Name: ReadResourceTool,
			Description: "Read one resource of an MCP server enabled for this profile: a URI from mcp_resources, from a resource link " +
				"in a tool result (it names the server), or one a URI template makes. Approved, audited and capped like a call of that server's tools.",
			Parameters: readParams(),
			// The read it makes asks for approval as that server's call.
			Safe:     true,
			HostOnly: true,
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				server, err := argString(args, "server")
				if err != nil {
					return tool.ErrorResult("%s: %v", ReadResourceTool, err), nil
				}
				uri, err := argString(args, "uri")
				if err != nil {
					return tool.ErrorResult("%s: %v", ReadResourceTool, err), nil
				}
				return b.ReadResource(ctx, server, uri)
			},
		},
	}
}

// runResources answers mcp_resources: one page of the listing of one
// server, or of every server enabled for the profile.
func (b *Bridge) runResources(ctx context.Context, args map[string]any) (tool.Result, error) {
	if tool.CallerFrom(ctx).NativeOnly {
		return tool.ErrorResult("%s: tai never serves the resources of the MCP servers it uses", ResourcesTool), nil
	}
	server, err := argString(args, "server")
	if err != nil {
		return tool.ErrorResult("%s: %v", ResourcesTool, err), nil
	}
	cursor, err := argString(args, "cursor")
	if err != nil {
		return tool.ErrorResult("%s: %v", ResourcesTool, err), nil
	}
	from := 0
	if cursor != "" {
		if from, err = strconv.Atoi(cursor); err != nil || from < 0 {
			return tool.ErrorResult("%s: cursor %s is not one an answer gave: leave it out to start again", ResourcesTool, mcp.Clip(cursor)), nil
		}
	}
	servers := []string{server}
	if server == "" {
		if servers, err = b.enabledServers(ctx); err != nil {
			return tool.ErrorResult("%s: %v", ResourcesTool, err), nil
		}
		if len(servers) == 0 {
			return tool.TextResult("No MCP server is enabled for this profile."), nil
		}
	}
	var lists []ResourceList
	var notes []string
	for _, name := range servers {
		list, err := b.Resources(ctx, name, false)
		if err != nil {
			if server != "" {
				return tool.ErrorResult("%s: %v", ResourcesTool, err), nil
			}
			notes = append(notes, fmt.Sprintf("%s: %s", name, oneLine(err.Error(), 300)))
			continue
		}
		lists = append(lists, list)
	}
	return tool.TextResult(resourcesText(lists, notes, from)), nil
}

// enabledServers names the servers enabled for the caller's profile.
func (b *Bridge) enabledServers(ctx context.Context) ([]string, error) {
	s, err := b.reload()
	if err != nil {
		return nil, err
	}
	profile := b.profileFor(ctx)
	var out []string
	for name, st := range s.servers {
		if st.profiles[profile] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// resourcesText shows the entries of lists from the from-th on, at most
// resourcesPage of them (resources, then templates, server by server),
// and ends with the cursor of the next page when there is one.
func resourcesText(lists []ResourceList, notes []string, from int) string {
	var lines []string
	for _, l := range lists {
		for _, r := range l.Resources {
			lines = append(lines, resourceLine(l.Server, r))
		}
		for _, t := range l.Templates {
			lines = append(lines, templateLine(l.Server, t))
		}
		if l.More {
			lines = append(lines, fmt.Sprintf("%s: [the server lists more than %d; the rest are not shown]", l.Server, mcp.MaxResources))
		}
	}
	var b strings.Builder
	if len(lines) == 0 && from == 0 {
		b.WriteString("No resources are listed.\n")
	}
	end := min(from+resourcesPage, len(lines))
	for _, l := range lines[min(from, len(lines)):end] {
		b.WriteString(l + "\n")
	}
	for _, n := range notes {
		b.WriteString("(" + n + ")\n")
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "[%d more: call %s again with cursor %q]\n", len(lines)-end, ResourcesTool, strconv.Itoa(end))
	}
	return b.String()
}

// resourceLine is one resource for a model: server, URI, name, type,
// size and description.
func resourceLine(server string, r mcp.Resource) string {
	line := screen.VisibleLine(server) + " " + uriText(r.URI)
	if name := cmp.Or(r.Title, r.Name); name != "" {
		line += " " + mcp.Clip(name)
	}
	if r.MimeType != "" {
		line += " (" + screen.VisibleLine(r.MimeType) + ")"
	}
	if r.Size != nil {
		line += fmt.Sprintf(" %d bytes", *r.Size)
	}
	if r.Description != "" {
		line += ": " + screen.VisibleLine(oneLine(r.Description, 200))
	}
	return line
}

// templateLine is one URI template for a model.
func templateLine(server string, t mcp.ResourceTemplate) string {
	line := screen.VisibleLine(server) + " template " + uriText(t.URITemplate)
	if name := cmp.Or(t.Title, t.Name); name != "" {
		line += " " + mcp.Clip(name)
	}
	if t.MimeType != "" {
		line += " (" + screen.VisibleLine(t.MimeType) + ")"
	}
	if t.Description != "" {
		line += ": " + screen.VisibleLine(oneLine(t.Description, 200))
	}
	return line
}
