package tool

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"tai/engine/llm"
)

// DefaultSelectCap is how many matched tools SelectTools offers beyond the
// core set when SelectOptions.Cap is zero.
const DefaultSelectCap = 24

// DefaultToolBudget is how many tokens the schemas of every enabled tool
// may take before SelectTools starts choosing among them, when
// SelectOptions.Budget is zero: a tenth of a 128k-token context.
const DefaultToolBudget = 12800

// CoreTools are offered every turn (when registered): enough to work and to
// find the rest with tool_search.
var CoreTools = []string{
	"ask_user", "edit_file", "glob", "grep", "list_dir", "read_file",
	"shell", "tool_search", "write_file",
}

// How much of the conversation SelectTools reads: the last user message in
// full (up to selectUserBytes) and the text of a few messages before it.
const (
	selectRecent      = 6
	selectRecentBytes = 4096
	selectUserBytes   = 16384
)

// MaxMatchedSchemas bounds the bytes of the JSON Schemas of the matched
// tools SelectTools offers beyond the core, enabled and called ones: a
// bridged tool's schema is its server's, up to 64 KiB, and goes with every
// request that offers it. A match that would pass the bound is left for
// tool_search.
const MaxMatchedSchemas = 256 << 10

// SelectOptions tunes SelectTools.
type SelectOptions struct {
	// Core names tools offered whenever they exist; nil means CoreTools.
	Core []string
	// Enabled names tools offered every turn on top of the core set (tools
	// found with tool_search, say).
	Enabled []string
	// Allow, when set, restricts every offered tool (a profile's tool
	// selection, a fork's subset).
	Allow func(name string) bool
	// Cap bounds the matched tools offered beyond Core and Enabled; zero
	// means DefaultSelectCap, negative means none.
	Cap int
	// Profile is the profile of the session selecting, passed to the
	// SpecSource (which servers are enabled depends on it); empty means
	// the default.
	Profile string
	// Budget is how many tokens (estimated at 4 bytes a token of each
	// tool's name, description and schema) the tools Allow lets through
	// may take together and all be offered; past it the choice below is
	// made. Zero means DefaultToolBudget; negative means always choose.
	Budget int
}

// Selection is what Select chose and from how many.
type Selection struct {
	// Offered are the tools offered this turn.
	Offered []llm.ToolSpec
	// Available counts the tools that could have been offered (registered
	// or from the SpecSource, and allowed).
	Available int
	// Tokens estimates what the schemas of the Available tools take.
	Tokens int
	// Selected reports that they were past the budget, so Offered holds a
	// choice among them and tool_search reaches the rest.
	Selected bool
}

// SelectTools picks the tools to offer the model this turn: every tool
// allowed when their schemas fit in opts.Budget (the core set first, then
// by name); past it, the core set, the enabled set, every tool already
// called in the recent conversation, then the tools whose name and
// description words best match the recent conversation, up to a cap. Ties
// break by name, so the choice is deterministic. Word indexes are built
// once per registration change, and the conversation is tokenised once
// per call.
func (r *Registry) SelectTools(conv []llm.Message, opts SelectOptions) []llm.ToolSpec {
	return r.Select(conv, opts).Offered
}

