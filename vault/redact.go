package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"tai/vault/secret"
)

// MinLineRedactLen is the shortest line of a multi-line secret (a PEM key)
// that is also redacted on its own, so output showing only some of the
// lines does not pass them. PEM armor lines ("-----BEGIN …") are not
// secret and are left alone.
const MinLineRedactLen = 16

// addValue adds value (and, for a multi-line value, each of its lines
// long enough) to out as value -> name, keeping the smaller name for a
// value two secrets share.
func addValue(out map[string]string, value, name string) {
	add := func(v string) {
		if old, ok := out[v]; !ok || name < old {
			out[v] = name
		}
	}
	if len(value) < secret.MinLen {
		return
	}
	add(value)
	if !strings.Contains(value, "\n") {
		return
	}
	for line := range strings.SplitSeq(value, "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= MinLineRedactLen && !strings.HasPrefix(line, "-----") {
			add(line)
		}
	}
}

// redactor caches what Redactor needs: the vault's secret values, read
// again only when the generation file's stamp (bumped by every process
// that changes a secret or the seal) or the seal key changes, and the
// Redactor built from them and the values given to AddRedaction.
type redactor struct {
	mu       sync.Mutex
	extra    map[string]string // value -> name, from AddRedaction
	extraVer uint64
	secrets  map[string]string // value -> name, from the vault
	loaded   bool
	stamp    genStamp
	file     fileStamp // the vault file the secrets were read from
	key      *sealKey
	cur      *Redactor
	curVer   uint64
}

// Redactor is a snapshot of the values to redact: the vault's secrets and
// the values given to AddRedaction when it was taken. It is immutable and
// safe for concurrent use; take one per result (Store.Redactor) and redact
// every string of the result with it.
type Redactor struct {
	m  *matcher
	fn func(string) string // Redact, bound once: see Func
	// stamp is the secrets generation the Redactor was made at (zero when
	// unknown): AuditAppendWith uses it as is while that is still current.
	stamp genStamp
}

// Func returns r.Redact as a function value. It is made once per
// Redactor, so a call path that hands redaction on as a function
// allocates nothing for it.
func (r *Redactor) Func() func(string) string {
	if r == nil || r.fn == nil {
		return r.Redact
	}
	return r.fn
}

// Redact replaces every value the Redactor knows in text with
// [REDACTED:name]. Where occurrences of several values overlap, the whole
// overlapping stretch is replaced once, named after the longest value, so
// no byte of any of them survives. A nil Redactor knows nothing.
func (r *Redactor) Redact(text string) string {
	if r == nil || r.m == nil || len(text) < secret.MinLen {
		return text
	}
	return r.m.replace(text)
}

// Held returns the length of the longest tail of text that is the start,
// but not the whole, of a value the Redactor knows: what a stream must
// hold back until the next piece shows whether a secret follows.
func (r *Redactor) Held(text string) int {
	if r == nil || r.m == nil {
		return 0
	}
	return r.m.held(text)
}

// Hidden stands in for a value that cannot be shown: one RedactValue
// cannot encode to look inside (and a sensitive tool argument, in engine).
const Hidden = "[hidden]"

// RedactValue returns v, a JSON-like value (decoded JSON, a tool's
// arguments or what a Lua tool returned), with redact applied to every
// string in it, keys too, and whether any string changed. Redacting the
// value, not its encoding, matters: an encoder may escape a secret's & < >
// (as \u0026…) and hide it from a plain match. v itself is never
// modified: it may be a tool's real arguments. A value of another type is
// redacted through its JSON form, or becomes Hidden when it has none.
func RedactValue(redact func(string) string, v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, float64, int, int64, json.Number:
		return v, false
	case string:
		red := redact(x)
		return red, red != x
	case []any:
		out, changed := make([]any, len(x)), false
		for i, e := range x {
			var c bool
			out[i], c = RedactValue(redact, e)
			changed = changed || c
		}
		return out, changed
	case []string:
		out, changed := make([]string, len(x)), false
		for i, e := range x {
			out[i] = redact(e)
			changed = changed || out[i] != e
		}
		return out, changed
	case map[string]any:
		out, changed := make(map[string]any, len(x)), false
		for k, e := range x {
			e, c := RedactValue(redact, e)
			rk := redact(k)
			changed = changed || c || rk != k
			out[rk] = e
		}
		return out, changed
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Hidden, true
	}
	var decoded any
	if json.Unmarshal(b, &decoded) != nil {
		return Hidden, true
	}
	red, changed := RedactValue(redact, decoded)
	if !changed {
		return v, false
	}
	return red, true
}

