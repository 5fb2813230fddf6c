package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"tai/engine/tool"
	"tai/vault"
)

// File tool limits.
const (
	// ReadFileMax is the largest file read_file reads whole; larger files
	// are read by line range.
	ReadFileMax = 16 << 20
	// GlobMax bounds the paths one glob returns.
	GlobMax = 1000
	// ListDirMax bounds the entries one list_dir returns.
	ListDirMax = 2000
	// GrepDefaultMatches is grep's default match limit; GrepMaxMatches the
	// most a call may ask for.
	GrepDefaultMatches = 200
	GrepMaxMatches     = 5000
	// GrepMaxFiles bounds the files one grep reads; GrepMaxFileSize skips
	// larger files (named in the answer).
	GrepMaxFiles    = 20000
	GrepMaxFileSize = 8 << 20
	// grepLineMax clips each matched line shown.
	grepLineMax = 400
)

// Files is what the file tools (read_file, write_file, edit_file,
// list_dir, glob, grep) need: the directory relative paths resolve
// against, and the vault whose secrets are redacted from what they read.
type Files struct {
	// Dir is the working directory.
	Dir string
	// Store holds the secrets redacted from grep's matches.
	Store *vault.Store
}

// Tools returns the file tools.
func (ft Files) Tools() []tool.Tool {
	return []tool.Tool{
		{
			Name: "read_file",
			Description: "Read a text file. Optional start_line and end_line (1-based, inclusive) read a range of lines; " +
				"use them for large files.",
			Parameters: tool.Schema([]string{"path"}, map[string]any{
				"path":       tool.Prop("string", "file path, absolute or relative to the working directory"),
				"start_line": tool.Prop("integer", "first line to read (1-based)"),
				"end_line":   tool.Prop("integer", "last line to read (inclusive)"),
			}),
			Safe: true,
			Run:  ft.readFile,
		},
		{
			Name:        "write_file",
			Description: "Write text to a file, creating it and its parent directories, replacing its contents (or appending with append=true).",
			Parameters: tool.Schema([]string{"path", "content"}, map[string]any{
				"path":    tool.Prop("string", "file path"),
				"content": tool.Prop("string", "the text to write"),
				"append":  tool.Prop("boolean", "append instead of replacing"),
			}),
			Run: ft.writeFile,
		},
		{
			Name: "edit_file",
			Description: "Edit a text file by exact string replacement: old_string must occur exactly once (or set " +
				"replace_all) and is replaced by new_string.",
			Parameters: tool.Schema([]string{"path", "old_string", "new_string"}, map[string]any{
				"path":        tool.Prop("string", "file path"),
				"old_string":  tool.Prop("string", "the exact text to replace, with enough context to be unique"),
				"new_string":  tool.Prop("string", "the replacement text"),
				"replace_all": tool.Prop("boolean", "replace every occurrence"),
			}),
			Run:   ft.editFile,
			Check: ft.checkEdit,
		},
		{
			Name:        "list_dir",
			Description: "List a directory: one entry per line, directories with a trailing slash, files with their size.",
			Parameters: tool.Schema(nil, map[string]any{
				"path": tool.Prop("string", "directory (default: the working directory)"),
			}),
			Safe: true,
			Run:  ft.listDir,
		},
		{
			Name: "glob",
			Description: "Find files whose path matches a glob pattern such as **/*.go or src/*/test_*.py; ** matches any " +
				"number of directories. Paths are relative to path (default: the working directory).",
			Parameters: tool.Schema([]string{"pattern"}, map[string]any{
				"pattern": tool.Prop("string", "glob pattern; * ? [..] within a name, ** across directories"),
				"path":    tool.Prop("string", "directory to search from"),
			}),
			Safe: true,
			Run:  ft.globTool,
		},
		{
			Name: "grep",
			Description: "Search file contents with a regular expression (RE2 syntax) under a file or directory; answers " +
				"file:line: text for each matching line, up to max_matches (default 200).",
			Parameters: tool.Schema([]string{"pattern"}, map[string]any{
				"pattern":     tool.Prop("string", "regular expression"),
				"path":        tool.Prop("string", "file or directory to search (default: the working directory)"),
				"glob":        tool.Prop("string", "only search files whose relative path matches this glob, e.g. **/*.go"),
				"ignore_case": tool.Prop("boolean", "match case-insensitively"),
				"max_matches": tool.Prop("integer", "stop after this many matching lines"),
			}),
			Safe: true,
			Run:  ft.grepTool,
		},
	}
}

