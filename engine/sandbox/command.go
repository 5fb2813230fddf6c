package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Command returns the keeper's command that runs argv in dir with the
// environment env under p (nil: unrestricted), and the pipes to it. The
// caller sets the command's stdin, stdout and stderr, starts it, calls
// Started (Failed if it did not start), reads the reply from Reply once
// the keeper has ended, and decodes it with ReadReply. A policy that is
// required and cannot be applied here is refused.
func Command(argv []string, dir string, env []string, p *Policy) (*exec.Cmd, *Pipes, error) {
	abi, why := Available()
	if p != nil {
		if err := p.Check(abi, why); err != nil {
			return nil, nil, err
		}
	}
	return keeperProcess(keeperRequest{Argv: argv, Dir: dir, Env: env, Policy: p, ABI: abi})
}

// StartServer returns the function the MCP stdio transport starts a
// server with (mcp.StdioOptions.Start): it starts cmd, as the transport
// prepared it, through the keeper under p. The keeper takes over the
// server's pipes and its terminal (the transport's first extra file when
// it asks for a controlling terminal), starts it as the leader of a
// session of its own with p applied, and exits as the server does; the
// transport waits for the keeper and signals it where it would have
// signalled the server. Everything the server leaves running, setsid'd
// helpers included, is stopped when it ends or when tai dies. It returns
// once the server runs, or with why it could not start.
func StartServer(p Policy) func(cmd *exec.Cmd) error {
	return func(cmd *exec.Cmd) error {
		abi, why := Available()
		if err := p.Check(abi, why); err != nil {
			return err
		}
		// The program as named: the keeper looks it up on the server's PATH.
		argv := append([]string(nil), cmd.Args...)
		dir, env := cmd.Dir, cmd.Env
		if env == nil {
			env = os.Environ()
		}
		if p.Dir != "" {
			// Where its grants were resolved: "." in its entry is there.
			dir = p.Dir
		} else if dir == "" {
			dir, _ = os.Getwd()
		}
		var tty []*os.File
		if a := cmd.SysProcAttr; a != nil && a.Setctty && len(cmd.ExtraFiles) > 0 {
			tty = cmd.ExtraFiles[:1]
		}
		policy := &p
		if p.Off {
			policy = nil
		}
		k, kp, err := keeperProcess(keeperRequest{Argv: argv, Dir: dir, Env: env, Policy: policy, ABI: abi, Server: true, Tty: len(tty) > 0}, tty...)
		if err != nil {
			return err
		}
		cmd.Path, cmd.Args, cmd.Err = k.Path, k.Args, nil
		cmd.Env, cmd.Dir, cmd.ExtraFiles, cmd.SysProcAttr = k.Env, k.Dir, k.ExtraFiles, k.SysProcAttr
		if err := cmd.Start(); err != nil {
			kp.Failed()
			return err
		}
		defer kp.replyR.Close()
		if err := kp.Started(); err != nil {
			return startFailed(cmd, fmt.Errorf("the keeper took no request: %w", err))
		}
		line, err := bufio.NewReader(kp.replyR).ReadBytes('\n')
		if err != nil && len(line) == 0 {
			return startFailed(cmd, errors.New("the keeper ended before it started the server"))
		}
		rep, err := ReadReply(line)
		switch {
		case err != nil:
			return startFailed(cmd, err)
		case rep.Error != "":
			return startFailed(cmd, errors.New(rep.Error))
		case !rep.Started:
			return startFailed(cmd, errors.New("the keeper did not start the server"))
		}
		return nil
	}
}

// startFailed reaps a keeper that could not start its server, so the
// transport sees a start that failed and nothing left running.
func startFailed(cmd *exec.Cmd, err error) error {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	return err
}

// realPath resolves p's symbolic links, or returns it clean.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
