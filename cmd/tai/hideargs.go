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

// hideArgs overwrites every occurrence of keys in the process's own
// argument memory, the bytes /proc/PID/cmdline (and so ps) shows to every
// user of the machine, with keyMask, and points os.Args at the masked
// words. Call it first thing in main, with copies of everything taken
// from os.Args: Go's os.Args strings are that memory (the runtime does not
// copy them), so after hideArgs the originals read differently.
func hideArgs(keys []string) {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == "" })
	if len(keys) == 0 || len(os.Args) == 0 {
		return
	}
	// Longer keys first, so a key inside another is not left half shown.
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	masked := make([]string, len(os.Args))
	for i, a := range os.Args {
		for _, k := range keys {
			a = strings.ReplaceAll(a, k, mask(k))
		}
		masked[i] = a
	}
	// execve lays the words out end to end, each ending in a NUL: then
	// the masked words are written end to end too, and the room left is
	// NULs. Otherwise each word is overwritten where it stands.
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
		area := unsafe.Slice(start, end-uintptr(unsafe.Pointer(start)))
		clear(area[copy(area, strings.Join(masked, "\x00")):])
	} else {
		for i, a := range os.Args {
			word := unsafe.Slice(unsafe.StringData(a), len(a))
			clear(word[copy(word, masked[i]):])
		}
	}
	os.Args = masked
}

// mask is what key reads as once hidden: keyMask, or as many stars as it
// has characters when it is shorter, so no word grows.
func mask(key string) string {
	if len(key) < len(keyMask) {
		return strings.Repeat("*", len(key))
	}
	return keyMask
}
