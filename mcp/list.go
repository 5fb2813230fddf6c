package mcp

import (
	"context"
	"errors"
	"fmt"
)

// DefaultMaxPages caps how many pages one listing follows.
const DefaultMaxPages = 1000

// MaxToolsList caps the bytes of one whole listing, over all its pages
// (each page is already capped at MCP_HTTP_MAX_BODY): a server paging
// fresh cursors must not make tai hold a gigabyte of descriptions.
const MaxToolsList = MCP_HTTP_MAX_BODY

// listAll pages through a paginated list (tools/list, and the like):
// it sends method, following nextCursor, and calls each with every item
// of the result's key array (raw, already valid JSON), page by page; an
// error from each stops the listing. A server that repeats a cursor,
// pages past MaxPages, or sends more than MaxToolsList bytes in all gets
// an error instead of an endless loop.
func (c *Client) listAll(ctx context.Context, method, key string, each func(item []byte) error) error {
	seen := map[string]bool{}
	cursor := ""
	total := 0
	for page := 0; ; page++ {
		if page == c.opts.MaxPages {
			return fmt.Errorf("mcp server %q: %s: more than %d pages; stopping (the server keeps sending nextCursor)", c.name, method, c.opts.MaxPages)
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := c.request(ctx, method, params)
		if err != nil {
			return err
		}
		if total += len(raw); total > MaxToolsList {
			return fmt.Errorf("mcp server %q: %s passed %d bytes over %d pages, the most tai reads (MaxToolsList); stopping", c.name, method, MaxToolsList, page+1)
		}
		items, next, err := decodePage(raw, key)
		if err != nil {
			return fmt.Errorf("mcp server %q: malformed %s result: %v", c.name, method, err)
		}
		for _, item := range items {
			if err := each(item); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		cursor = next
		if seen[cursor] {
			return fmt.Errorf("mcp server %q: %s repeated cursor %q; stopping instead of looping forever", c.name, method, cursor)
		}
		seen[cursor] = true
	}
}

// decodePage splits one page of a paginated list into the items of its
// key array (raw) and its nextCursor. It reads member by member rather
// than through encoding/json, which refuses a whole result nested deeper
// than 10,000 levels: one item's hostile schema must not cost the server
// its others.
func decodePage(raw []byte, key string) (items [][]byte, next string, err error) {
	var list, cursor []byte
	if err := eachMember(raw, validating, func(k, val []byte) {
		switch string(k) {
		case key:
			list = val
		case "nextCursor":
			cursor = val
		}
	}); err != nil {
		return nil, "", err
	}
	if !isNull(cursor) {
		s, ok := jsonString(cursor)
		if !ok {
			return nil, "", errors.New("nextCursor is not a string")
		}
		next = s
	}
	if isNull(list) {
		return nil, next, nil
	}
	if err := eachElement(list, trusted, func(val []byte) { items = append(items, val) }); err != nil {
		return nil, "", fmt.Errorf("%s: %v", key, err)
	}
	return items, next, nil
}
