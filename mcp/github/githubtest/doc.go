// Package githubtest is an in-process fake of the GitHub contents API for
// tests: it serves repositories from folders on disk, one folder per
// repository named <owner>__<repo>, as api.github.com answers
// /repos/{owner}/{repo}, /repos/{owner}/{repo}/contents/{path} and
// /repos/{owner}/{repo}/readme[/{dir}]. Fixtures finds the shared sets of
// real repositories beside the module, and skips the test (or, with
// TAI_REQUIRE_FIXTURES=1, fails it) when they are missing.
//
// It imports nothing of tai, and is imported only by tests.
package githubtest
