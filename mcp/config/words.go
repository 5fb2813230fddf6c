package config

import (
	"errors"
	"fmt"
	"strings"
)

// SplitWords splits a command line as a POSIX shell would: blanks separate
// words, 'single' and "double" quotes group (a backslash escapes $ ` " \
// and a newline inside double quotes), a backslash outside quotes escapes
// the next character. $VAR and ${VAR} stay as written, and so does a
// README's <placeholder> (a < that a > closes with no blank or < between).
// A quote left open or a shell operator (| & ; < > ( ) ` $( ) is an error
// saying so: the line needs a shell. normalize.lua's M.split calls it
// through tai.mcp.split.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	have := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a single quote (') is left open")
			}
			cur.WriteString(line[i+1 : i+1+j])
			have = true
			i += j + 1
		case c == '"':
			j := i + 1
			for ; ; j++ {
				if j >= len(line) {
					return nil, errors.New(`a double quote (") is left open`)
				}
				d := line[j]
				if d == '"' {
					break
				}
				if d == '\\' && j+1 < len(line) && strings.IndexByte("$`\"\\\n", line[j+1]) >= 0 {
					j++
					d = line[j]
				} else if d == '`' || d == '$' && j+1 < len(line) && line[j+1] == '(' {
					return nil, errors.New("it runs a command inside quotes (` or $( ))")
				}
				cur.WriteByte(d)
			}
			have = true
			i = j
		case c == '\\':
			if i+1 < len(line) {
				cur.WriteByte(line[i+1])
				i++
			}
			have = true
		case c == '<' && placeholderEnd(line, i) > 0:
			j := placeholderEnd(line, i)
			cur.WriteString(line[i : j+1])
			have = true
			i = j
		case strings.IndexByte("|&;<>()`", c) >= 0 || c == '$' && i+1 < len(line) && line[i+1] == '(':
			op := string(c)
			if c == '$' {
				op = "$("
			}
			return nil, fmt.Errorf("it uses the shell operator %q", op)
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words, nil
}

// placeholderEnd returns the index of the > that closes a <placeholder>
// starting at line[i], or 0 when none does: at least one byte between, and
// no blank, < or > among them.
func placeholderEnd(line string, i int) int {
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '>':
			if j > i+1 {
				return j
			}
			return 0
		case ' ', '\t', '\n', '\v', '\f', '\r', '<':
			return 0
		}
	}
	return 0
}
