package httppolicy

import "strings"

// MediaType returns the media type of a Content-Type value, lower-cased,
// without parameters (what mime.ParseMediaType gives for a valid one, and
// the same cut for one it rejects).
func MediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
