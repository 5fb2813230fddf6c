package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tai/mcp"
	"tai/mcp/pathrule"
)

// DenyListed is the Why of a folder on the deny list.
const DenyListed = "a folder on tai.sandbox.deny"

// Denied is a folder no sandbox grant may reach: neither the folder, nor
// anything inside it, nor a folder holding it.
type Denied struct {
	// Path is the folder, absolute or under ~.
	Path string
	// Why says what the folder is, in a message after its path ("the
	// vault's folder", "a folder on tai.sandbox.deny").
	Why string
}

// sandbox reads the entry's sandbox field: false, true (the default, with
// a note), "required", or a table of read and write lists, network and
// required. A wrong kind refuses the entry; an unknown key is noted.
// Granted folders are checked and stored cleaned (see grants).
func (c *checker) sandbox(raw map[string]any, g *grantRules) *mcp.Sandbox {
	v, ok := raw["sandbox"]
	if !ok || v == nil {
		return nil
	}
	s := &mcp.Sandbox{}
	switch x := v.(type) {
	case bool:
		if x {
			c.note(LevelInfo, "sandbox = true is the default: the server runs sandboxed where the system can")
			return nil
		}
		s.Off = true
		return s
	case string:
		if strings.TrimSpace(strings.ToLower(x)) != mcp.SandboxRequired {
			c.refuse(fmt.Sprintf("sandbox is the text %s: %s", mcp.Clip(x), mcp.SandboxForms))
			return nil
		}
		s.Required = true
		return s
	}
	m, isObject := values(v)
	if !isObject {
		if l, isList := v.([]any); isList && len(l) == 0 {
			return nil
		}
		c.refuse(fmt.Sprintf("sandbox is a %s: %s", kindOf(v), mcp.SandboxForms))
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val := m[k]
		switch k {
		case "read", "write":
			paths := c.listOf(val, "sandbox."+k)
			if k == "read" {
				s.Read = paths
			} else {
				s.Write = paths
			}
		case "network", "required":
			b, isBool := val.(bool)
			if !isBool {
				c.refuse(fmt.Sprintf("sandbox.%s is a %s; it must be true or false", k, kindOf(val)))
				continue
			}
			if k == "network" {
				s.NoNetwork = !b
			} else {
				s.Required = b
			}
		default:
			c.note(LevelWarn, "sandbox field %s is not one tai knows (it knows %s); it is ignored", mcp.Clip(k), strings.Join(mcp.SandboxKeys, ", "))
		}
	}
	if n := len(s.Read) + len(s.Write); n > mcp.MaxSandboxGrants {
		c.refuse(fmt.Sprintf("sandbox grants %d folders, more than the %d a consent screen shows; grant the folders that hold them instead", n, mcp.MaxSandboxGrants))
		return nil
	}
	if c.refusal == "" {
		if err := g.clean(s); err != nil {
			c.refuse(err.Error())
			return nil
		}
	}
	if s.Empty() {
		return nil
	}
	return s
}

// grantRules are what a sandbox grant is checked against: the home folder
// ~ stands for and the folders never granted.
type grantRules struct {
	home   string
	denied []Denied
}

// newGrantRules reads the rules from the options: the user's home
// folder when they name none.
func newGrantRules(o *Options) *grantRules {
	g := &grantRules{home: o.Home, denied: o.Denied}
	if g.home == "" {
		g.home, _ = os.UserHomeDir()
	}
	return g
}

// clean checks every folder s grants (mcp.ValidGrant, then CheckGrant)
// and stores it cleaned: .. and . resolved, a folder under the home
// folder written from ~/ when it was written so.
func (g *grantRules) clean(s *mcp.Sandbox) error {
	for _, list := range []struct {
		mode  string
		paths []string
	}{{"read", s.Read}, {"write", s.Write}} {
		for i, p := range list.paths {
			if err := mcp.ValidGrant(p); err != nil {
				return fmt.Errorf("sandbox.%s[%d] %w", list.mode, i+1, err)
			}
			abs, err := g.abs(p)
			if err != nil {
				return fmt.Errorf("sandbox.%s[%d] %w", list.mode, i+1, err)
			}
			if err := g.check(p, abs); err != nil {
				return fmt.Errorf("sandbox.%s[%d] %s %w", list.mode, i+1, mcp.QuotePath(p), err)
			}
			list.paths[i] = abs
			if strings.HasPrefix(p, "~") {
				list.paths[i] = g.tilde(abs)
			}
		}
	}
	return nil
}

// abs is p with ~ expanded and cleaned.
func (g *grantRules) abs(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if g.home == "" {
			return "", fmt.Errorf("%s starts with ~, but the home folder is not known ($HOME is not set): write the absolute path", mcp.QuotePath(p))
		}
		p = g.home + p[1:]
	}
	return filepath.Clean(p), nil
}

// tilde writes abs from ~/ when it is in the home folder.
func (g *grantRules) tilde(abs string) string {
	switch {
	case g.home == "" || g.home == "/":
		return abs
	case abs == g.home:
		return "~"
	case strings.HasPrefix(abs, g.home+"/"):
		return "~" + abs[len(g.home):]
	}
	return abs
}

// check refuses the grant p (abs, cleaned) when it reaches a denied
// folder: is it, is inside it or holds it, as written or through a
// symbolic link on either side.
func (g *grantRules) check(p, abs string) error {
	res := pathrule.Resolve(abs)
	for _, d := range g.denied {
		dabs, err := g.abs(d.Path)
		if err != nil {
			continue // no home folder: ~ names nothing
		}
		dreal := pathrule.Resolve(dabs)
		for _, pair := range [][2]string{{abs, dabs}, {res, dabs}, {abs, dreal}, {res, dreal}} {
			a, b := pair[0], pair[1]
			var how string
			switch {
			case a == b && p == d.Path:
				how = "is " + d.Why
			case a == b:
				how = "is " + mcp.QuotePath(d.Path) + ", " + d.Why
			case pathrule.Within(a, b):
				how = "is inside " + mcp.QuotePath(d.Path) + ", " + d.Why
			case pathrule.Within(b, a):
				how = "holds " + mcp.QuotePath(d.Path) + ", " + d.Why
			default:
				continue
			}
			via := ""
			if a != abs {
				via = fmt.Sprintf(" (through a symbolic link: it is %s)", mcp.QuotePath(res))
			}
			return fmt.Errorf("%s, which tai never grants a server%s: grant a folder that neither holds it nor is inside it", how, via)
		}
	}
	return nil
}
