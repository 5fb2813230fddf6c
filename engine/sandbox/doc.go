// Package sandbox starts the programs tai runs on a person's behalf, the
// shell tool's commands and the stdio MCP servers, and confines them with
// Landlock.
//
// Each runs under the keeper: tai's own executable started again in a
// helper mode, a child subreaper between tai and the command that stops
// everything the command started when it ends or when tai dies. The keeper
// applies the command's Policy to the command alone, right before exec;
// tai itself is never restricted. ProtectProcess and StopChildren are the
// process-wide protection and reaping tai applies to itself.
//
//	func main() {
//		sandbox.RunKeeperIfAsked() // first: this process may be a keeper
//		...
//	}
//	p := sandbox.ForShell(sandbox.ShellSpec{Dir: dir, Vault: store.Path()})
//	cmd, pipes, err := sandbox.Command(argv, dir, env, &p)
//	// set cmd.Stdout/Stderr, Start, pipes.Started(), Wait, then
//	rep, err := sandbox.ReadReply(everythingReadFrom(pipes.Reply()))
//
//	// a stdio server: mcp.StdioOptions.Start
//	so.Start = sandbox.StartServer(sandbox.ForServer(spec))
//
// ForServer and ForShell build the default policies; Describe says one in
// a line for the consent screen; Available says whether the kernel has
// Landlock ($TAI_LANDLOCK_ABI=0 makes it say no, to try tai as on a
// system without it). Where it has none, commands run as they would
// without the sandbox, unless the policy is Required.
//
// What the sandbox does not cover: abstract Unix sockets and signals on
// kernels before Landlock ABI 6, pathname Unix sockets before ABI 9, the
// network by host (only TCP ports, from ABI 4, all or nothing here), the
// names in a denied folder (they can be listed, not read), another path to
// a denied file through a bind mount or a hard link made beforehand, and
// what a command asks another service (a daemon, Docker) to do for it.
//
// It is a leaf: it imports nothing of tai. Both the shell tool and the MCP
// bridge (stdio servers) start processes through it, and the bridge must
// not import the native tools, so the keeper lives here rather than beside
// the shell tool.
package sandbox
