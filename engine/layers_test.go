package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers are tai's packages from the top down. A package may import the
// packages of the layers below its own; within a layer, only the packages
// of its own group (a group ending in "/..." is that package and every one
// under it). A tai package in no layer is a leaf (engine/sandbox, the test
// fakes, stdlib): it imports no tai package but other leaves, and any
// package may import it.
var layers = [][]string{
	{"tai/cmd/..."},
	{"tai/lua"},
	{"tai/engine"},
	{"tai/engine/bridge/...", "tai/engine/builtin/..."},
	{"tai/engine/tool/..."},
	{"tai/engine/llm/..."},
	{"tai/mcp/...", "tai/vault/..."},
}

// leaves are the packages inside a layer's folder that are leaves all the
// same: each holds one rule every side applies (what a credential looks
// like and how a hidden value is marked; whether a path lies in a folder;
// how text is shown on a screen), so every package may import it.
var leaves = []string{"tai/vault/secret", "tai/mcp/pathrule", "tai/mcp/screen"}

// placeOf returns the layer and group of pkg, or -1 for a leaf.
func placeOf(pkg string) (layer int, group string) {
	if slices.Contains(leaves, pkg) {
		return -1, ""
	}
	for i, groups := range layers {
		for _, g := range groups {
			root, sub := strings.CutSuffix(g, "/...")
			if pkg == root || sub && strings.HasPrefix(pkg, root+"/") {
				return i, g
			}
		}
	}
	return -1, ""
}

// layerProblems lists the imports of graph (package → the tai packages it
// imports) that point up, across, or out of a leaf.
func layerProblems(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		layer, group := placeOf(pkg)
		for _, imp := range imports {
			il, ig := placeOf(imp)
			switch {
			case il < 0:
				// A leaf: anyone may import it.
			case layer < 0:
				out = append(out, pkg+" is a leaf package and imports "+imp+", which is not one")
			case il < layer:
				out = append(out, pkg+" imports "+imp+", a package above it")
			case il == layer && ig != group:
				out = append(out, pkg+" imports "+imp+", beside it in the same layer")
			}
		}
	}
	slices.Sort(out)
	return out
}

// importGraph runs go list over the module: each package and the tai
// packages its non-test files import.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "tai/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		var tai []string
		for _, imp := range p.Imports {
			if imp == "tai" || strings.HasPrefix(imp, "tai/") {
				tai = append(tai, imp)
			}
		}
		graph[p.ImportPath] = tai
	}
	return graph
}

// TestImportsPointDown: cmd → lua → engine → engine/{bridge,builtin} →
// engine/tool → engine/llm → {mcp…, vault}, with leaf packages below;
// nothing under mcp imports engine, lua or vault; engine/tool imports
// neither engine nor engine/bridge; engine/bridge does not import engine.
func TestImportsPointDown(t *testing.T) {
	graph := importGraph(t)
	for _, pkg := range []string{"tai/cmd/tai", "tai/lua", "tai/engine", "tai/engine/bridge", "tai/engine/tool", "tai/engine/llm", "tai/mcp", "tai/vault"} {
		if _, ok := graph[pkg]; !ok {
			t.Fatalf("go list did not list %s: %v", pkg, graph)
		}
	}
	for _, p := range layerProblems(graph) {
		t.Error(p)
	}
}

// The checker itself catches each way an import can point wrong.
func TestLayerProblemsCatchesWrongImports(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		want     string
	}{
		{"tai/engine/tool", "tai/engine", "a package above it"},
		{"tai/engine/tool", "tai/engine/bridge", "a package above it"},
		{"tai/engine/bridge", "tai/engine", "a package above it"},
		{"tai/engine/bridge", "tai/lua", "a package above it"},
		{"tai/mcp/server", "tai/engine", "a package above it"},
		{"tai/mcp/oauth", "tai/vault", "beside it in the same layer"},
		{"tai/engine/bridge", "tai/engine/builtin", "beside it in the same layer"},
		{"tai/engine/llm", "tai/engine/tool", "a package above it"},
		{"tai/engine/sandbox", "tai/vault", "is a leaf package"},
	} {
		got := layerProblems(map[string][]string{tt.from: {tt.to}})
		if len(got) != 1 || !strings.Contains(got[0], tt.want) {
			t.Errorf("%s → %s: %q, want one problem saying %q", tt.from, tt.to, got, tt.want)
		}
	}
	fine := map[string][]string{
		"tai/cmd/tai":       {"tai/lua", "tai/engine", "tai/engine/sandbox", "tai/vault"},
		"tai/engine":        {"tai/engine/tool", "tai/engine/llm", "tai/engine/sandbox", "tai/mcp/server"},
		"tai/engine/bridge": {"tai/engine/tool", "tai/mcp/oauth", "tai/vault"},
		"tai/engine/tool":   {"tai/engine/llm", "tai/mcp", "tai/mcp/config", "tai/vault"},
		"tai/mcp/github":    {"tai/mcp", "tai/mcp/config"},
	}
	if got := layerProblems(fine); len(got) != 0 {
		t.Errorf("imports that point down were refused: %q", got)
	}
}
