package vault

import (
	"bytes"
	"sort"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// MinRedactLen is the shortest value Redact replaces: shorter ones (a "1",
// an "on") would shred ordinary text.
const MinRedactLen = 4

// redactor caches the matcher built from the vault's secrets and the values
// given to AddRedaction. It is rebuilt only when the secrets generation
// counter (bumped in the same transaction as every secret change, by any
// process), the set of added values or the availability of the seal key
// changes.
type redactor struct {
	mu       sync.Mutex
	extra    map[string]string // value -> name, from AddRedaction
	extraVer uint64
	secrets  map[string]string // value -> name, from the vault
	m        *matcher
	built    bool
	gen      uint64
	ver      uint64
	keyed    bool
}

// AddRedaction makes Redact replace value with [REDACTED:name] from now on
// (a ${VAR} value resolved this run, say). Values shorter than
// MinRedactLen are ignored.
func (s *Store) AddRedaction(name, value string) {
	if len(value) < MinRedactLen {
		return
	}
	if name == "" {
		name = "value"
	}
	r := &s.redactor
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.extra[value]; ok && old <= name {
		return
	}
	r.extra[value] = name
	r.extraVer++
}

// Redact replaces every known secret value in text with [REDACTED:name]:
// the vault's secrets and the values given to AddRedaction, ignoring
// values shorter than MinRedactLen. Where occurrences of several values
// overlap, the whole overlapping stretch is replaced once, named after the
// longest value, so no byte of any of them survives. Sealed secrets are
// known only once the passphrase is available (asked for here if needed);
// without it Redact replaces what it knows.
func (s *Store) Redact(text string) string {
	if len(text) < MinRedactLen {
		return text
	}
	if m := s.currentMatcher(); m != nil {
		return m.replace(text)
	}
	return text
}

func (s *Store) currentMatcher() *matcher {
	var gen uint64
	var seal *sealMeta
	err := s.viewOnce(func(tx *bolt.Tx) error {
		gen = readGen(tx)
		var err error
		seal, err = readSealMeta(tx)
		return err
	})
	keyed := s.keyFor(seal)
	r := &s.redactor
	r.mu.Lock()
	if r.built && r.ver == r.extraVer && (err != nil || r.gen == gen && (seal == nil || r.keyed == keyed)) {
		m := r.m
		r.mu.Unlock()
		return m
	}
	r.mu.Unlock()
	if err == nil && seal != nil && !keyed {
		// Without a passphrase source this fails quietly: redact what is known.
		_ = s.unlock()
	}
	var secrets map[string]string
	if err == nil {
		secrets, gen, keyed, err = s.secretValues()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.secrets, r.gen, r.keyed = secrets, gen, keyed
	}
	pats := make(map[string]string, len(r.secrets)+len(r.extra))
	for v, n := range r.extra {
		pats[v] = n
	}
	for v, n := range r.secrets {
		pats[v] = n
	}
	r.m, r.ver, r.built = newMatcher(pats), r.extraVer, true
	return r.m
}

// keyFor reports whether the Store holds the key of seal.
func (s *Store) keyFor(seal *sealMeta) bool {
	k := s.key.Load()
	return seal != nil && k != nil && bytes.Equal(k.salt, seal.Salt)
}

// secretValues reads every secret value it can (sealed ones only with the
// key) as value -> name, with the generation they belong to and whether
// the seal key was at hand.
func (s *Store) secretValues() (map[string]string, uint64, bool, error) {
	out := map[string]string{}
	var gen uint64
	var keyed bool
	err := s.viewOnce(func(tx *bolt.Tx) error {
		gen = readGen(tx)
		k, _ := s.opener(tx)
		keyed = k != nil
		b := tx.Bucket(bucketSecrets)
		if b == nil {
			return nil
		}
		return b.ForEach(func(name, v []byte) error {
			row, err := decodeSecret(string(name), v)
			if err != nil {
				return nil
			}
			value := row.Value
			if row.Sealed != nil {
				if k == nil {
					return nil
				}
				plain, err := k.open(row.Sealed, secretAAD(string(name)))
				if err != nil {
					return nil
				}
				value = string(plain)
			}
			if len(value) < MinRedactLen {
				return nil
			}
			if old, ok := out[value]; !ok || string(name) < old {
				out[value] = string(name)
			}
			return nil
		})
	})
	return out, gen, keyed, err
}

// matcher is an Aho–Corasick automaton over the values to redact. The root
// has a dense transition table (most text bytes start nowhere); deeper
// states keep sparse, sorted edges and failure links.
type matcher struct {
	root  [256]int32
	edges [][]edge
	fail  []int32
	out   []int32 // index of the longest value ending at the state, or -1
	vals  []string
	names []string
}

type edge struct {
	b    byte
	next int32
}

func (m *matcher) child(st int32, c byte) int32 {
	if st == 0 {
		return m.root[c]
	}
	es := m.edges[st]
	lo, hi := 0, len(es)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if es[mid].b < c {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(es) && es[lo].b == c {
		return es[lo].next
	}
	return -1
}

// newMatcher builds the automaton for pats (value -> name); nil when there
// is nothing to match.
func newMatcher(pats map[string]string) *matcher {
	if len(pats) == 0 {
		return nil
	}
	m := &matcher{edges: [][]edge{nil}, fail: []int32{0}, out: []int32{-1}}
	for i := range m.root {
		m.root[i] = -1
	}
	vals := make([]string, 0, len(pats))
	for v := range pats {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	for i, v := range vals {
		m.vals = append(m.vals, v)
		m.names = append(m.names, pats[v])
		st := int32(0)
		for j := 0; j < len(v); j++ {
			next := m.child(st, v[j])
			if next < 0 {
				next = int32(len(m.edges))
				m.edges = append(m.edges, nil)
				m.fail = append(m.fail, 0)
				m.out = append(m.out, -1)
				if st == 0 {
					m.root[v[j]] = next
				} else {
					es := m.edges[st]
					k := sort.Search(len(es), func(k int) bool { return es[k].b >= v[j] })
					es = append(es, edge{})
					copy(es[k+1:], es[k:])
					es[k] = edge{v[j], next}
					m.edges[st] = es
				}
			}
			st = next
		}
		m.out[st] = int32(i)
	}
	// Breadth-first: failure links, and out inherited along them (a state's
	// own value, when it has one, is the longest ending there).
	queue := make([]int32, 0, len(m.edges))
	for c := range m.root {
		if n := m.root[c]; n >= 0 {
			m.fail[n] = 0
			queue = append(queue, n)
		} else {
			m.root[c] = 0
		}
	}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		for _, e := range m.edges[st] {
			f := m.fail[st]
			for {
				if n := m.child(f, e.b); n >= 0 && n != e.next {
					m.fail[e.next] = n
					break
				}
				if f == 0 {
					m.fail[e.next] = 0
					break
				}
				f = m.fail[f]
			}
			if m.out[e.next] < 0 {
				m.out[e.next] = m.out[m.fail[e.next]]
			}
			queue = append(queue, e.next)
		}
	}
	return m
}

type span struct {
	start, end int
	pat        int32
}

// replace returns text with every stretch covered by an occurrence of a
// value replaced by [REDACTED:name].
func (m *matcher) replace(text string) string {
	var spans []span
	st := int32(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		// Follow failure links until a state has an edge for c; the root
		// has one for every byte (to itself when no value starts with c).
		for st != 0 {
			if n := m.child(st, c); n >= 0 {
				st = n
				break
			}
			st = m.fail[st]
		}
		if st == 0 {
			if st = m.root[c]; st == 0 {
				continue
			}
		}
		p := m.out[st]
		if p < 0 {
			continue
		}
		sp := span{start: i + 1 - len(m.vals[p]), end: i + 1, pat: p}
		for len(spans) > 0 && sp.start < spans[len(spans)-1].end {
			last := spans[len(spans)-1]
			spans = spans[:len(spans)-1]
			if len(m.vals[last.pat]) > len(m.vals[sp.pat]) {
				sp.pat = last.pat
			}
			sp.start = min(sp.start, last.start)
		}
		spans = append(spans, sp)
	}
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, sp := range spans {
		b.WriteString(text[at:sp.start])
		b.WriteString("[REDACTED:")
		b.WriteString(m.names[sp.pat])
		b.WriteString("]")
		at = sp.end
	}
	b.WriteString(text[at:])
	return b.String()
}