func (ft Files) readFile(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	p := a.Str("path", true)
	start := a.Int("start_line", 0)
	end := a.Int("end_line", 0)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if start < 0 || end < 0 || (end > 0 && start > end) {
		return tool.ErrorResult("line range %d-%d is not valid: start_line and end_line are 1-based and start_line <= end_line", start, end), nil
	}
	full := resolvePath(ft.Dir, p)
	f, st, err := openRegular(full, p)
	if st != nil && st.IsDir() {
		return tool.ErrorResult("read_file: %s is a directory: use list_dir", p), nil
	}
	if err != nil {
		return tool.ErrorResult("read_file: %v", err), nil
	}
	defer f.Close()
	head := make([]byte, 8192)
	n, _ := io.ReadFull(f, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return tool.ErrorResult("read_file: %s looks binary (it holds NUL bytes): it cannot be shown as text", p), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.ErrorResult("read_file: %v", err), nil
	}
	if start == 0 && end == 0 {
		if st.Size() > ReadFileMax {
			return tool.ErrorResult("read_file: %s is %d bytes, over %d: read it in parts with start_line and end_line", p, st.Size(), ReadFileMax), nil
		}
		data, err := io.ReadAll(f)
		if err != nil {
			return tool.ErrorResult("read_file: %v", err), nil
		}
		return tool.TextResult(string(data)), nil
	}
	if start == 0 {
		start = 1
	}
	var b strings.Builder
	r := bufio.NewReader(f)
	line := 0
	for {
		s, err := r.ReadString('\n')
		if s != "" {
			line++
			if line >= start && (end == 0 || line <= end) {
				if b.Len()+len(s) > ReadFileMax {
					return tool.ErrorResult("read_file: lines %d-%d of %s exceed %d bytes: ask for a smaller range", start, end, p, ReadFileMax), nil
				}
				b.WriteString(s)
			}
		}
		if err != nil {
			break
		}
	}
	if start > line {
		return tool.ErrorResult("read_file: %s has %d lines; start_line %d is past the end", p, line, start), nil
	}
	last := end
	if last == 0 || last > line {
		last = line
	}
	return tool.TextResult(fmt.Sprintf("[%s, lines %d-%d of %d]\n%s", p, start, last, line, b.String())), nil
}

// openRegular opens full for reading and refuses anything but a regular
// file (named shown in errors): a FIFO would block the call until a writer
// came, a device such as /dev/zero never ends. The open does not block
// (O_NONBLOCK), and the check is made on the opened file, so a FIFO swapped
// in after a check cannot slip through. A directory comes back with its
// info and an error.
func openRegular(full, shown string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, notRegular(shown, st)
	}
	return f, st, nil
}

// notRegular says what a non-regular file is and that it cannot be used.
func notRegular(shown string, st fs.FileInfo) error {
	kind := "a special file"
	switch m := st.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s, not a regular file: only regular files can be read or written with the file tools", shown, kind)
}

func (ft Files) writeFile(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	p := a.Str("path", true)
	content := a.Str("content", false)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if _, ok := args["content"]; !ok {
		return tool.ErrorResult("argument \"content\" is missing: give the text to write (an empty string empties the file)"), nil
	}
	appendMode := a.Bool("append")
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	full := resolvePath(ft.Dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return tool.ErrorResult("write_file: %v", err), nil
	}
	if st, err := os.Stat(full); err == nil && !st.Mode().IsRegular() {
		return tool.ErrorResult("write_file: %v", notRegular(p, st)), nil
	}
	// O_NONBLOCK: a FIFO put in the file's place meanwhile fails to open
	// instead of waiting for a reader. Truncation waits for the check.
	flags := os.O_WRONLY | os.O_CREATE | syscall.O_NONBLOCK
	if appendMode {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(full, flags, 0o644)
	if err != nil {
		return tool.ErrorResult("write_file: %v", err), nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular(p, st)
		}
		return tool.ErrorResult("write_file: %v", err), nil
	}
	if !appendMode {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return tool.ErrorResult("write_file: %v", err), nil
		}
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return tool.ErrorResult("write_file: %v", err), nil
	}
	if err := f.Close(); err != nil {
		return tool.ErrorResult("write_file: %v", err), nil
	}
	verb := "wrote"
	if appendMode {
		verb = "appended"
	}
	return tool.TextResult(fmt.Sprintf("%s %d bytes to %s", verb, len(content), p)), nil
}

// editPlan is an edit_file call worked out against the file as it is now.
type editPlan struct {
	path, full string
	mode       os.FileMode
	text       string // the file's new text
	n          int    // occurrences replaced
}

