package vault

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The vault is refused, as ssh refuses a private key with loose
// permissions, when someone else could have written it or could read it:
// a file another user owns, or that its group or others may read or write;
// a folder another user (not root) owns, or that its group or others may
// write (a sticky folder such as /tmp excepted: there nobody can replace
// another's file). The files kept beside the vault are held to the same
// rules, and must not be symbolic links.

// resolvePath turns path into the absolute file the vault lives in,
// following symbolic links, and refuses a link another user planted or one
// that points nowhere (tai never creates a vault through a dangling link).
func resolvePath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("vault: resolve path %q: %w", path, err)
	}
	li, err := os.Lstat(abs)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("vault: %w", err)
		}
		// A new vault: its folder may still be a link (resolved below).
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			return filepath.Join(dir, filepath.Base(abs)), nil
		}
		return abs, nil
	}
	if li.Mode()&fs.ModeSymlink == 0 {
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return "", fmt.Errorf("vault: resolve path %q: %w", path, err)
		}
		return real, nil
	}
	if err := ownedBySelf(abs, li, true); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if fi, serr := os.Stat(abs); serr == nil {
			// A /proc link (/dev/stdin to a pipe): it leads to something
			// that has no path of its own.
			if !fi.Mode().IsRegular() {
				return "", notRegularError(abs, fi.Mode())
			}
			return "", fmt.Errorf("vault: %s leads to a file with no path of its own (a /proc link): point --vault at a vault file", abs)
		}
		target, _ := os.Readlink(abs)
		return "", fmt.Errorf("vault: %s is a symbolic link to %s, which does not exist; tai does not create a vault through a dangling link: create the vault at its real place, or point --vault at a file", abs, target)
	}
	if err != nil {
		return "", fmt.Errorf("vault: resolve path %q: %w", path, err)
	}
	return real, nil
}

// checkPlace checks the vault file (when it exists), its folder and the
// files beside it.
func checkPlace(path string) error {
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err == nil {
		if err := folderSafe(dir, di); err != nil {
			return err
		}
	}
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return notRegularError(path, fi.Mode())
		}
		if fi.Size() == 0 && specialEmpty(path) {
			return fmt.Errorf("vault: %s reports no size yet has content (a /proc or /sys file): it is not a vault file: point --vault or TAI_VAULT at a file", path)
		}
		if err := fileSafe(path, fi); err != nil {
			return err
		}
	}
	for _, side := range []string{path + GenerationSuffix, path + JournalSuffix} {
		fi, err := os.Lstat(side)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("vault: %s, kept beside the vault, is not a plain file (%s): someone may be redirecting what tai writes; remove it, or point --vault elsewhere", side, fileKind(fi.Mode()))
		}
		if err := fileSafe(side, fi); err != nil {
			return err
		}
	}
	return nil
}

// fileSafe refuses a file not owned by this user or open to its group or
// to others.
func fileSafe(path string, fi fs.FileInfo) error {
	if err := ownedBySelf(path, fi, false); err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		what := "readable"
		if perm&0o022 != 0 {
			what = "writable"
		}
		return fmt.Errorf("vault: %s is %s by its group or by others (mode %04o): they could read or change your secrets; run chmod 600 %s, or point --vault elsewhere",
			path, what, perm, path)
	}
	return nil
}

// folderSafe refuses a folder another user owns (root may) or that its
// group or others may write without the sticky bit.
func folderSafe(dir string, di fs.FileInfo) error {
	if err := ownedBySelf(dir, di, true); err != nil {
		return err
	}
	if perm := di.Mode().Perm(); perm&0o022 != 0 && di.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("vault: the vault's folder %s is writable by its group or by others (mode %04o): they could replace the vault; run chmod go-w %s, or point --vault elsewhere",
			dir, perm, dir)
	}
	return nil
}

// ownedBySelf refuses what another user owns; rootOK lets root own it too
// (a system folder, a link root made).
func ownedBySelf(path string, fi fs.FileInfo, rootOK bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := uint32(os.Geteuid())
	if st.Uid == me || (rootOK && st.Uid == 0) {
		return nil
	}
	return fmt.Errorf("vault: %s belongs to another user (uid %d, you are %d): they could read or change your secrets; point --vault at a vault of your own",
		path, st.Uid, me)
}

// notRegularError refuses a vault path that is a folder, a device or some
// other special file.
func notRegularError(path string, mode fs.FileMode) error {
	return fmt.Errorf("vault: %s is %s, not a vault file: point --vault or TAI_VAULT at a file (it is created when missing)", path, fileKind(mode))
}

// specialEmpty reports whether a regular file that reports size zero has
// content all the same (/proc and /sys files do): such a file is no new
// vault.
func specialEmpty(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [1]byte
	n, err := f.Read(b[:])
	return n > 0 || (err != nil && !errors.Is(err, io.EOF))
}

func fileKind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
