package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The shell tool runs each command under a small keeper: this executable
// started again in a hidden mode (like the Lua sandbox), a child subreaper
// that starts the command, waits for it, and then kills and reaps every
// descendant still alive, including those that detached with setsid or a
// double fork, which a process-group kill misses. Only then does it exit,
// so nothing a call starts outlives the call. When tai itself dies, even
// by SIGKILL, the keeper gets SIGTERM (its Pdeathsig) and stops the
// command and all it started in the same way before it exits; when tai
// exits, tai, a subreaper too, inherits and stops what is left. The
// keeper handles SIGHUP and SIGINT, so the command starts with both at
// their default action even when tai ignores them (under nohup).

// shellKeeperEnv marks the environment of the keeper process;
// RunKeeperIfAsked turns such a process into the keeper.
const (
	shellKeeperEnv   = "TAI_SHELL_KEEPER"
	shellKeeperChild = "keeper-1"
)

// RunKeeperIfAsked makes this process the keeper, and exits when the
// keeper is done, if it was started as one; otherwise it returns at once. Every program that runs the shell tool (tai's main, and
// the TestMain of each test binary that does) calls it before anything
// else, since the keeper is that same executable started again.
func RunKeeperIfAsked() {
	if os.Getenv(shellKeeperEnv) == shellKeeperChild {
		os.Exit(shellKeeperMain())
	}
}

// keeperRequest is what tai sends the keeper on its stdin.
type keeperRequest struct {
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// Reply is what the keeper writes on fd 3 once the command and every
// descendant have ended.
type Reply struct {
	Error   string `json:"error,omitempty"` // the command could not start
	Exit    int    `json:"exit"`
	Signal  int    `json:"signal,omitempty"`
	Stopped int    `json:"stopped,omitempty"` // descendants still running when it ended
}

// Command returns the command that runs argv under the keeper, and the
// pipe end its reply arrives on. The caller sets the output and starts it,
// closes the write end (the second file) once started, and reads the reply
// with ReadReply after Wait.
func Command(argv []string, dir string, env []string) (*exec.Cmd, *os.File, *os.File, error) {
	req, err := json.Marshal(keeperRequest{Argv: argv, Dir: dir, Env: env})
	if err != nil {
		return nil, nil, nil, err
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"tai-shell"}
	// GORACE matters only to race-detector builds (tests), where it skips
	// the detector's one-second pause at exit.
	cmd.Env = []string{shellKeeperEnv + "=" + shellKeeperChild, "GOTRACEBACK=none",
		strings.TrimSpace("GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0")}
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader(string(req))
	cmd.ExtraFiles = []*os.File{replyW}
	// SIGTERM, not SIGKILL: a keeper killed outright would leave the
	// command's descendants running once tai is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, replyR, replyW, nil
}

// shellKeeperMain is the whole life of the keeper process. It returns the
// exit status.
func shellKeeperMain() int {
	replyTo := os.NewFile(3, "reply")
	if replyTo == nil {
		fmt.Fprintln(os.Stderr, "tai: the shell keeper mode is started by tai itself")
		return 2
	}
	// The command must not inherit the reply pipe: should the keeper be
	// killed, what the command left running would hold tai's read open.
	syscall.CloseOnExec(3)
	reply := Reply{}
	send := func() int {
		if err := json.NewEncoder(replyTo).Encode(reply); err != nil {
			return 2
		}
		return 0
	}
	var req keeperRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil || len(req.Argv) == 0 {
		reply.Error = fmt.Sprintf("the shell keeper got no command: %v", err)
		return send()
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		reply.Error = "cannot become a child subreaper: " + err.Error()
		return send()
	}
	// tai cancels a call with SIGTERM, and the kernel sends it when tai
	// dies: the command and all it started are stopped, then the keeper
	// reports and exits.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// The program is looked up on the command's PATH, not the keeper's.
	os.Setenv("PATH", "")
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		reply.Error = err.Error()
		return send()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-stop:
		unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		<-done
	}
	// The command's group first (cmd &), then everything else still
	// alive below the keeper (setsid, double forks).
	if unix.Kill(-cmd.Process.Pid, 0) == nil && unix.Kill(-cmd.Process.Pid, unix.SIGKILL) == nil {
		reply.Stopped++
	}
	reply.Stopped += StopChildren(5 * time.Second)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		reply.Exit, reply.Signal = -1, int(ws.Signal())
	} else {
		reply.Exit = cmd.ProcessState.ExitCode()
	}
	return send()
}

// ErrKeeperGone reports a keeper that ended without a reply: it was
// killed (by the command itself, say) before the command ended.
var ErrKeeperGone = errors.New("the shell keeper was killed before the command ended, so its status is unknown; " +
	"anything the command left running is stopped when tai exits")

// ReadReply decodes the keeper's reply; an empty or broken one means the
// keeper died (killed on cancellation or timeout).
func ReadReply(b []byte) (Reply, error) {
	var r Reply
	if len(b) == 0 {
		return r, ErrKeeperGone
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("the shell keeper's reply: %w", err)
	}
	return r, nil
}