// planEdit reads the file of an edit_file call and works the edit out,
// or says why it cannot be made (the error is what the model is told).
func (ft Files) planEdit(args map[string]any) (editPlan, error) {
	a := tool.ReadArgs(args)
	p := a.Str("path", true)
	oldS := a.Str("old_string", true)
	newS := a.Str("new_string", false)
	all := a.Bool("replace_all")
	if err := a.Err(); err != nil {
		return editPlan{}, err
	}
	if oldS == newS {
		return editPlan{}, errors.New("edit_file: old_string and new_string are the same: nothing to change")
	}
	full := resolvePath(ft.Dir, p)
	f, st, err := openRegular(full, p)
	if err != nil {
		return editPlan{}, fmt.Errorf("edit_file: %v", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return editPlan{}, fmt.Errorf("edit_file: %v", err)
	}
	text := string(data)
	n := strings.Count(text, oldS)
	switch {
	case n == 0:
		return editPlan{}, fmt.Errorf("edit_file: old_string was not found in %s: read the file and copy the text exactly, whitespace included", p)
	case n > 1 && !all:
		return editPlan{}, fmt.Errorf("edit_file: old_string occurs %d times in %s (at lines %s): add surrounding context to make it unique, or set replace_all",
			n, p, matchLines(text, oldS))
	}
	if all {
		text = strings.ReplaceAll(text, oldS, newS)
	} else {
		text = strings.Replace(text, oldS, newS, 1)
	}
	return editPlan{path: p, full: full, mode: st.Mode().Perm(), text: text, n: n}, nil
}

// checkEdit is edit_file's Check: an edit that cannot be made goes back to
// the model before anybody is asked to approve it. The run checks again,
// as the file may change in between.
func (ft Files) checkEdit(args map[string]any) error {
	_, err := ft.planEdit(args)
	return err
}

func (ft Files) editFile(_ context.Context, args map[string]any) (tool.Result, error) {
	plan, err := ft.planEdit(args)
	if err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if err := os.WriteFile(plan.full, []byte(plan.text), plan.mode); err != nil {
		return tool.ErrorResult("edit_file: %v", err), nil
	}
	return tool.TextResult(fmt.Sprintf("replaced %d occurrence(s) in %s", plan.n, plan.path)), nil
}

// matchLines lists the 1-based lines where sub starts in text.
func matchLines(text, sub string) string {
	var lines []string
	off := 0
	for {
		i := strings.Index(text[off:], sub)
		if i < 0 || len(lines) >= 20 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(text[:off+i], "\n")+1))
		off += i + 1
	}
	return strings.Join(lines, ", ")
}

func (ft Files) listDir(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	p := a.Str("path", false)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	full := resolvePath(ft.Dir, p)
	entries, err := os.ReadDir(full)
	if err != nil {
		return tool.ErrorResult("list_dir: %v", err), nil
	}
	var b strings.Builder
	for i, de := range entries {
		if i == ListDirMax {
			fmt.Fprintf(&b, "[%d more entries not listed: use glob to narrow down]\n", len(entries)-ListDirMax)
			break
		}
		switch {
		case de.IsDir():
			fmt.Fprintf(&b, "%s/\n", de.Name())
		case de.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(filepath.Join(full, de.Name()))
			fmt.Fprintf(&b, "%s -> %s\n", de.Name(), target)
		default:
			size := int64(0)
			if info, err := de.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(&b, "%s\t%d\n", de.Name(), size)
		}
	}
	if len(entries) == 0 {
		b.WriteString("(empty directory)\n")
	}
	return tool.TextResult(b.String()), nil
}

func (ft Files) globTool(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	pattern := a.Str("pattern", true)
	p := a.Str("path", false)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	root := resolvePath(ft.Dir, p)
	if filepath.IsAbs(pattern) {
		root, pattern = splitGlobRoot(pattern)
	}
	pattern = path.Clean(filepath.ToSlash(pattern))
	if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
		return tool.ErrorResult("glob: pattern %q is malformed: %v", pattern, err), nil
	}
	matches, more, err := globWalk(ctx, root, pattern, GlobMax)
	if err != nil {
		return tool.ErrorResult("glob: %v", err), nil
	}
	if len(matches) == 0 {
		return tool.TextResult(fmt.Sprintf("no paths under %s match %s", root, pattern)), nil
	}
	text := strings.Join(matches, "\n") + "\n"
	if more {
		text += fmt.Sprintf("[stopped at %d paths: narrow the pattern to see the rest]\n", GlobMax)
	}
	return tool.TextResult(text), nil
}