// Select is SelectTools saying how many tools were available and whether
// it had to choose among them.
func (r *Registry) Select(conv []llm.Message, opts SelectOptions) Selection {
	reg, ext := r.indexes(opts.Profile)

	allow := opts.Allow
	if allow == nil {
		allow = func(string) bool { return true }
	}
	core := opts.Core
	if core == nil {
		core = CoreTools
	}
	limit := opts.Cap
	if limit == 0 {
		limit = DefaultSelectCap
	}
	tokens := opts.Budget
	if tokens == 0 {
		tokens = DefaultToolBudget
	}

	var sel Selection
	var all []llm.ToolSpec
	for k, idx := range []*wordIndex{reg, ext} {
		for i, s := range idx.specs {
			if !allow(s.Name) || k == 1 && hasName(reg, s.Name) {
				continue
			}
			sel.Available++
			sel.Tokens += (idx.sizes[i] + 3) / 4
			all = append(all, s)
		}
	}

	var out []llm.ToolSpec
	taken := map[string]bool{}
	take := func(name string) {
		if taken[name] || !allow(name) {
			return
		}
		if s, ok := reg.spec(name); ok {
			out = append(out, s)
			taken[name] = true
		} else if s, ok := ext.spec(name); ok {
			out = append(out, s)
			taken[name] = true
		}
	}
	for _, n := range core {
		take(n)
	}
	for _, n := range opts.Enabled {
		take(n)
	}
	if tokens > 0 && sel.Tokens <= tokens {
		slices.SortFunc(all, func(a, b llm.ToolSpec) int { return strings.Compare(a.Name, b.Name) })
		for _, s := range all {
			take(s.Name)
		}
		sel.Offered = out
		return sel
	}
	sel.Selected = true
	for _, n := range calledTools(conv) {
		take(n)
	}
	if limit < 0 {
		sel.Offered = out
		return sel
	}
	budget := MaxMatchedSchemas
	for _, m := range rankMatches(conversationWords(conv), limit+len(taken), taken, allow, reg, ext) {
		if limit == 0 {
			break
		}
		if taken[m.Name] {
			continue
		}
		size := schemaOf(m.Name, reg, ext)
		if size > budget {
			continue
		}
		budget -= size
		out = append(out, m)
		taken[m.Name] = true
		limit--
	}
	sel.Offered = out
	return sel
}

func hasName(idx *wordIndex, name string) bool {
	_, ok := idx.lookup(name)
	return ok
}

// schemaOf returns the schema size the first index holding name measured
// (a registered tool hides an extra one of the same name, as in
// rankMatches).
func schemaOf(name string, idxs ...*wordIndex) int {
	for _, idx := range idxs {
		if i, ok := idx.lookup(name); ok {
			return idx.schemas[i]
		}
	}
	return math.MaxInt
}

// schemaSize is the length of p as JSON; one that does not encode counts
// as over any bound.
func schemaSize(p map[string]any) int {
	b, err := json.Marshal(p)
	if err != nil {
		return math.MaxInt
	}
	return len(b)
}

// Search returns up to n tools whose name and description words match
// query, best first (ties by name), considering the registered tools and the
// SpecSource's.
func (r *Registry) Search(query string, n int) []llm.ToolSpec {
	return r.SearchFor("", query, n)
}

// SearchFor is Search for a session on profile (the SpecSource's tools
// depend on it; empty means the default).
func (r *Registry) SearchFor(profile, query string, n int) []llm.ToolSpec {
	words := map[string]bool{}
	tokenize(query, func(w string) { words[w] = true })
	reg, ext := r.indexes(profile)
	return rankMatches(words, n, nil, func(string) bool { return true }, reg, ext)
}

// indexes returns the word index over the registered tools (rebuilt when
// they changed) and the one over the SpecSource's tools (refreshed when its
// list changed).
func (r *Registry) indexes(profile string) (*wordIndex, *wordIndex) {
	r.mu.RLock()
	reg, src := r.index, r.source
	r.mu.RUnlock()
	if reg == nil {
		r.mu.Lock()
		if r.index == nil {
			specs := make([]llm.ToolSpec, 0, len(r.tools))
			for _, t := range r.tools {
				specs = append(specs, t.Spec())
			}
			r.index = newWordIndex(specs, nil)
		}
		reg = r.index
		r.mu.Unlock()
	}
	var extSpecs []llm.ToolSpec
	if src != nil {
		extSpecs = src(profile)
	}
	return reg, r.extra.refresh(extSpecs)
}

