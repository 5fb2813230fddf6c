package bridge

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// MaxNameLen is the longest bridged tool name: OpenAI and Anthropic refuse
// longer ones.
const MaxNameLen = 64

// sanitize maps s to [a-z0-9_]: letters are lowercased and anything else
// becomes '_'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// BridgedName returns mcp_<server>_<tool> sanitized to [a-z0-9_] and at
// most MaxNameLen long, before uniqueness is settled: a name too long is
// cut and ends in 8 hex digits of a hash of server and tool, so two long
// names that share a beginning still differ.
func BridgedName(server, tool string) string {
	t := sanitize(tool)
	if t == "" {
		t = "1" // an empty part gains a numeric suffix
	}
	name := "mcp_" + sanitize(server) + "_" + t
	if len(name) <= MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return name[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
}

// namer hands out unique bridged names in the order asked: a name already
// taken gains _2, _3, … (cut to fit MaxNameLen).
type namer struct{ taken map[string]bool }

func newNamer() *namer { return &namer{taken: map[string]bool{}} }

func (n *namer) name(server, tool string) string {
	base := BridgedName(server, tool)
	name := base
	for i := 2; n.taken[name]; i++ {
		suffix := "_" + strconv.Itoa(i)
		name = base
		if len(name)+len(suffix) > MaxNameLen {
			name = name[:MaxNameLen-len(suffix)]
		}
		name += suffix
	}
	n.taken[name] = true
	return name
}
