package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// launcherCaches are the variables that name the package caches the
// launchers need, each with the name of the folder of a server's own
// cache it names.
type launcherCaches struct {
	launchers []string
	vars      [][2]string
}

// cacheVars lists the package caches of the launchers tai knows.
func cacheVars() []launcherCaches {
	return []launcherCaches{
		{[]string{"npx", "npm", "node", "npx-cli", "npm-cli", "pnpm", "pnpx", "yarn"}, [][2]string{{"npm_config_cache", "npm"}}},
		{[]string{"uv", "uvx"}, [][2]string{{"UV_CACHE_DIR", "uv"}, {"UV_TOOL_DIR", "uv-tools"}, {"UV_PYTHON_INSTALL_DIR", "uv-python"}}},
		{[]string{"pip", "pip3", "pipx", "python", "python3"}, [][2]string{{"PIP_CACHE_DIR", "pip"}}},
	}
}

// ownCaches returns the package caches the launchers named need, as
// grants, and the variables that point the server at them. Each is the
// server's own, in its state folder's cache folder (state/cache/npm,
// …/uv, …/uv-tools, …/uv-python, …/pip), never the person's shared one,
// which a server could fill with code another server then runs. A cache
// the entry moves itself (its env gives the variable a value tai's
// environment does not) keeps the entry's choice and is granted as itself;
// one of keep is left as the person has it.
func ownCaches(launchers, env, base []string, state string, keep []string) ([]Path, []string) {
	var grants []Path
	var vars []string
	for _, c := range cacheVars() {
		if !slices.ContainsFunc(launchers, func(l string) bool { return slices.Contains(c.launchers, strings.TrimSuffix(l, ".js")) }) {
			continue
		}
		for _, v := range c.vars {
			if slices.Contains(keep, v[0]) {
				continue
			}
			if moved := cacheVar(env, v[0]); moved != "" && moved != cacheVar(base, v[0]) {
				if filepath.IsAbs(moved) {
					grants = append(grants, Path{Path: filepath.Clean(moved)})
				}
				continue
			}
			own := filepath.Join(cacheDir(state), v[1])
			grants = append(grants, Path{Path: own, Kind: KindOwnCache, Make: true})
			vars = append(vars, v[0]+"="+own)
			if v[0] == "npm_config_cache" && lookEnv(env, "NPM_CONFIG_CACHE") != "" {
				// npm reads its variables whatever their case.
				vars = append(vars, "NPM_CONFIG_CACHE="+own)
			}
		}
	}
	return grants, vars
}

// cacheVar is the value of the cache variable k in env (npm's in either
// case).
func cacheVar(env []string, k string) string {
	if k == "npm_config_cache" {
		if v := lookEnv(env, k); v != "" {
			return v
		}
		return lookEnv(env, "NPM_CONFIG_CACHE")
	}
	return lookEnv(env, k)
}

// StateDir is the state folder of the server name for a tai running with
// the environment env: $XDG_STATE_HOME/tai/servers/<name>. Its cache
// folder holds the server's own package caches.
func StateDir(name string, env []string) string {
	home := HomeOf(env)
	return filepath.Join(stateHome(env, home), "tai", "servers", fileName(name))
}

// cacheDir is the folder of a server's own package caches in its state
// folder.
func cacheDir(state string) string { return filepath.Join(state, "cache") }

// RemoveCaches removes the package caches of the server name, for a tai
// running with the environment env, once it is removed: a server added
// later under the same name must not run what this one left there. Its
// state folder stays, as the person's data.
func RemoveCaches(name string, env []string) error {
	dir := cacheDir(StateDir(name, env))
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	// Some installs leave folders without write permission (Go's module
	// cache does): give them back and try again.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("%w; remove %s by hand", err, dir)
	}
	return nil
}