// rankMatches scores every tool of the indexes against words and returns up
// to n of the best with a positive score, skipping names in skip and names
// allow rejects. A registered tool hides an extra one of the same name.
func rankMatches(words map[string]bool, n int, skip map[string]bool, allow func(string) bool, idxs ...*wordIndex) []llm.ToolSpec {
	if n <= 0 || len(words) == 0 {
		return nil
	}
	// Candidates hold no pointers and compare by integers where they can:
	// tool positions in an index follow name order.
	type cand struct {
		score, idx, tool int32
	}
	var cands []cand
	for k, idx := range idxs {
		scores := make([]int32, len(idx.specs))
		var touched []int32
		for w := range words {
			for _, p := range idx.post[w] {
				if scores[p.tool] == 0 {
					touched = append(touched, p.tool)
				}
				scores[p.tool] += int32(p.weight)
			}
		}
	next:
		for _, t := range touched {
			name := idx.specs[t].Name
			if skip[name] || !allow(name) {
				continue
			}
			for _, earlier := range idxs[:k] {
				if _, ok := earlier.lookup(name); ok {
					continue next
				}
			}
			cands = append(cands, cand{scores[t], int32(k), t})
		}
	}
	// Only the best n are wanted: find the lowest score that still makes
	// the cut and sort just the candidates at or above it.
	if len(cands) > n {
		maxScore := int32(0)
		for _, c := range cands {
			maxScore = max(maxScore, c.score)
		}
		counts := make([]int, maxScore+1)
		for _, c := range cands {
			counts[c.score]++
		}
		cut, have := maxScore, 0
		for ; cut > 0; cut-- {
			if have += counts[cut]; have >= n {
				break
			}
		}
		kept := cands[:0]
		for _, c := range cands {
			if c.score >= cut {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.score != b.score:
			return int(b.score - a.score)
		case a.idx == b.idx:
			return int(a.tool - b.tool)
		}
		return strings.Compare(idxs[a.idx].specs[a.tool].Name, idxs[b.idx].specs[b.tool].Name)
	})
	if len(cands) > n {
		cands = cands[:n]
	}
	out := make([]llm.ToolSpec, len(cands))
	for i, c := range cands {
		out[i] = idxs[c.idx].specs[c.tool]
	}
	return out
}

// posting says that a word occurs in a tool: weight 3 in its name, 1 in its
// description only.
type posting struct {
	tool   int32
	weight uint8
}

// wordIndex is an inverted index from words to the tools whose name or
// description holds them.
type wordIndex struct {
	specs   []llm.ToolSpec
	byName  map[string]int32
	post    map[string][]posting
	words   []map[string]uint8 // per tool: its words and their weights
	sizes   []int              // per tool: bytes of name, description and schema (see measure)
	schemas []int              // per tool: bytes of its schema as JSON (see schemaSize)
}

// measure sizes every tool once, when the index is made: its schema as
// JSON, and its name, description and schema together (a schema that
// does not encode counts as a large one), which selection reads each step.
func (idx *wordIndex) measure() {
	idx.sizes = make([]int, len(idx.specs))
	idx.schemas = make([]int, len(idx.specs))
	for i, s := range idx.specs {
		idx.schemas[i] = schemaSize(s.Parameters)
		idx.sizes[i] = len(s.Name) + len(s.Description) + min(idx.schemas[i], MaxMatchedSchemas)
	}
}

// newWordIndex indexes specs. prev, when given, lends the word lists of
// tools whose name and description did not change.
func newWordIndex(specs []llm.ToolSpec, prev *wordIndex) *wordIndex {
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	idx := &wordIndex{
		specs:  specs,
		byName: make(map[string]int32, len(specs)),
		post:   map[string][]posting{},
		words:  make([]map[string]uint8, len(specs)),
	}
	idx.measure()
	for i, s := range specs {
		idx.byName[s.Name] = int32(i)
		var weights map[string]uint8
		if j, ok := prev.lookup(s.Name); ok && prev.specs[j].Description == s.Description {
			weights = prev.words[j]
		} else {
			weights = map[string]uint8{}
			tokenize(s.Description, func(w string) { weights[w] = 1 })
			tokenize(s.Name, func(w string) { weights[w] = 3 })
		}
		idx.words[i] = weights
		for w, wt := range weights {
			idx.post[w] = append(idx.post[w], posting{int32(i), wt})
		}
	}
	return idx
}

func (idx *wordIndex) lookup(name string) (int32, bool) {
	if idx == nil {
		return 0, false
	}
	i, ok := idx.byName[name]
	return i, ok
}

func (idx *wordIndex) spec(name string) (llm.ToolSpec, bool) {
	i, ok := idx.lookup(name)
	if !ok {
		return llm.ToolSpec{}, false
	}
	return idx.specs[i], true
}

