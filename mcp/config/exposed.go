package config

import (
	"slices"
	"strings"

	"tai/mcp"
)

// Exposed returns the names of the ${…} references whose values e puts
// where others can read them: in its command or args (argv: the process
// list, which every user of the machine reads) and in its URL's query
// (query: the logs of web servers and proxies). A name the entry's own env
// defines counts with the references of that value, and a default's
// references count too, as Expand resolves them. Each list is sorted,
// each name once.
func Exposed(e mcp.Entry) (argv, query []string) {
	collect := func(values ...string) []string {
		var out []string
		add := func(name string) { out = append(out, name) }
		for _, v := range values {
			commandLineRefs(v, e.Env, add, 0)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	argv = collect(append([]string{e.Command}, e.Args...)...)
	if _, rest, ok := strings.Cut(e.URL, "?"); ok {
		q, _, _ := strings.Cut(rest, "#")
		query = collect(q)
	}
	return argv, query
}

// commandLineRefs tells add the name of each reference in s, then of the
// references in the entry's env value it stands for (env is nil once in an
// env value: those resolve from outside) and in its default.
func commandLineRefs(s string, env map[string]string, add func(string), depth int) {
	if depth > maxExpandDepth {
		return
	}
	for _, r := range Refs(s) {
		add(r.Name)
		if v, ok := env[r.Name]; ok && !strings.Contains(v, "${"+r.Name) {
			commandLineRefs(v, nil, add, depth+1)
		}
		if r.HasDefault {
			commandLineRefs(r.Default, env, add, depth+1)
		}
	}
}
