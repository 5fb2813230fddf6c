package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
)

// Root is one root a client offers a server (roots/list): a file:// URI
// and a name for it.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// RootOf returns the root for an absolute folder: its file:// URI, named
// after the folder's last element.
func RootOf(dir string) Root {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	return Root{URI: u.String(), Name: filepath.Base(dir)}
}

// RootsResult returns the answer to roots/list for roots (an empty list,
// never null, when there are none).
func RootsResult(roots []Root) json.RawMessage {
	if roots == nil {
		roots = []Root{}
	}
	b, _ := json.Marshal(struct {
		Roots []Root `json:"roots"`
	}{roots})
	return b
}

// RootsChanged sends notifications/roots/list_changed: the server should
// ask roots/list again.
func (c *Client) RootsChanged(ctx context.Context) error {
	if err := c.notify(ctx, MethodRootsListChanged, nil); err != nil {
		return c.wrap(MethodRootsListChanged, err)
	}
	return nil
}
