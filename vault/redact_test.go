package vault

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	s := newStore(t, nil)
	for name, v := range map[string]string{
		"gh":    "ghp_abcdef",
		"gh2":   "ghp_abcdef_longer",
		"short": "abc",
		"over1": "XXXXYYYY",
		"over2": "YYYYZZZZZZ",
	} {
		if err := s.SecretSet(name, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.AddRedaction("API_KEY", "sk-from-env-var")
	s.AddRedaction("TINY", "ab")
	tests := []struct {
		name, in, want string
	}{
		{"nothing", "plain text", "plain text"},
		{"one", "token=ghp_abcdef.", "token=[REDACTED:gh]."},
		{"longest first", "ghp_abcdef_longer!", "[REDACTED:gh2]!"},
		{"twice", "ghp_abcdef ghp_abcdef", "[REDACTED:gh] [REDACTED:gh]"},
		{"short values ignored", "abc ab", "abc ab"},
		{"added value", "key sk-from-env-var", "key [REDACTED:API_KEY]"},
		{"overlapping values mask the union", "-XXXXYYYYZZZZZZ-", "-[REDACTED:over2]-"},
		{"adjacent values", "ghp_abcdefsk-from-env-var", "[REDACTED:gh][REDACTED:API_KEY]"},
		{"at the edges", "ghp_abcdef", "[REDACTED:gh]"},
		{"prefix only", "ghp_abcde", "ghp_abcde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Redact(tt.in); got != tt.want {
				t.Fatalf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Changes made through another Store (another process, as far as the file
// is concerned) reach the matcher through the generation counter.
func TestRedactFollowsOtherWriters(t *testing.T) {
	s := newStore(t, nil)
	other, err := Open(s.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-one"); got != "value-one" {
		t.Fatalf("before: %q", got)
	}
	if err := other.SecretSet("one", "value-one", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-one"); got != "[REDACTED:one]" {
		t.Fatalf("after another writer's set: %q", got)
	}
	if err := other.SecretSet("one", "value-two", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-one value-two"); got != "value-one [REDACTED:one]" {
		t.Fatalf("after another writer's change: %q", got)
	}
	if err := other.SecretDelete("one"); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-two"); got != "value-two" {
		t.Fatalf("after another writer's delete: %q", got)
	}
}

// naiveLeaks reports whether any value survives in out.
func naiveLeaks(out string, values []string) string {
	for _, v := range values {
		if strings.Contains(out, v) {
			return v
		}
	}
	return ""
}

func TestRedactLeavesNoValueRandomised(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "abAB01-_"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 200 {
		pats := map[string]string{}
		var values []string
		for i := range 1 + rng.IntN(8) {
			v := word(4 + rng.IntN(5))
			pats[v] = fmt.Sprintf("v%d", i)
			values = append(values, v)
		}
		m := newMatcher(pats)
		var text strings.Builder
		for range 20 {
			if rng.IntN(2) == 0 {
				text.WriteString(values[rng.IntN(len(values))])
			} else {
				text.WriteString(word(rng.IntN(6)))
			}
		}
		out := m.replace(text.String())
		// Names are drawn from "v0".."v7" and brackets are not in the
		// alphabet, so any surviving value comes from the input.
		if v := naiveLeaks(strings.NewReplacer("[REDACTED:", "[", "]", "]").Replace(out), values); v != "" {
			t.Fatalf("round %d: %q survives in %q (input %q)", round, v, out, text.String())
		}
	}
}

func benchSecrets(n int) map[string]string {
	rng := rand.New(rand.NewPCG(3, 4))
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	pats := map[string]string{}
	for i := range n {
		b := make([]byte, 20+rng.IntN(30))
		for j := range b {
			b[j] = chars[rng.IntN(len(chars))]
		}
		pats["sk_"+string(b)] = fmt.Sprintf("secret-%d", i)
	}
	return pats
}

func benchText(pats map[string]string) string {
	var b strings.Builder
	var values []string
	for v := range pats {
		values = append(values, v)
	}
	for i := 0; b.Len() < 64<<10; i++ {
		b.WriteString("The quick brown fox jumps over the lazy dog; status=200 id=12345 ")
		if i%50 == 0 {
			b.WriteString(values[i%len(values)])
		}
	}
	return b.String()
}

// BenchmarkRedact measures Redact of 64 KB against 100 vault secrets,
// including its per-call check of the secrets generation counter.
func BenchmarkRedact(b *testing.B) {
	s := newStore(b, nil)
	pats := benchSecrets(100)
	for v, name := range pats {
		if err := s.SecretSet(name, v, nil); err != nil {
			b.Fatal(err)
		}
	}
	text := benchText(pats)
	if out := s.Redact(text); !strings.Contains(out, "[REDACTED:") {
		b.Fatal("nothing redacted")
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		s.Redact(text)
	}
	reportCPU(b, cpu)
}

// BenchmarkRedactMatcher is the matcher alone, without the vault check.
func BenchmarkRedactMatcher(b *testing.B) {
	pats := benchSecrets(100)
	m := newMatcher(pats)
	text := benchText(pats)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		m.replace(text)
	}
}

// After another Store re-seals (new salt), Redact re-derives the key from
// the passphrase it was given and keeps knowing the sealed secrets.
func TestRedactFollowsReseal(t *testing.T) {
	s := newStore(t, testOptions("pw", nil))
	if err := s.SecretSet("one", "value-one", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, s.Path(), "pw")
	if got := a.Redact("value-one"); got != "[REDACTED:one]" {
		t.Fatalf("before reseal: %q", got)
	}
	b := mustOpen(t, s.Path(), "pw")
	if err := b.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	if err := b.SecretSet("two", "value-two", nil); err != nil {
		t.Fatal(err)
	}
	if got := a.Redact("value-one value-two"); got != "[REDACTED:one] [REDACTED:two]" {
		t.Fatalf("after reseal: %q", got)
	}
}
