package sandbox

import "strings"

// RuntimeEnv is the list, as shipped, of the environment variables that
// change what a runtime or launcher runs: code to load first
// (NODE_OPTIONS, PYTHONSTARTUP, BASH_ENV, LD_PRELOAD, PERL5OPT), where
// code and packages are found (PYTHONPATH, npm_config_registry,
// UV_INDEX_URL, PATH) or how git runs (GIT_SSH_COMMAND). A name ending in
// * stands for every name it begins. A server's entry that sets one is
// warned about on the consent screen, and a model cannot add such an
// entry with nobody asked. tai.sandbox.runtime_env replaces the list.
func RuntimeEnv() []string {
	return []string{
		"NODE_OPTIONS", "NODE_PATH", "npm_config_*", "YARN_*", "ELECTRON_RUN_AS_NODE",
		"PYTHON*", "PIP_*", "UV_*", "VIRTUAL_ENV", "CONDA_*",
		"LD_*", "DYLD_*", "BASH_ENV", "ENV", "ZDOTDIR", "PROMPT_COMMAND", "SHELLOPTS", "PS4", "PATH",
		"GIT_*", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH",
		"RUBYOPT", "RUBYLIB", "GEM_*", "BUNDLE_*", "PERL5OPT", "PERL5LIB", "PERLLIB",
		"GOFLAGS", "GOPROXY", "RUSTC_WRAPPER", "RUSTFLAGS", "CARGO_*", "DENO_*", "BUN_*",
	}
}

// ChangesRuntime reports whether the variable name is one of list (see
// RuntimeEnv), compared without regard to case, as npm reads its own.
func ChangesRuntime(name string, list []string) bool {
	up := strings.ToUpper(name)
	for _, l := range list {
		l = strings.ToUpper(l)
		if prefix, ok := strings.CutSuffix(l, "*"); ok && strings.HasPrefix(up, prefix) || up == l {
			return true
		}
	}
	return false
}
