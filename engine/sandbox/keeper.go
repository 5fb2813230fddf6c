package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Every shell command and every stdio server runs under a small keeper:
// this executable started again in a hidden mode (like the Lua sandbox),
// a child subreaper that starts the command, waits for it, and then kills
// and reaps every descendant still alive, including those that detached
// with setsid or a double fork, which a process-group kill misses. Only
// then does it exit, so nothing a command starts outlives it. When tai
// itself dies, even by SIGKILL, the keeper gets SIGTERM (its Pdeathsig)
// and stops the command and all it started in the same way before it
// exits; when tai exits, tai, a subreaper too, inherits and stops what is
// left. The keeper handles SIGHUP and SIGINT, so the command starts with
// both at their default action even when tai ignores them (under nohup).
//
// The keeper applies the command's Policy to the command alone: it locks
// one goroutine to its OS thread, restricts that thread with Landlock and
// starts the command from it (a new process takes the credentials, and so
// the Landlock domain, of the thread that forks it). The keeper's other
// threads stay free, so it can still read /proc to find what the command
// left running, and the command, in a domain of its own, can neither
// signal nor ptrace it.
//
// The keeper's files: 0, 1 and 2 are the command's; 3 brings the request;
// 4 takes the reply; 5, for a stdio server, is its terminal.

// keeperEnv marks the environment of the keeper process; RunKeeperIfAsked
// turns such a process into the keeper.
const (
	keeperEnv  = "TAI_KEEPER"
	keeperMode = "keeper-2"
)

// stopGrace is how long a stdio server has between the SIGTERM the keeper
// passes on and the SIGKILL that follows; it is shorter than the grace the
// transport gives the keeper (mcp.DefaultShutdownGrace), so the keeper
// stops what the server left before it could be killed itself.
const stopGrace = time.Second

// RunKeeperIfAsked makes this process the keeper, and exits when the
// keeper is done, if it was started as one; otherwise it returns at once.
// Every program that starts commands through this package (tai's main,
// and the TestMain of each test binary that does) calls it before
// anything else, since the keeper is that same executable started again.
func RunKeeperIfAsked() {
	if os.Getenv(keeperEnv) == keeperMode {
		os.Exit(keeperMain())
	}
}

// keeperRequest is what tai sends the keeper on file 3.
type keeperRequest struct {
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	// Policy restricts the command; nil runs it unrestricted.
	Policy *Policy `json:"policy,omitempty"`
	// ABI is the Landlock ABI version tai found (see Available).
	ABI int `json:"abi"`
	// Server starts a stdio server: the keeper reports once it started
	// it and then exits as it does.
	Server bool `json:"server,omitempty"`
	// Tty makes the command the leader of a session of its own whose
	// controlling terminal is the keeper's file 5, passed on as its file 3.
	Tty bool `json:"tty,omitempty"`
}

// Reply is what the keeper writes on file 4: for a shell command, once
// the command and every descendant have ended; for a stdio server, once
// it started (Started) or could not (Error).
type Reply struct {
	Error   string `json:"error,omitempty"` // the command could not start
	Started bool   `json:"started,omitempty"`
	Exit    int    `json:"exit"`
	Signal  int    `json:"signal,omitempty"`
	Stopped int    `json:"stopped,omitempty"` // descendants still running when it ended
}

// keeperProcess returns the keeper's own command and the pipes to it.
// extra are the keeper's files from 5 on. The caller starts it, then
// calls Started (or Failed), and reads the reply.
func keeperProcess(req keeperRequest, extra ...*os.File) (*exec.Cmd, *Pipes, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	kp := &Pipes{body: body}
	if kp.reqR, kp.reqW, err = os.Pipe(); err != nil {
		return nil, nil, err
	}
	if kp.replyR, kp.replyW, err = os.Pipe(); err != nil {
		kp.reqR.Close()
		kp.reqW.Close()
		return nil, nil, err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"tai-keeper"}
	// GORACE matters only to race-detector builds (tests), where it skips
	// the detector's one-second pause at exit.
	cmd.Env = []string{keeperEnv + "=" + keeperMode, "GOTRACEBACK=none",
		strings.TrimSpace("GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0")}
	cmd.Dir = "/"
	cmd.ExtraFiles = append([]*os.File{kp.reqR, kp.replyW}, extra...)
	// SIGTERM, not SIGKILL: a keeper killed outright would leave the
	// command's descendants running once tai is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, kp, nil
}

// Pipes are the request and reply pipes between tai and a keeper.
type Pipes struct {
	body           []byte
	reqR, reqW     *os.File
	replyR, replyW *os.File
}

// Started closes the keeper's ends once it has started and sends the
// request; the keeper reads it whole before it does anything else.
func (kp *Pipes) Started() error {
	kp.reqR.Close()
	kp.replyW.Close()
	_, err := kp.reqW.Write(kp.body)
	kp.reqW.Close()
	return err
}

// Failed closes every end when the keeper could not be started.
func (kp *Pipes) Failed() {
	closeFiles(kp.reqR, kp.reqW, kp.replyR, kp.replyW)
}

