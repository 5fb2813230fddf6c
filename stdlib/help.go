package stdlib

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The manual: one plain-text file per topic, help/NAME.txt, read as
// Neovim's :help is read, in a terminal of 80 columns. Its first line is
// the topic's summary, the rest its text.
//
//go:embed help/*.txt
var help embed.FS

// Help returns the embedded help topics, as "help/NAME.txt".
func Help() fs.FS { return help }

// Topic is one help topic.
type Topic struct {
	Name    string // the file's name without .txt: what /help NAME takes
	Summary string // the file's first line
	Text    string // the whole file
	Path    string // where it came from: "help/NAME.txt", or the user's file
}

// Lines returns the topic's text as lines, without their line breaks.
func (t Topic) Lines() []string {
	return strings.Split(strings.TrimRight(t.Text, "\n"), "\n")
}

// Topics returns the help topics, sorted by name: the embedded ones, each
// replaced by the user's NAME.txt in dir when there is one, plus the
// user's own topics there. dir "" (as under --clean) or a folder that does
// not exist means the embedded topics alone.
func Topics(dir string) ([]Topic, error) {
	byName := map[string]Topic{}
	add := func(fsys fs.FS, glob, shown string) error {
		names, err := fs.Glob(fsys, glob)
		if err != nil {
			return err
		}
		for _, p := range names {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return fmt.Errorf("help: read %s: %w", filepath.Join(shown, filepath.Base(p)), err)
			}
			name := strings.TrimSuffix(filepath.Base(p), ".txt")
			text := strings.ReplaceAll(string(b), "\r\n", "\n")
			summary, _, _ := strings.Cut(text, "\n")
			byName[name] = Topic{Name: name, Summary: strings.TrimSpace(summary), Text: text, Path: filepath.Join(shown, filepath.Base(p))}
		}
		return nil
	}
	if err := add(help, "help/*.txt", "help"); err != nil {
		return nil, err
	}
	if dir != "" {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			if err := add(os.DirFS(dir), "*.txt", dir); err != nil {
				return nil, err
			}
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("help: %w", err)
		}
	}
	out := make([]Topic, 0, len(byName))
	for _, t := range byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Match is one line of a topic that holds a searched word.
type Match struct {
	Topic string // the topic's name
	Line  int    // the line's number in the topic, from 1
	Text  string // the line
}

// Search returns the lines of topics that hold word, case-insensitively,
// in topic order then line order.
func Search(topics []Topic, word string) []Match {
	word = strings.ToLower(strings.TrimSpace(word))
	if word == "" {
		return nil
	}
	var out []Match
	for _, t := range topics {
		for i, l := range t.Lines() {
			if strings.Contains(strings.ToLower(l), word) {
				out = append(out, Match{Topic: t.Name, Line: i + 1, Text: l})
			}
		}
	}
	return out
}
