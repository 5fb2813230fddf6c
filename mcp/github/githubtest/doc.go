// Package githubtest is an in-process fake of the GitHub contents API for
// tests: it serves repositories from folders on disk, one folder per
// repository named <owner>__<repo>, as api.github.com answers
// /repos/{owner}/{repo}, /repos/{owner}/{repo}/contents/{path} and
// /repos/{owner}/{repo}/readme[/{dir}].
//
// It imports nothing of tai, and is imported only by tests.
package githubtest
