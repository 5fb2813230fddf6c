// Package sandbox starts the programs tai runs on a person's behalf: the
// keeper, tai's own executable started again in a helper mode, between tai
// and each command, a child subreaper that stops everything the command
// started when it ends or when tai dies; and the process-wide protection and
// reaping tai itself applies (ProtectProcess, StopChildren).
//
//	func main() {
//		sandbox.RunKeeperIfAsked() // first: this process may be a keeper
//		...
//	}
//	cmd, replyR, replyW, err := sandbox.Command(argv, dir, env)
//	// set cmd.Stdout/Stderr, Start, close replyW, Wait, then
//	rep, err := sandbox.ReadReply(everythingReadFrom(replyR))
//
// It is a leaf: it imports nothing of tai. Both the shell tool and the MCP
// bridge (stdio servers) start processes through it, and the bridge must not
// import the native tools, so the keeper lives here rather than beside the
// shell tool.
package sandbox
