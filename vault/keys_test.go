package vault

import (
	"bytes"
	"testing"
)

func TestCompositeKey(t *testing.T) {
	pairs := [][2]string{{"a", "b"}, {"ab", ""}, {"", "ab"}, {"a\x00", "b"}, {"a", "\x00b"}, {string(make([]byte, 300)), "x"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := compositeKey(p[0], p[1])
		if prev, dup := seen[string(k)]; dup {
			t.Fatalf("%q and %q encode alike", prev, p)
		}
		seen[string(k)] = p
		a, b, err := splitKey(k)
		if err != nil || a != p[0] || b != p[1] {
			t.Fatalf("splitKey(compositeKey(%q)) = %q, %q, %v", p, a, b, err)
		}
		if !bytes.HasPrefix(k, prefixKey(p[0])) {
			t.Fatalf("key of %q lacks its prefix", p)
		}
		for _, q := range pairs {
			if q[0] != p[0] && bytes.HasPrefix(k, prefixKey(q[0])) {
				t.Fatalf("key of %q starts with the prefix of server %q", p, q[0])
			}
		}
	}
	for _, bad := range [][]byte{nil, {5, 'a'}, {0x80}} {
		if _, _, err := splitKey(bad); err == nil {
			t.Errorf("splitKey(%q) accepted a malformed key", bad)
		}
	}
}