// Reply is the read end of the reply pipe; the caller closes it.
func (kp *Pipes) Reply() *os.File { return kp.replyR }

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// keeperMain is the whole life of the keeper process. It returns the
// exit status.
func keeperMain() int {
	reqFrom, replyTo := os.NewFile(3, "request"), os.NewFile(4, "reply")
	if reqFrom == nil || replyTo == nil {
		fmt.Fprintln(os.Stderr, "tai: the keeper mode is started by tai itself")
		return 2
	}
	// The command must not inherit the pipes: should the keeper be killed,
	// what the command left running would hold tai's read open.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	reply := Reply{}
	send := func() int {
		if err := json.NewEncoder(replyTo).Encode(reply); err != nil {
			return 2
		}
		return 0
	}
	var req keeperRequest
	if err := json.NewDecoder(reqFrom).Decode(&req); err != nil || len(req.Argv) == 0 {
		reply.Error = fmt.Sprintf("the keeper got no command: %v", err)
		return send()
	}
	reqFrom.Close()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		reply.Error = "cannot become a child subreaper: " + err.Error()
		return send()
	}
	// tai cancels a call with SIGTERM, and the kernel sends it when tai
	// dies: the command and all it started are stopped, then the keeper
	// reports and exits.
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	temp, err := prepare(&req)
	if temp != "" {
		defer os.RemoveAll(temp)
	}
	if err != nil {
		reply.Error = err.Error()
		return send()
	}
	cmd := commandOf(&req)
	done, err := startUnder(cmd, req.Policy, req.ABI)
	if err != nil {
		reply.Error = err.Error()
		return send()
	}
	if req.Server {
		reply.Started = true
		send()
		replyTo.Close()
	}
	select {
	case <-done:
	case <-stop:
		if req.Server {
			// A server may end cleanly first.
			unix.Kill(-cmd.Process.Pid, unix.SIGTERM)
			select {
			case <-done:
			case <-stop:
			case <-time.After(stopGrace):
			}
		}
		unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		<-done
	}
	// The command's group first (cmd &), then everything else still
	// alive below the keeper (setsid, double forks).
	if unix.Kill(-cmd.Process.Pid, 0) == nil && unix.Kill(-cmd.Process.Pid, unix.SIGKILL) == nil {
		reply.Stopped++
	}
	reply.Stopped += StopChildren(5 * time.Second)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if req.Server {
		// The keeper ends as the server did, which is what tai reports.
		if ws.Signaled() {
			signal.Reset(ws.Signal())
			unix.Kill(os.Getpid(), ws.Signal())
			return 128 + int(ws.Signal())
		}
		return cmd.ProcessState.ExitCode()
	}
	if ws.Signaled() {
		reply.Exit, reply.Signal = -1, int(ws.Signal())
	} else {
		reply.Exit = cmd.ProcessState.ExitCode()
	}
	return send()
}

// prepare makes the folders the policy makes, sets the variables it sets
// and makes the private temporary folder, which it returns for removal once the command has ended.
func prepare(req *keeperRequest) (temp string, err error) {
	p := req.Policy
	if p == nil || p.Off {
		return "", nil
	}
	for _, g := range append(append([]Path(nil), p.Read...), p.Write...) {
		if g.Make {
			if err := os.MkdirAll(g.Path, 0o700); err != nil {
				return "", fmt.Errorf("cannot make %s for the sandbox: %w", g.Path, err)
			}
		}
	}
	for _, kv := range p.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			req.Env = setEnv(req.Env, k, v)
		}
	}
	if !p.PrivateTemp {
		return "", nil
	}
	parent := os.TempDir()
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			parent = v
		}
	}
	temp, err = os.MkdirTemp(parent, "tai-")
	if err != nil {
		return "", fmt.Errorf("cannot make a private temp folder: %w", err)
	}
	p.Write = append(p.Write, Path{Path: temp})
	req.Env = setEnv(req.Env, "TMPDIR", temp)
	return temp, nil
}

// setEnv sets k to v in env.
func setEnv(env []string, k, v string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, k+"=") {
			out = append(out, kv)
		}
	}
	return append(out, k+"="+v)
}

// commandOf builds the command the keeper starts.
func commandOf(req *keeperRequest) *exec.Cmd {
	// The program is looked up on the command's PATH, not the keeper's.
	os.Setenv("PATH", "")
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A session of its own, with no controlling terminal: /dev/tty is never
	// tai's terminal, so the command can neither read what the person types
	// to tai nor push keystrokes into it (TIOCSTI). Its process group is
	// the session's, so signalling -pid still reaches the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if req.Tty {
		syscall.CloseOnExec(5)
		cmd.ExtraFiles = []*os.File{os.NewFile(5, "tty")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3, Pdeathsig: syscall.SIGKILL}
	}
	return cmd
}

// startUnder starts cmd under p from a thread of its own (see
// restrictThread) and returns a channel that is closed once cmd has been
// waited for. That thread lives as long as the command: the command's
// Pdeathsig fires when the thread that started it ends.
func startUnder(cmd *exec.Cmd, p *Policy, abi int) (<-chan struct{}, error) {
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Never unlocked: a restricted thread ends with this goroutine.
		runtime.LockOSThread()
		if err := restrictThread(p, abi); err != nil {
			started <- fmt.Errorf("cannot apply the sandbox: %w", err)
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
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