// extraIndex caches the word index over a SpecSource's list and rebuilds it
// only when the list's names or descriptions change.
type extraIndex struct {
	mu    sync.Mutex
	specs []llm.ToolSpec
	idx   *wordIndex
}

func (e *extraIndex) refresh(specs []llm.ToolSpec) *wordIndex {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.idx != nil && sameSpecs(e.specs, specs) {
		if !sameParameters(e.specs, specs) {
			// The words stand; the specs offered are the new ones (a
			// schema granted anew under the same description).
			idx := *e.idx
			idx.specs = append([]llm.ToolSpec(nil), specs...)
			sort.Slice(idx.specs, func(i, j int) bool { return idx.specs[i].Name < idx.specs[j].Name })
			idx.measure()
			e.specs, e.idx = specs, &idx
		}
		return e.idx
	}
	e.specs = specs
	e.idx = newWordIndex(append([]llm.ToolSpec(nil), specs...), e.idx)
	return e.idx
}

func sameSpecs(a, b []llm.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description {
			return false
		}
	}
	return true
}

// sameParameters reports whether a and b (of the same names, in order)
// hold the very same Parameters maps: a SpecSource hands out the same
// maps until its tools change.
func sameParameters(a, b []llm.ToolSpec) bool {
	for i := range a {
		if reflect.ValueOf(a[i].Parameters).UnsafePointer() != reflect.ValueOf(b[i].Parameters).UnsafePointer() {
			return false
		}
	}
	return true
}

// calledTools returns the names of tools called in the recent conversation,
// oldest first, so a tool in use stays on offer.
func calledTools(conv []llm.Message) []string {
	var out []string
	start := max(len(conv)-2*selectRecent, 0)
	for _, m := range conv[start:] {
		for _, tc := range m.ToolCalls {
			out = append(out, tc.Name)
		}
	}
	return out
}

// conversationWords tokenises the last user message and the text of the few
// messages before it.
func conversationWords(conv []llm.Message) map[string]bool {
	words := map[string]bool{}
	add := func(w string) { words[w] = true }
	lastUser := -1
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role == "user" {
			lastUser = i
			break
		}
	}
	if lastUser >= 0 {
		tokenize(Clip(conv[lastUser].Content, selectUserBytes), add)
	}
	start := max(len(conv)-selectRecent, 0)
	for i := start; i < len(conv); i++ {
		if i == lastUser || conv[i].Role == "system" {
			continue
		}
		tokenize(Clip(conv[i].Content, selectRecentBytes), add)
	}
	return words
}

// Clip cuts s to at most n bytes, never inside a character: for text a
// tool quotes (a description, a matched line).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// stopWords are too common to say anything about a tool.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "that": true,
	"this": true, "are": true, "was": true, "you": true, "your": true, "can": true,
	"will": true, "not": true, "all": true, "any": true, "its": true, "into": true,
	"but": true, "has": true, "have": true, "use": true, "using": true, "used": true,
	"one": true, "given": true, "returns": true, "return": true, "tool": true,
	"please": true, "what": true, "which": true, "when": true, "how": true, "there": true,
	"then": true, "than": true, "also": true, "may": true, "via": true, "let": true,
}

// tokenize calls emit for each indexable word of s: runs of letters and
// digits, split again at lower-to-upper case changes, lowercased, at least
// three long, not a stop word, with a plural ending dropped.
func tokenize(s string, emit func(string)) {
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		w := b.String()
		b.Reset()
		if len(w) < 3 || stopWords[w] {
			return
		}
		emit(stem(w))
	}
	prevLower := false
	for _, c := range s {
		switch {
		case unicode.IsUpper(c):
			if prevLower {
				flush()
			}
			b.WriteRune(unicode.ToLower(c))
			prevLower = false
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			b.WriteRune(c)
			prevLower = unicode.IsLower(c)
		default:
			flush()
			prevLower = false
		}
	}
	flush()
}

// stem drops a plural ending: "issues" → "issue", "branches" → "branch".
func stem(w string) string {
	switch {
	case len(w) > 5 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses")),
		len(w) > 4 && strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}