// AddRedaction makes Redact replace value with [REDACTED:name] from now on
// (a ${VAR} value resolved this run, say). Values shorter than
// secret.MinLen are ignored.
func (s *Store) AddRedaction(name, value string) {
	if len(value) < secret.MinLen {
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

// Redact replaces every known secret value in text with [REDACTED:name]
// (see Redactor.Redact). It fails closed: when the secrets cannot be read
// (the vault is locked by another process past the lock timeout, the file
// cannot be read, sealed secrets lack their key), the whole text is
// withheld and replaced by a note naming the cause. Callers that can
// report an error should take a Redactor instead.
func (s *Store) Redact(text string) string {
	if len(text) < secret.MinLen {
		return text
	}
	red, err := s.Redactor()
	if err != nil {
		return Withheld(err)
	}
	return red.Redact(text)
}

// Withheld is the text that stands for a text that could not be redacted
// because of err.
func Withheld(err error) string {
	return "[withheld: " + err.Error() + "]"
}

// Redactor returns the current snapshot of the values to redact. While no
// process changes a secret or the seal, and the values given to
// AddRedaction stay the same, it costs one fstat(2) of the generation file
// (and a stat(2) of the vault file every FileRecheck) and opens nothing;
// otherwise it reads the secrets again (sealed ones with the key, asked
// for as any sealed read does). A vault file changed without a secret
// change (a copy put in its place, say) has its secrets read again at the
// next look after FileRecheck.
//
// It fails closed: when the secrets cannot be read, or sealed secrets
// cannot be decrypted, it returns an error naming the cause (wrapping
// ErrLocked, ErrNoPassphrase or ErrWrongPassphrase where one applies), and
// nothing bound for a model, a screen, a record or the audit trail may then
// be passed on.
func (s *Store) Redactor() (*Redactor, error) {
	red, _, err := s.redactorAt()
	return red, err
}

// redactorAt is Redactor, also returning the generation stamp its look was
// made at (taken before any read).
func (s *Store) redactorAt() (*Redactor, genStamp, error) {
	if s.closed.Load() {
		return nil, genStamp{}, errClosed
	}
	stamp := s.gen.stamp()
	file := s.watch.current(s.path, false)
	key := s.key.Load()
	r := &s.redactor
	r.mu.Lock()
	current := r.loaded && stamp.known() && stamp == r.stamp && key == r.key
	if current && file == r.file {
		cur := r.snapshot()
		r.mu.Unlock()
		return cur, stamp, nil
	}
	r.mu.Unlock()
	// Stamped before the read: a change after it is seen by the next look.
	file = s.watch.current(s.path, true)
	wait := s.lockTimeout
	if current {
		wait = min(wait, FileRecheck) // a look that only checks waits little
	}
	secrets, unread, err := s.secretValues(wait)
	if current {
		if err != nil || len(unread.sealed) > 0 || unread.names() != "" {
			secrets = nil // unreadable now: what was read before stands
		}
		return r.join(file, secrets), stamp, nil
	}
	if err == nil && len(unread.sealed) > 0 {
		if uerr := s.unlock(); uerr != nil {
			return nil, stamp, notReady(len(unread.sealed), uerr, s.prompt != nil, s.passphrase != nil)
		}
		key = s.key.Load()
		secrets, unread, err = s.secretValues(s.lockTimeout)
	}
	if err != nil {
		return nil, stamp, fmt.Errorf("vault: the vault's secrets could not be read, so no text can be checked for them and none is shown: %w", err)
	}
	if bad := unread.names(); bad != "" {
		return nil, stamp, fmt.Errorf("vault: %s cannot be read, so no text can be checked for them and none is shown: "+
			"the vault file was altered; set them again (secret_set) or delete them (secret_delete)", bad)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets, r.loaded, r.stamp, r.file, r.key = secrets, true, stamp, file, key
	r.rebuild()
	return r.cur, stamp, nil
}

// ownWrite tells the redactor that this Store has just written the vault
// file, which was in state before, under the exclusive file lock it still
// holds. When the secrets were last read from that state, they are current
// for the state the write left (a secret change bumps the generation, seen
// on its own), so the write does not make the next look read them again.
// Without it, every group flush of this process's own audit entries would
// cost its next call a read of the vault.
func (s *Store) ownWrite(before fileStamp) {
	after := s.watch.current(s.path, true)
	r := &s.redactor
	r.mu.Lock()
	if r.loaded && r.file == before {
		r.file = after
	}
	r.mu.Unlock()
}

// join takes in secrets read from the vault file when no secret changed,
// by the generation, but the file did: another process wrote to it, or a
// copy was put in its place. They join those read before and never
// replace them, so such a file can add redactions but remove none (a
// secret a running server was given stays redacted). secrets is nil when
// the file could not be read; what was read before then stands until it
// changes again: a look that only checks must not fail calls, nor ask
// for a passphrase.
func (r *redactor) join(file fileStamp, secrets map[string]string) *Redactor {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.file = file
	added := false
	for v, n := range secrets {
		if _, ok := r.secrets[v]; !ok {
			r.secrets[v], added = n, true
		}
	}
	if added {
		r.rebuild()
	}
	return r.snapshot()
}

// snapshot returns the current Redactor, rebuilt when values were added
// since. r.mu held.
func (r *redactor) snapshot() *Redactor {
	if r.cur == nil || r.curVer != r.extraVer {
		r.rebuild()
	}
	return r.cur
}

// rebuild makes the current Redactor from the cached secrets and the added
// values. r.mu held.
func (r *redactor) rebuild() {
	pats := make(map[string]string, len(r.secrets)+len(r.extra))
	for v, n := range r.extra {
		pats[v] = n
	}
	for v, n := range r.secrets {
		pats[v] = n
	}
	cur := &Redactor{m: newMatcher(pats), stamp: r.stamp}
	cur.fn = cur.Redact
	r.cur, r.curVer = cur, r.extraVer
}

// unreadSecrets lists the secrets secretValues could not read: sealed ones
// without the key, and ones that are damaged (invalid JSON, or sealed
// values the key does not open).
type unreadSecrets struct {
	sealed, damaged []string
}

// names lists the damaged secrets for an error, "" when there are none.
func (u unreadSecrets) names() string {
	switch len(u.damaged) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("secret %q", u.damaged[0])
	}
	return fmt.Sprintf("secrets %q", u.damaged)
}

// secretValues reads every secret value it can (sealed ones only with the
// key) as value -> name, in one read transaction, and lists those it could
// not read.
func (s *Store) secretValues(wait time.Duration) (map[string]string, unreadSecrets, error) {
	out := map[string]string{}
	var unread unreadSecrets
	err := s.viewWithin(wait, func(tx *bolt.Tx) error {
		out, unread = map[string]string{}, unreadSecrets{}
		b := tx.Bucket(bucketSecrets)
		if b == nil {
			return nil
		}
		var k *sealKey
		var kerr error
		opened := false
		return b.ForEach(func(name, v []byte) error {
			row, err := decodeSecret(string(name), v)
			if err != nil {
				unread.damaged = append(unread.damaged, string(name))
				return nil
			}
			value := row.Value
			if row.Sealed != nil {
				if !opened {
					k, kerr = s.opener(tx)
					opened = true
				}
				if kerr != nil {
					if errors.Is(kerr, errNeedKey) {
						unread.sealed = append(unread.sealed, string(name))
						return nil
					}
					return kerr
				}
				plain, err := k.open(row.Sealed, secretAAD(string(name)))
				if err != nil {
					unread.damaged = append(unread.damaged, string(name))
					return nil
				}
				value = string(plain)
			}
			addValue(out, value, string(name))
			return nil
		})
	})
	return out, unread, err
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
	depth []int32 // length of the prefix a state stands for
	// maxLen is the longest value's length.
	maxLen int
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
	m := &matcher{edges: [][]edge{nil}, fail: []int32{0}, out: []int32{-1}, depth: []int32{0}}
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
				m.depth = append(m.depth, int32(j+1))
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
		m.maxLen = max(m.maxLen, len(v))
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

// step is the automaton's transition from st on c.
func (m *matcher) step(st int32, c byte) int32 {
	for st != 0 {
		if n := m.child(st, c); n >= 0 {
			return n
		}
		st = m.fail[st]
	}
	return m.root[c]
}

// held returns the length of the longest tail of text that is a proper
// prefix of a value. The automaton's state after text is the longest tail
// that is a prefix of some value; states without children are whole
// values only, so their failure links are followed to a shorter tail that
// can still grow. Only the last maxLen bytes can matter.
func (m *matcher) held(text string) int {
	from := max(0, len(text)-m.maxLen)
	st := int32(0)
	for i := from; i < len(text); i++ {
		st = m.step(st, text[i])
	}
	for st != 0 && len(m.edges[st]) == 0 {
		st = m.fail[st]
	}
	if st == 0 {
		return 0
	}
	return int(m.depth[st])
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
		b.WriteString(markPrefix)
		b.WriteString(m.names[sp.pat])
		b.WriteString("]")
		at = sp.end
	}
	b.WriteString(text[at:])
	return b.String()
}
