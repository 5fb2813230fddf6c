package builtin

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the work of the line matching in UnifiedDiff (the
// lines that differ, old times new); past it the differing middle is shown
// as removed and added whole.
const maxDiffCells = 4_000_000

// UnifiedDiff returns the changes from old to new as unified-diff hunks
// ("@@ -1,3 +1,4 @@", then lines marked " ", "-" and "+"), with context
// unchanged lines around each change; "" when the texts are equal. It is
// what the consent screen shows for a file edit.
func UnifiedDiff(old, new string, context int) string {
	if old == new {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	return formatHunks(ops, context)
}

// splitLines splits s into lines without their newlines; a last line
// without a newline is marked so the diff says so.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n\\ No newline at end of file"
	return lines
}

// diffOp is one line of the diff: kind ' ', '-' or '+', with its line
// numbers in old and new (1-based; 0 where the line is not there).
type diffOp struct {
	kind     byte
	text     string
	oldN, nN int
}

func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{' ', a[i], i + 1, i + 1})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	ops = append(ops, diffMiddle(ma, mb, pre)...)
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, diffOp{' ', a[ai], ai + 1, bi + 1})
	}
	return ops
}

// diffMiddle matches the lines of a and b by their longest common
// subsequence; off is the number of lines before them.
func diffMiddle(a, b []string, off int) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxDiffCells || len(a) == 0 || len(b) == 0 {
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, off + i + 1, 0})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, 0, off + j + 1})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], off + i + 1, off + j + 1})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, diffOp{'-', a[i], off + i + 1, 0})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], 0, off + j + 1})
			j++
		}
	}
	return ops
}

// formatHunks renders ops as hunks with context lines around changes.
func formatHunks(ops []diffOp, context int) string {
	var b strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		oldStart, newStart, oldCount, newCount := 0, 0, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				if oldStart == 0 {
					oldStart = op.oldN
				}
				oldCount++
			}
			if op.kind != '-' {
				if newStart == 0 {
					newStart = op.nN
				}
				newCount++
			}
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldCount, newStart, newCount)
		for _, op := range ops[start:end] {
			b.WriteByte(op.kind)
			b.WriteString(op.text)
			b.WriteByte('\n')
		}
		i = end
	}
	return b.String()
}
