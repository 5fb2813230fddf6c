package secret

import (
	"slices"
	"strings"
)

// MinLen is the shortest value that is hidden: a shorter one (a "1", an
// "on") would shred ordinary text.
const MinLen = 4

// MarkPrefix opens every mark a hidden value leaves.
const MarkPrefix = "[REDACTED"

// Mark is what stands in for a hidden value: [REDACTED:name], or
// [REDACTED] where the value has no name (a token a server echoes back).
func Mark(name string) string {
	if name == "" {
		return MarkPrefix + "]"
	}
	return MarkPrefix + ":" + name + "]"
}

// Hide replaces every one of values at least MinLen bytes long in s with
// Mark(""), longest first, so a whole value goes before a part of it. It
// is for a few values known at the call (a token, an API key); the
// vault's Redactor serves the many it keeps.
func Hide(s string, values ...string) string {
	if len(values) > 1 && !slices.IsSortedFunc(values, longerFirst) {
		values = slices.Clone(values)
		slices.SortStableFunc(values, longerFirst)
	}
	for _, v := range values {
		if len(v) >= MinLen {
			s = strings.ReplaceAll(s, v, Mark(""))
		}
	}
	return s
}

func longerFirst(a, b string) int { return len(b) - len(a) }
