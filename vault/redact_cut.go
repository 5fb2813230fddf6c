package vault

import (
	"slices"
	"strings"

	"tai/vault/secret"
)

// markPrefix opens the mark Redact writes in place of a secret: the one
// mark, secret.Mark, with the secret's name.
const markPrefix = secret.MarkPrefix + ":"

// MarkNameMax is the longest name a mark Redact writes can carry and Cut
// keeps whole: the longest secret name (see ValidSecretName).
const MarkNameMax = 128

// Cut returns where to cut text, redacted by r, to keep at most n bytes:
// n, or just past a [REDACTED:name] mark that n falls inside, so no mark
// Redact wrote is cut in two. Only a mark r could have written is kept
// whole: its name is one r knows and at most MarkNameMax bytes long. Text
// that only looks like a mark (a server's error holding "[REDACTED:"
// followed by megabytes) is cut at n like any other text, so the cut
// holds for whatever text a server or a model supplies.
func (r *Redactor) Cut(text string, n int) int {
	if n >= len(text) {
		return len(text)
	}
	if n <= 0 {
		return 0
	}
	// The last mark that starts before n, even if n falls inside
	// "[REDACTED:". A mark Redact wrote is at most this long, so one that
	// starts earlier cannot reach past n.
	const longest = len(markPrefix) + MarkNameMax + 1
	from := max(0, n-longest)
	i := strings.LastIndex(text[from:min(len(text), n+len(markPrefix)-1)], markPrefix)
	if i < 0 {
		return n
	}
	i += from
	if i >= n {
		return n
	}
	name := text[i+len(markPrefix) : min(len(text), i+longest)]
	j := strings.IndexByte(name, ']')
	if j < 0 {
		return n
	}
	end := i + len(markPrefix) + j + 1
	if end <= n || !r.knows(name[:j]) {
		return n
	}
	return end
}

// knows reports whether name is the name of a value r redacts.
func (r *Redactor) knows(name string) bool {
	return r != nil && r.m != nil && slices.Contains(r.m.names, name)
}
