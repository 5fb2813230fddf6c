package main

import (
	"cmp"
	"os"
	"slices"
	"strings"
	"unsafe"
)

// keyMask is what a hidden key reads as in the process list.
const keyMask = "********"

// cmdline is the process's own argument memory: the bytes /proc/PID/cmdline
// (and so ps) shows to every user of the machine. Keys are hidden in it
// when tai starts (one given to --serve-mcp) and later (one a script gives
// tai.serve that its command line holds).
type cmdline struct {
	words []string // what the words read as now
	area  []byte   // the words as execve laid them out, end to end
	each  [][]byte // else each word's own bytes
}

// ownCmdline finds the argument memory through os.Args. Call it first
// thing in main, before anything changes os.Args: Go's os.Args strings are
// that memory (the runtime does not copy them).
func ownCmdline() *cmdline {
	c := &cmdline{words: slices.Clone(os.Args)}
	if len(os.Args) == 0 {
		return c
	}
	// execve lays the words out end to end, each ending in a NUL: then the
	// masked words are written end to end too, and the room left is NULs.
	// Otherwise each word is overwritten where it stands.
	start := unsafe.StringData(os.Args[0])
	end := uintptr(unsafe.Pointer(start))
	contiguous := true
	for _, a := range os.Args {
		if uintptr(unsafe.Pointer(unsafe.StringData(a))) != end {
			contiguous = false
			break
		}
		end += uintptr(len(a)) + 1
	}
	if contiguous {
		c.area = unsafe.Slice(start, end-uintptr(unsafe.Pointer(start)))
		return c
	}
	for _, a := range os.Args {
		c.each = append(c.each, unsafe.Slice(unsafe.StringData(a), len(a)))
	}
	return c
}

// hide overwrites every occurrence of keys in the argument memory with
// keyMask, points os.Args at the masked words, and reports whether any
// key was there.
func (c *cmdline) hide(keys []string) bool {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == "" })
	if len(keys) == 0 {
		return false
	}
	// Longer keys first, so a key inside another is not left half shown.
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	found := false
	masked := make([]string, len(c.words))
	for i, a := range c.words {
		for _, k := range keys {
			if strings.Contains(a, k) {
				found = true
				a = strings.ReplaceAll(a, k, mask(k))
			}
		}
		masked[i] = a
	}
	if !found {
		return false
	}
	c.words = masked
	if c.area != nil {
		clear(c.area[copy(c.area, strings.Join(masked, "\x00")):])
	} else {
		for i, word := range c.each {
			clear(word[copy(word, masked[i]):])
		}
	}
	os.Args = slices.Clone(masked)
	return true
}

// mask is what key reads as once hidden: keyMask, or as many stars as it
// has characters when it is shorter, so no word grows.
func mask(key string) string {
	if len(key) < len(keyMask) {
		return strings.Repeat("*", len(key))
	}
	return keyMask
}

// hideKey is lua's Options.HideKey: it hides key wherever the command line
// holds it, and reports whether it did.
func (c *cmdline) hideKey(key string) bool {
	return c != nil && c.hide([]string{key})
}