// splitGlobRoot splits an absolute pattern into the directory before its
// first wildcard and the rest.
func splitGlobRoot(pattern string) (string, string) {
	parts := strings.Split(filepath.ToSlash(pattern), "/")
	i := 0
	for i < len(parts)-1 && !strings.ContainsAny(parts[i], "*?[") {
		i++
	}
	root := "/" + strings.Join(parts[:i], "/")
	return filepath.Clean(root), strings.Join(parts[i:], "/")
}

// globWalk walks root and returns the slash-separated relative paths that
// match pattern, sorted, up to limit (more reports that there were more).
// .git directories are not entered unless the pattern names them.
func globWalk(ctx context.Context, root, pattern string, limit int) (out []string, more bool, err error) {
	segs := strings.Split(pattern, "/")
	enterGit := strings.Contains(pattern, ".git")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			if p == root {
				return werr
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && d.Name() == ".git" && !enterGit {
			return filepath.SkipDir
		}
		if matchSegments(segs, strings.Split(rel, "/")) {
			if len(out) == limit {
				more = true
				return filepath.SkipAll
			}
			if d.IsDir() {
				out = append(out, rel+"/")
			} else {
				out = append(out, rel)
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, more, err
}

// matchSegments matches path segments against pattern segments, where a
// "**" segment matches any number (zero included) of path segments.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func (ft Files) grepTool(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	pattern := a.Str("pattern", true)
	p := a.Str("path", false)
	globPat := a.Str("glob", false)
	icase := a.Bool("ignore_case")
	limit := a.Int("max_matches", GrepDefaultMatches)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if limit <= 0 || limit > GrepMaxMatches {
		return tool.ErrorResult("max_matches %d is out of range: give 1 to %d", limit, GrepMaxMatches), nil
	}
	if icase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return tool.ErrorResult("grep: pattern is not a valid RE2 regular expression: %v", err), nil
	}
	root := resolvePath(ft.Dir, p)
	st, err := os.Stat(root)
	if err != nil {
		return tool.ErrorResult("grep: %v", err), nil
	}
	var files []string
	if st.IsDir() {
		pat := "**"
		if globPat != "" {
			pat = path.Clean(filepath.ToSlash(globPat))
		}
		rel, more, err := globWalk(ctx, root, pat, GrepMaxFiles)
		if err != nil {
			return tool.ErrorResult("grep: %v", err), nil
		}
		if more {
			return tool.ErrorResult("grep: more than %d files under %s: narrow the search with path or glob", GrepMaxFiles, root), nil
		}
		for _, r := range rel {
			if !strings.HasSuffix(r, "/") {
				files = append(files, r)
			}
		}
	} else {
		if !st.Mode().IsRegular() {
			return tool.ErrorResult("grep: %v", notRegular(p, st)), nil
		}
		root, files = filepath.Dir(root), []string{filepath.Base(root)}
	}

	// Lines are matched and clipped as the model would see them, redacted:
	// a pattern cannot probe a secret's characters one by one, and a clip
	// cannot cut a secret in two before redaction sees it.
	red, err := ft.Store.Redactor()
	if err != nil {
		return tool.ErrorResult("grep: %v", err), nil
	}
	var b strings.Builder
	matches := 0
	var skipped []string
	truncated := false
scan:
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		full := filepath.Join(root, filepath.FromSlash(rel))
		f, info, err := openRegular(full, rel)
		if err != nil {
			continue
		}
		if info.Size() > GrepMaxFileSize {
			f.Close()
			skipped = append(skipped, rel)
			continue
		}
		data, err := io.ReadAll(io.LimitReader(f, GrepMaxFileSize))
		f.Close()
		if err != nil || bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			continue
		}
		line := 0
		for len(data) > 0 {
			line++
			i := bytes.IndexByte(data, '\n')
			var l []byte
			if i < 0 {
				l, data = data, nil
			} else {
				l, data = data[:i], data[i+1:]
			}
			shown := red.Redact(string(l))
			if !re.MatchString(shown) {
				continue
			}
			if matches == limit {
				truncated = true
				break scan
			}
			matches++
			if len(shown) > grepLineMax {
				shown = tool.Clip(shown, grepLineMax) + " […]"
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", rel, line, shown)
		}
	}
	if matches == 0 {
		b.WriteString("no matches\n")
	}
	if truncated {
		fmt.Fprintf(&b, "[stopped at %d matching lines: raise max_matches or narrow the search]\n", limit)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "[not searched, over %d bytes: %s]\n", GrepMaxFileSize, strings.Join(skipped, ", "))
	}
	return tool.TextResult(b.String()), nil
}
