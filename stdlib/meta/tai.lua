---@meta
-- The `tai` module's types for lua-language-server (LuaLS): completion,
-- hover and type checks in init.lua and scripts. Point LuaLS's
-- workspace.library at the folder holding this file (see /help lua); tai
-- itself never loads it. Code the model runs with the lua tool sees only
-- tai.version, tai.json and tai.toml.
--
-- Functions that can fail at run time return nil and a message; bad
-- arguments raise.
error("meta/tai.lua only describes the tai module to editors; tai needs no require for it")

-- Shapes ------------------------------------------------------------------

---A canonical MCP server entry, as tai.mcp.normalize returns it and
---tai.mcp.connect takes it.
---@class tai.Entry
---@field name string
---@field transport "stdio"|"http" may be left out when only one of command and url is given
---@field command? string the program of a stdio server, run without a shell
---@field args? string[] its exact arguments
---@field env? table<string, string> laid over tai's own environment
---@field cwd? string working directory of a stdio server
---@field url? string endpoint of an http server
---@field headers? table<string, string> sent with every request to an http server
---@field oauth? tai.EntryOAuth how tai logs in to an http server (nil: by discovery)
---@field allow? string[] the tools offered; empty means all
---@field deny? string[] tools never offered
---@field sandbox? false|"required"|tai.EntrySandbox a stdio server's sandbox: false turns it off, "required" refuses to start where none can run (nil: the default)
---@field enabled? boolean whether the registering profile has it enabled
---@field source? string what was pasted: config-json, config-toml, github:<owner>/<repo> or explicit

---The OAuth settings of an http entry.
---@class tai.EntryOAuth
---@field client_id? string a client id registered with the provider by hand
---@field client_secret? string only ever a ${NAME} reference to a vault secret
---@field callback_port? integer the loopback redirect's port (0: an ephemeral one)
---@field client_metadata_url? string an https client ID metadata document URL

---What a stdio entry's sandbox may do beyond the default.
---@class tai.EntrySandbox
---@field read? string[] folders it may read (absolute, or under ~)
---@field write? string[] folders it may read and write
---@field network? boolean false closes TCP (nil: open)
---@field required? boolean refuse to start where no sandbox can run

---A note on a pasted config: what was mapped, repaired, ignored or refused.
---@class tai.Note
---@field server string the server it is about ("" for the whole paste)
---@field level "info"|"warn"|"refused"
---@field text string

---One content block of a tool result (MCP content).
---@class tai.Content
---@field type "text"|"image"|"audio"|"resource_link"|"resource"|string
---@field text? string
---@field data? string base64, for image and audio
---@field mimeType? string

---What a tool call gives.
---@class tai.ToolResult
---@field content tai.Content[]
---@field isError boolean true when the tool ran and failed

---A native tool, as tai.tools lists it.
---@class tai.ToolInfo
---@field name string
---@field description string
---@field safe boolean runs without asking
---@field origin string "built-in", "lua" (added with tai.tool) or "server/tool" for a bridged MCP tool
---@field parameters table its JSON Schema

---A tool written in Lua, for tai.tool.
---@class tai.ToolSpec
---@field name string
---@field description string what the tool does; the model chooses tools by it
---@field parameters? table a JSON Schema whose root type is "object" (default: no arguments)
---@field safe? boolean runs without asking for consent (default false)
---@field run fun(args: table): string|tai.ToolResult|any # a string is text content, any other value is sent as JSON; a Lua error becomes an isError result

---A chat message.
---@class tai.Message
---@field role "system"|"user"|"assistant"|"tool"
---@field content? string
---@field tool_calls? tai.ToolCall[] assistant messages
---@field tool_call_id? string tool messages
---@field name? string tool messages: the tool's name
---@field is_error? boolean tool messages: the tool ran and failed
---@field parts? {type: string, mime: string, data: string}[] images and audio (data in base64): a tool's, or a prompt's

---A model's request to run one tool.
---@class tai.ToolCall
---@field id string
---@field name string
---@field arguments table|string a JSON object, or the text the model sent when it was not JSON

---Options of tai.chat; profile, tools and system also pick which
---conversation tai.chat_history, tai.chat_restore and tai.chat_reset mean.
---@class tai.ChatOptions
---@field profile? string run on this profile (a conversation of its own)
---@field tools? string[] tool names or patterns offered (a conversation of its own)
---@field system? string system prompt (a conversation of its own)
---@field max_steps? integer 1 to 1000
---@field reset? boolean forget the conversation first
---@field tool_budget? integer tokens the tool schemas may take before selection starts
---@field messages? tai.Message[] open the turn before the message (tai.mcp.prompt's messages); the message may then be ""
---@field on_text? fun(delta: string)
---@field on_waiting? fun(waiting: boolean, tick?: integer) # called every 0.1 s while the model is silent
---@field on_tool_start? fun(ev: tai.ToolEvent)
---@field on_tool_end? fun(ev: tai.ToolEvent)
---@field on_tool_progress? fun(ev: tai.ToolEvent) # the latest progress a running tool reported, at most every 50 ms
---@field on_retry? fun(notice: tai.RetryNotice)
---@field on_notice? fun(notice: tai.ModelNotice) # the model picked for a profile that names none, once
---@field on_running? fun(running: boolean, tick?: integer, elapsed_ms?: number, status?: string) # every 0.1 s while approved calls run; status: an MCP server's launcher still fetching it, or ""

---What became of a tai.chat turn.
---@class tai.ChatInfo
---@field steps integer
---@field exhausted boolean max_steps was reached
---@field truncated boolean
---@field filtered boolean
---@field empty boolean
---@field finish_reason string
---@field usage tai.Usage
---@field profile string
---@field tools tai.ToolSelection of the turn's last model call

---The tools offered on a model call.
---@class tai.ToolSelection
---@field offered string[] their names
---@field available integer
---@field tokens integer what the schemas take
---@field selected boolean selection chose among them (past the budget)

---@class tai.Usage
---@field input_tokens integer
---@field output_tokens integer

---The model picked for a profile that names none, for on_notice.
---@class tai.ModelNotice
---@field text string for a person: "no model named: using claude-sonnet-5, the newest sonnet the key can use; …"
---@field model string
---@field family string the family it was picked from; "" for a server's only model

---A retry of a model request, for on_retry.
---@class tai.RetryNotice
---@field text string for a person: "rate limited (429); retrying in 30s, attempt 2/4"
---@field reason string
---@field status integer
---@field wait number seconds
---@field attempt integer
---@field attempts integer
---@field provider string
---@field model string

---A tool call of a turn, for on_tool_start, on_tool_progress and on_tool_end.
---@class tai.ToolEvent
---@field id string
---@field name string
---@field digest string
---@field args? table redacted
---@field outcome? string on_tool_end only
---@field reason? string on_tool_end only: why a denied call was denied when nobody could be asked
---@field duration_ms? number on_tool_end only
---@field media? string[] on_tool_end only: a label per image, audio or blob of the result, numbered for tai.media.open: "[image 2: png 640×480, 45 KB]"
---@field notes? string[] on_tool_end only: what happened while the call ran that the person should know (a server's question declined under --auto), one line each
---@field progress? number on_tool_progress only: how far the tool has come
---@field total? number on_tool_progress only: of how much; 0 when unknown
---@field message? string on_tool_progress only: what it does now, redacted ("" when it says nothing)

---A message for tai.complete.
---@class tai.CompleteMessage
---@field role "system"|"user"|"assistant"
---@field content string

---@class tai.CompleteInfo
---@field finish_reason string
---@field usage tai.Usage

---A tool call waiting for a person's consent.
---@class tai.Consent
---@field tool string
---@field origin string
---@field digest? string
---@field args? table

---The functions tai asks a person through (the REPL's consent screen).
---@class tai.Prompter
---@field confirm fun(consent: tai.Consent): boolean # true allows the call
---@field ask fun(question: string): string?, string? # the answer, or nil and why
---@field sample? fun(q: tai.SampleQuestion): "approve"|"deny"|tai.SampleDecision # reviews a server's sampling request before anything is sent
---@field sample_answer? fun(q: tai.SampleQuestion, answer: tai.SampleAnswer): boolean # true returns the model's answer to the server
---@field elicit? fun(request: tai.Elicitation): tai.ElicitAnswer # a server's form or URL, put to the person; without it nobody answers them

---A server's sampling/createMessage, as the person reviews it.
---@class tai.SampleQuestion
---@field server string the server that asks
---@field model string the person's current model, which would answer
---@field request {messages: {role: string, content: table[]}[], systemPrompt?: string, maxTokens: integer, lowered?: integer, temperature?: number, modelPreferences?: table, includeContext?: string, tools?: {name: string, description?: string, inputSchema: table}[], toolChoice?: string, bytes: integer}

---The person's decision on a sampling request.
---@class tai.SampleDecision
---@field action "approve"|"deny"
---@field prompt? string replaces the text of the last user message
---@field tools? boolean the model may be offered the request's tools

---The model's answer to a sampling request, before it goes back.
---@class tai.SampleAnswer
---@field model string
---@field text string
---@field tool_calls? {id: string, name: string, input: table}[] tools the model asks the server to run
---@field stop_reason "endTurn"|"maxTokens"|"toolUse"

---What a server asks the person through elicitation/create, as the
---prompter's elicit, tai.mcp.on_elicit and tai.mcp.connect's on_elicit get it.
---@class tai.Elicitation
---@field server string the server's name
---@field message string why it asks, as sent (show it with tai.term.clean)
---@field mode "form"|"url"
---@field id? string the elicitationId of a URL request
---@field fields? tai.ElicitField[] form mode: the questions, in the server's order
---@field url? string url mode: the URL to open, its host in punycode
---@field host? string url mode: the host alone, in punycode
---@field unicode? string url mode: the host as its Unicode form reads, when it differs
---@field warnings? string[] url mode: what should make a person look twice (punycode, http, a user name before the host)

---One question of a server's form.
---@class tai.ElicitField
---@field name string the key of its value in the content
---@field title? string
---@field description? string
---@field kind "string"|"number"|"integer"|"boolean"|"enum"|"multi"
---@field format? "email"|"uri"|"date"|"date-time"
---@field pattern? string
---@field minimum? number
---@field maximum? number
---@field options? {value: string, title: string}[] enum and multi: the choices
---@field default? any the server's default (SEP-1034), checked
---@field default_text? string the default as a person would type it
---@field required boolean
---@field secret boolean its name reads as a credential's: servers must not ask for secrets in a form
---@field hint? string what it takes, for the prompt: "email", "whole number 1 to 100", "y/n"
---@field check fun(text: string): any, string? # the value typed text gives (nil for nothing), or nil and why it is refused

---The answer to an elicitation. tai checks content against the form again
---and fills in the defaults of the fields it leaves out.
---@class tai.ElicitAnswer
---@field action "accept"|"decline"|"cancel"
---@field content? table<string, any> accept in form mode: the values by field name

---A model profile.
---@class tai.Profile
---@field name string
---@field provider "openai"|"anthropic"|"ollama"
---@field base_url? string empty: the provider's default
---@field model? string empty: the newest of tai.model_families(provider) the key can use
---@field model_chosen? string tai.profiles.current(): the model picked for a profile that names none
---@field key_secret? string vault secret holding the API key
---@field key_env? string environment variable holding the API key
---@field system? string system prompt
---@field tools? string[] tool names or patterns offered; empty: all
---@field max_tokens? integer
---@field max_tokens_field? "max_tokens"|"max_completion_tokens" the OpenAI-compatible field of the cap; empty: the one the model takes
---@field pass_env? string[] credential-looking variables shell commands may see
---@field sandbox? boolean false runs the shell tool's commands without the sandbox for sessions on this profile
---@field images? boolean false sends the model no image a tool returned, only a label for each

---A profile as tai.profiles.list shows it.
---@class tai.ProfileRow: tai.Profile
---@field current boolean
---@field stored boolean kept in the vault (not only from the environment)

---A REPL command, as tai.commands lists it.
---@class tai.Command
---@field name string without the slash
---@field help string
---@field fn fun(rest: string, words: string[])
---@field complete? fun(word: string, line: string): string[]

---A saved conversation.
---@class tai.Conversation
---@field id string
---@field created integer Unix seconds
---@field updated integer Unix seconds
---@field dir string
---@field title string
---@field turns integer
---@field profile string
---@field messages? tai.Message[] tai.conversations.get only

---What tai.conversations.save takes (an id updates that conversation).
---@class tai.ConversationSave
---@field id? string
---@field dir? string
---@field title? string
---@field turns? integer default: the user messages counted
---@field profile? string
---@field messages? tai.Message[]

---@class tai.SecretInfo
---@field name string
---@field meta table
---@field updated? string RFC 3339

---@class tai.RecordInfo
---@field id string
---@field size integer bytes
---@field created? string RFC 3339
---@field meta table

---One entry of the audit trail (text fields on one line each).
---@class tai.AuditEntry
---@field seq integer
---@field time? string RFC 3339
---@field kind string
---@field subject string
---@field digest string
---@field outcome string
---@field duration_ms integer
---@field size integer
---@field session? string
---@field prev string hash of the entry before
---@field hash string

---A folder's permission rule: calls it covers run without a consent question.
---@class tai.Permission
---@field dir string
---@field tool string
---@field prefix? string the shell tool only: the command's first words
---@field sandbox? boolean false: the commands it covers run outside the shell's sandbox
---@field created? string RFC 3339

---@class tai.PermissionArgs
---@field tool string
---@field prefix? string the shell tool only ("git status")
---@field sandbox? boolean false (a shell rule with a prefix only): the commands it covers also run outside the sandbox
---@field dir? string default: tai.cwd()
---@field created? string ignored (so a row of tai.permissions.list passes as it is)

---@class tai.ServeOptions
---@field key? string the Bearer key (at least 16 characters); give key or key_secret
---@field key_secret? string the vault secret holding the key
---@field port? integer default $TAI_MCP_PORT else 8765; 0 picks a free one
---@field bind? string default $TAI_MCP_BIND else 127.0.0.1
---@field tool_budget? integer tokens the schemas may take before a served chat turn chooses among them

---@class tai.ReadlineOptions
---@field history? string history file
---@field complete? fun(line: string): string[] # candidates for the last word of the text before the cursor
---@field output? "stdout"|"stderr" where the prompt and the edited line are drawn

---@class tai.mcp.AddArgs
---@field source string a pasted config (JSON, TOML, one entry, a `claude|codex|gemini mcp add` line), a file path, an http(s) URL, a GitHub URL or a stored server's name
---@field name? string names a bare entry
---@field profile? string the registering profile (default: the current one)
---@field replace? boolean store over a stored server of the same name (once consented to and verified)

---What became of one server of tai.mcp.add or tai.mcp.import.
---@class tai.mcp.ServerOutcome
---@field server string
---@field outcome "added"|"skipped"|"refused"
---@field reason? string
---@field transport? "stdio"|"http"
---@field tools? string[] as listed at verification
---@field profile? string
---@field enabled boolean
---@field consent? "asked"|"auto"|"yolo" how the start was consented to
---@field spawn? tai.ConsentScreen what was started, as its consent screen is told it (the body of stdlib/consent.lua lays it out)
---@field notes? string[] listed tools and prompts that were refused, and why
---@field prompts? string[] the prompts listed, pinned with the tools
---@field instructions? string the server's instructions for the model, pinned with the tools
---@field needs_login? boolean the server answered 401: stored disabled until tai.mcp.login
---@field found? string a GitHub server: which pass found it, in which file and line
---@field declined? boolean refused because the person said no at its consent question

---The facts of an MCP consent screen, every secret redacted, none made
---safe to show yet: stdlib/consent.lua lays them out.
---@class tai.ConsentScreen
---@field server string
---@field changed boolean registered already, and would start (or be reached) otherwise than consented to; else new
---@field profile? string the profile a new server is enabled for
---@field instructions? string what the server says of itself, shown first
---@field found? string a resolved entry: where it was found
---@field transport "stdio"|"http"
---@field argv? string[] a stdio server's command line, word by word
---@field cwd? string the folder as the entry wrote it
---@field dir? string the folder it resolves to
---@field env? tai.ConsentVar[]
---@field url? string an HTTP server's address
---@field host_note? string what to know of the URL's host (punycode, mixed scripts)
---@field headers? tai.ConsentVar[] values never shown
---@field oauth? string the entry's login settings
---@field client_secret? string the ${NAME} of the OAuth client secret
---@field sandbox? tai.ConsentSandbox
---@field breaks? string[] the fields that hold a line break, rendered visibly
---@field exposed? tai.ConsentExposure[] secrets put where others can read them
---@field proposed? string[] a model proposed it: what it asks for beyond the default policy
---@field runtime? string[] env names that change what the server's runtime runs

---@class tai.ConsentVar
---@field name string
---@field value? string the value when shown
---@field shown boolean false for a secret's value and every header's
---@field from? string the ${…} references the value is built from

---@class tai.ConsentSandbox
---@field line string what it lets the server do, in one line
---@field loose boolean the server runs with all of the person's rights
---@field off boolean the entry says sandbox = false
---@field notes? string[] what the policy left out, and far grants

---@class tai.ConsentExposure
---@field name string the ${…} name
---@field kind string "a vault secret" or "a credential"
---@field query boolean in the URL's query rather than on the command line
---@field shell? string the env variable a shell script reads it through
---@field env_name string the name to pass it under in env instead

---@class tai.mcp.AddReport
---@field servers tai.mcp.ServerOutcome[]
---@field notes? tai.Note[]

---A registered server, as tai.mcp.list shows it.
---@class tai.mcp.ServerInfo
---@field name string
---@field transport "stdio"|"http"
---@field target string the argv or URL, secrets redacted
---@field source string
---@field profiles string[] the profiles it is enabled for
---@field enabled boolean for the current profile
---@field tools integer listed (cached)
---@field granted integer
---@field offered integer offered to the current profile
---@field withheld integer
---@field removed integer
---@field connected boolean
---@field prompts integer prompts listed (cached): /NAME:PROMPT runs one
---@field withholding? string why none of its tools or prompts is offered: its instructions changed, and how to grant them
---@field words string[] the argv or URL, one word each, for tai.term.words
---@field secret_in_argv string[] ${…} names of secrets on the command line or in the URL
---@field login? string the OAuth login state of an http server
---@field oauth? string its login settings
---@field host? string an http server's host that is not plain ASCII, with its ASCII form (and a warning when it mixes scripts)
---@field sandbox? string what the sandbox lets a stdio server do, in one line, or that it is off
---@field sandbox_off? boolean the entry turns the sandbox off (sandbox = false)
---@field unsandboxed? boolean it runs with all of your rights: its entry turns the sandbox off, or no sandbox can run here

---A tool of a registered server.
---@class tai.mcp.ToolInfo
---@field name string the bridged name
---@field server string
---@field tool string the server's own name for it
---@field description string the granted one
---@field state "granted"|"withheld"|"removed"
---@field offered boolean
---@field reason? string

---One prompt of a registered server (tai.mcp.prompts).
---@class tai.mcp.PromptInfo
---@field server string
---@field name string the server's name for it: /server:name runs it
---@field title? string
---@field description? string
---@field arguments? tai.mcp.PromptArgument[]
---@field state "granted"|"withheld"
---@field offered boolean it can run now
---@field reason? string why it cannot

---@class tai.mcp.PromptArgument
---@field name string
---@field title? string
---@field description? string
---@field required? boolean

---A rendered prompt (tai.mcp.prompt): messages for tai.chat's messages option.
---@class tai.mcp.PromptTurn
---@field server string
---@field name string
---@field description string
---@field messages tai.Message[]

---A server's instructions for the model (tai.mcp.instructions).
---@class tai.mcp.Instructions
---@field server string
---@field text string what the model is sent (bounded, redacted), or, withheld, what the server gives now
---@field state "granted"|"withheld"
---@field reason? string

---@class tai.mcp.ImportReport
---@field files tai.mcp.ImportedFile[]

---@class tai.mcp.ImportedFile
---@field path string
---@field report tai.mcp.AddReport
---@field error? string the file could not be read or normalized

---@class tai.mcp.ImportArgs
---@field client? "claude-desktop"|"claude-code"|"cursor"|"vscode"|"codex"|"gemini" read its config files at their documented places
---@field path? string or read this file

---@class tai.mcp.LoginArgs
---@field server string a registered http server
---@field profile? string enable it for this profile (default: the current one)
---@field client_id? string a client id registered with the provider by hand
---@field client_secret? string that client's secret, as a ${NAME} vault reference
---@field client_metadata_url? string an https client ID metadata document URL
---@field callback_port? integer fixes the loopback redirect's port

---What the GitHub resolver makes of a repository.
---@class tai.mcp.Resolution
---@field entry tai.Entry
---@field notes tai.Note[]
---@field pass "deterministic"|"subagent"
---@field file string where the entry was read
---@field line integer
---@field via string how it was read and why it won
---@field origin string one line naming the pass, the file and the line

---One server of a repository that offers several.
---@class tai.mcp.RepoServer
---@field name string
---@field url string the URL that resolves it (a github.com/…/tree/<ref>/<folder> URL or a remote's)
---@field way string its way to run, when the README shows it; else ""

---The repository a GitHub URL names.
---@class tai.mcp.GitHubSource
---@field owner string
---@field repo string
---@field ref string
---@field path string
---@field url string
---@field id string

---A tool as an MCP server lists it (secrets redacted).
---@class tai.mcp.ServerTool
---@field name string
---@field description? string
---@field inputSchema? table
---@field unreadable? string why a definition too deeply nested could not be converted

-- Objects -----------------------------------------------------------------

---The severity of a server's log message, least severe first.
---@alias tai.mcp.LogLevel "debug"|"info"|"notice"|"warning"|"error"|"critical"|"alert"|"emergency"

---One log message a server sent.
---@class tai.mcp.LogEntry
---@field time string when tai received it (RFC 3339)
---@field level tai.mcp.LogLevel|string its level as sent
---@field logger? string what logged it, when the server says
---@field text string its data (a string as sent, else JSON), redacted and cut at 2048 bytes
---@field cut? integer the text's length before it was cut, when it was

---A server's log: the newest 500 messages at most (256 KiB of text).
---@class tai.mcp.Log
---@field entries tai.mcp.LogEntry[] oldest first, at or above level
---@field kept integer messages kept, whatever their level
---@field dropped integer messages no longer kept (evicted by newer ones, or malformed)
---@field level? tai.mcp.LogLevel the level asked for
---@field set boolean the server was asked to log at level (logging/setLevel)
---@field note? string why it was not: the server does not declare logging

---@class tai.mcp.LogArgs
---@field server string a registered server
---@field level? tai.mcp.LogLevel ask the server to log at this level and above, and show only those

---A session with an MCP server, from tai.mcp.connect. Closed by
---client:close(), when tai exits, or when the script drops it.
---@class tai.mcp.client
local client = {}

---Lists the server's tools that the entry's allow and deny let through.
---@return tai.mcp.ServerTool[]? tools
---@return string? err
function client:tools() end

---Calls a tool of the server; a tool that ran and failed is a result with isError.
---@param tool string
---@param args? table the tool's named arguments
---@return tai.ToolResult? result
---@return string? err a JSON-RPC error, a timeout or a closed session
function client:call(tool, args) end

---@return true? ok
---@return string? err
function client:ping() end

---@return true? ok
---@return string? err
function client:close() end

---The server's name and version and the protocol version agreed.
---@return {name: string, version: string, protocol: string}
function client:info() end

---What the server logged in this session (redacted, never given to a
---model); with level, asks the server to log at level and above first.
---@param level? tai.mcp.LogLevel
---@return tai.mcp.Log? log
---@return string? err
function client:log(level) end

---A line editor, from tai.term.readline.
---@class tai.readline
local readline = {}

---Reads one line; a bracketed paste is one line however many it holds.
---opts.escape makes an Esc pressed alone cancel the line, as Ctrl-C does.
---@param prompt? string default "> "
---@param opts? {escape?: boolean}
---@return string? line
---@return "more"|"interrupt"|"eof"|string? status "more": ended with Ctrl-J or Alt-Enter for a further line
function readline:read(prompt, opts) end

---Reads one key without Enter (type-ahead discarded first): a printable
---character, "enter", or "" for any other key.
---@param prompt? string default "? "
---@return string? key
---@return "interrupt"|"eof"|"not a terminal"|string? err
function readline:key(prompt) end

---Throws away what was typed ahead and what is typed until the keyboard
---rests 0.4 s.
---@return true? ok
---@return "interrupt"? err
function readline:discard() end

---Adds an entry to the history (a multi-line one is recalled whole).
---@param line string
---@return true? ok
---@return string? err
function readline:add_history(line) end

---Bracketed paste off until the next read (before a program takes the terminal).
function readline:suspend() end

---While on (a turn or a !command runs), keys reach tai as typed and Esc
---pressed alone stops the running command as Ctrl-C does; off restores
---the terminal.
---@param on boolean
function readline:watch_escape(on) end

---tai.term.read_hidden with the escape watch paused meanwhile, as read
---pauses it: a line typed without echo.
---@param prompt string
---@return string? text
---@return string? err "interrupt" for Ctrl-C
function readline:read_hidden(prompt) end

function readline:close() end

---Redaction of streamed text, from tai.vault.redactor. Both methods raise
---when the vault's secrets cannot be read.
---@class tai.redactor
local redactor = {}

---Returns the text safe to show now; a tail that could begin a secret is held back.
---@param delta string
---@return string
function redactor:push(delta) end

---Returns what push held back.
---@return string
function redactor:flush() end

-- The module ----------------------------------------------------------------

---The tai module: a global, and require("tai").
---@class tai
tai = {}

---tai's version.
---@type string
tai.version = ""

---The current profile's name.
---@type string
tai.profile = ""

---The approval mode of tool calls (--auto, --yolo).
---@type "interactive"|"auto"|"yolo"
tai.mode = "interactive"

---The operating system: "linux", "darwin", …
---@type string
tai.os = ""

---Tells the person something: "info" (the default) on stdout, "warn" and
---"error" on stderr (red when colour is on). The REPL says every notice
---and refusal through it: assign a function of your own in init.lua to
---route them elsewhere, as Neovim's vim.notify.
---@param text string
---@param level? "info"|"warn"|"error"
function tai.notify(text, level) end

---Calls a native tool through the same dispatch, audit and redaction as
---the model (without asking: the person's own script calls).
---opts.on_output(text) is called with the tool's output as it comes (the
---shell's stdout and stderr), redacted; the result still holds it whole.
---@param tool string
---@param args? table
---@param opts? {on_output?: fun(text: string)}
---@return tai.ToolResult? result
---@return string? err
function tai.call(tool, args, opts) end

---Lists the tools registered with the engine; origin says where each comes from.
---@return tai.ToolInfo[]? tools
---@return string? err
function tai.tools() end

---Adds (or replaces) a native tool written in Lua: the model, tai.call and
---the MCP server all see it.
---@param spec tai.ToolSpec
function tai.tool(spec) end

---Runs one agent turn on the conversation opts names.
---@param message string
---@param opts? tai.ChatOptions
---@return string? text
---@return tai.ChatInfo|string info or the error
function tai.chat(message, opts) end

---Forgets the conversation opts names (profile, tools, system), or every one.
---@param opts? tai.ChatOptions
function tai.chat_reset(opts) end

---The conversation tai.chat keeps for opts, without the system prompt.
---@param opts? tai.ChatOptions
---@return tai.Message[]? messages
---@return string? err
function tai.chat_history(opts) end

---Replaces the conversation tai.chat keeps for opts.
---@param messages tai.Message[]
---@param opts? tai.ChatOptions
---@return true? ok
---@return string? err
function tai.chat_restore(messages, opts) end

---One stateless completion with the current profile and no tools.
---@param messages tai.CompleteMessage[]
---@param opts? {on_retry?: fun(notice: tai.RetryNotice)}
---@return string? text
---@return tai.CompleteInfo|string info or the error
function tai.complete(messages, opts) end

---Sets the functions consent and questions are asked through; nil removes them.
---@param prompter tai.Prompter?
function tai.prompter(prompter) end

---Lets shell commands see these credential-looking environment variables.
---@param ... string
---@return true? ok
---@return string? err
function tai.pass_env(...) end

---Adds (or replaces) the REPL command /name.
---@param name string
---@param fn fun(rest: string, words: string[]) # runs it with the text after the name, and that text split on blanks
---@param help? string
---@param complete? fun(word: string, line: string): string[] # candidates for the word under the cursor
function tai.command(name, fn, help, complete) end

---The REPL commands, sorted by name.
---@return tai.Command[]
function tai.commands() end

---The models the current profile's provider lists.
---@return string[]? names
---@return string? err
function tai.models() end

---Sets this session's model (not stored).
---@param name string
---@return tai.Profile? profile
---@return string? err
function tai.model(name) end

---The model families a profile of provider ("openai" or "anthropic") that
---names no model picks from, in order: the newest model of the first family
---the provider lists is used, and kept in the vault. A family is one word of
---a model's name. With a list it replaces them; it returns the list in force.
---@param provider string
---@param families? string[]
---@return string[] families
function tai.model_families(provider, families) end

---A rough token count.
---@param text string|tai.Message[]
---@return integer
function tai.estimate_tokens(text) end

---Unified-diff hunks from old to new.
---@param old string
---@param new string
---@param context? integer lines of context (default 3)
---@return string
function tai.diff(old, new, context) end

---The working directory of the file and shell tools.
---@return string? path
---@return string? err
function tai.cwd() end

---At most max bytes (default 1 MiB) of a regular file; anything else is refused unopened.
---@param path string
---@param max? integer
---@return string? text
---@return boolean|string truncated or the error
function tai.read_text(path, max) end

---What path is, without opening it (symbolic links followed); nil when it does not exist.
---@param path string
---@return "file"|"dir"|"other"|nil
function tai.file_kind(path) end

---Whether path may speak for the person: owned by them (or root), in a folder owned by them (or root) that no other user can write to.
---@param path string
---@return boolean trusted
---@return string? why not
function tai.file_trusted(path) end

---A folder's entries, sorted; folders end with /.
---@param path string
---@return string[]? names
---@return string? err
function tai.list_dir(path) end

---Serves every native tool (Lua tools included) plus chat and completions
---over MCP until Ctrl-C or SIGTERM; every call a client makes runs
---without asking.
---@param opts tai.ServeOptions
---@return true? ok
---@return string? err
function tai.serve(opts) end

-- tai.help ------------------------------------------------------------------

---The manual: the help topics shipped in the binary, each replaced or
---added to by a NAME.txt in the help/ folder of your config folder.
tai.help = {}

---@class tai.HelpTopic
---@field name string what /help NAME takes
---@field summary string the topic's first line
---@field path string where it was read from

---@return tai.HelpTopic[]? topics sorted by name
---@return string? err
function tai.help.topics() end

---@param name string
---@return string? text the whole topic
---@return string? err
function tai.help.topic(name) end

---@class tai.HelpMatch
---@field topic string
---@field line integer from 1
---@field text string

---Lines of every topic holding word, case-insensitively.
---@param word string
---@return tai.HelpMatch[]? matches
---@return string? err
function tai.help.search(word) end

-- tai.json ------------------------------------------------------------------

tai.json = {}

---@param value any
---@param opts? {indent?: string}
---@return string? text
---@return string? err
function tai.json.encode(value, opts) end

---@param text string
---@return any value
---@return string? err
function tai.json.decode(text) end

---Marks t as a JSON object ({} even when empty).
---@generic T: table
---@param t? T
---@return T
function tai.json.object(t) end

---Marks t as a JSON array ([] even when empty).
---@generic T: table
---@param t? T
---@return T
function tai.json.array(t) end

---Stands for JSON null inside tables.
---@type userdata
tai.json.null = nil

-- tai.toml ------------------------------------------------------------------

tai.toml = {}

---Tables decode as objects, arrays as arrays, dates and times as their TOML text.
---@param text string
---@return table? value
---@return string? err
function tai.toml.decode(text) end

-- tai.vault -----------------------------------------------------------------

---The outcome words tai reports, declared once in Go (vault.Outcomes):
---of a tool call (its audit entry and a turn's tool event), of the
---vault's own audit entries, and of a server an add or an import met.
---@class tai.outcome
tai.outcome = {}

---The call ran and its result is no error.
tai.outcome.OK = "ok"

---The call ran and failed, or its result is an error.
tai.outcome.ERROR = "error"

---The call was not approved, so it did not run.
tai.outcome.DENIED = "denied"

---The call was stopped (Ctrl-C, Esc, a timeout).
tai.outcome.CANCELLED = "cancelled"

---The model called a tool that does not exist.
tai.outcome.UNKNOWN = "unknown"

---A permission rule was kept.
tai.outcome.GRANTED = "granted"

---A secret, record, rule or server was deleted.
tai.outcome.DELETED = "deleted"

---A server was verified and stored.
tai.outcome.ADDED = "added"

---A server of that name is registered already.
tai.outcome.SKIPPED = "skipped"

---A server was not stored, for a reason given.
tai.outcome.REFUSED = "refused"

tai.vault = {}

---Stores a secret; the warning says a value too short to be redacted.
---@param name string
---@param value string
---@param meta? table
---@return true? ok
---@return string? warning_or_err
function tai.vault.secret_set(name, value, meta) end

---@param name string
---@return string? value
---@return table|string meta or the error
function tai.vault.secret_get(name) end

---@return tai.SecretInfo[]? secrets
---@return string? err
function tai.vault.secret_list() end

---@param name string
---@return true? ok
---@return string? err
function tai.vault.secret_delete(name) end

---@param text string
---@param meta? table
---@return string? id
---@return string? err
function tai.vault.record_put(text, meta) end

---@param id string
---@param offset? integer
---@param length? integer 0: the rest
---@return string? text
---@return tai.RecordInfo|string info or the error
function tai.vault.record_get(id, offset, length) end

---Newest first.
---@param n? integer default 20
---@return tai.RecordInfo[]? records
---@return string? err
function tai.vault.record_list(n) end

---@param id string
---@return true? ok
---@return string? err
function tai.vault.record_delete(id) end

---The last n audit entries (default 20), of kind when given.
---@param n? integer
---@param kind? string
---@return tai.AuditEntry[]? entries
---@return string? err
function tai.vault.audit_tail(n, kind) end

---Checks the audit trail's hash chain; the note says it records an unclean shutdown.
---@return integer? count
---@return string? note_or_err
function tai.vault.audit_verify() end

---Seals the vault with the current passphrase (TAI_VAULT_PASSPHRASE or a prompt).
---With opts.short, a passphrase under 8 characters seals only when short(n) returns true.
---@param opts? {short?: fun(n: integer): boolean}
---@return true? ok
---@return string? err
function tai.vault.seal(opts) end

---Unseals the vault with its present passphrase (TAI_VAULT_PASSPHRASE or a prompt):
---checks the audit trail under the seal key, then stores secrets and headers in the clear.
---@return integer? verified the audit entries verified
---@return string? err
function tai.vault.unseal() end

---@return boolean? sealed
---@return string? err
function tai.vault.sealed() end

---@return string? path
---@return string? err
function tai.vault.path() end

---Every known secret value replaced by [REDACTED:name].
---@param text string
---@return string? text
---@return string? err
function tai.vault.redact(text) end

---@return tai.redactor? r
---@return string? err
function tai.vault.redactor() end

---Whether a variable's or a config key's name says it holds a credential
---(GITHUB_TOKEN, clientSecret, GITHUB_PAT; not MEMORY_FILE_PATH): tai's one
---rule, by whole words, that the shell's environment, the consent screen
---and key_env read too.
---@param name string
---@return boolean
function tai.vault.credential_name(name) end

---The words that mark a variable's name as a credential's, by which
---tai.vault.credential_name, the shell's environment, redaction and the
---consent screen judge names: "*TOKEN*" marks a name one of whose words
---holds TOKEN, a bare "PAT" one with the whole word PAT (so PATH is none).
---With a list it replaces the list; it returns the list in force.
---@param words? string[]
---@return string[] words the list in force
function tai.vault.credential_words(words) end

-- tai.mcp -------------------------------------------------------------------

tai.mcp = {}

---Registers every server in source: consent, a live check, then stored.
---@param args tai.mcp.AddArgs
---@return tai.mcp.AddReport? report
---@return string? err
function tai.mcp.add(args) end

---@return tai.mcp.ServerInfo[]? servers
---@return string? err
function tai.mcp.list() end

---Enables a server for a profile; returns the profile's name.
---@param args {server: string, profile?: string}
---@return string? profile
---@return string? err
function tai.mcp.enable(args) end

---Disables a server for a profile; returns the profile's name.
---@param args {server: string, profile?: string}
---@return string? profile
---@return string? err
function tai.mcp.disable(args) end

---Removes a server (asks first).
---@param args {server: string}
---@return true? ok
---@return string? err
function tai.mcp.remove(args) end

---The tools of one registered server, or of all.
---@param args? {server?: string}
---@return tai.mcp.ToolInfo[]? tools
---@return string? err
function tai.mcp.tools(args) end

---Calls a registered server's tool through the same audit, redaction and spill as tai.call.
---@param args {server: string, tool: string, args?: table}
---@return tai.ToolResult? result
---@return string? err
function tai.mcp.call(args) end

---Grants a withheld tool, prompt or the server's instructions (tool = "instructions"), or every one of the server; asks a person.
---@param args {server: string, tool?: string}
---@return string[]? granted
---@return string? err
function tai.mcp.grant(args) end

---The cached prompts of the servers enabled for the profile (or of one); never starts a server.
---@param args? {server?: string}
---@return tai.mcp.PromptInfo[]? prompts
---@return string? err
function tai.mcp.prompts(args) end

---Renders a granted prompt (prompts/get) with its arguments.
---@param args {server: string, name: string, args?: table<string, string>}
---@return tai.mcp.PromptTurn? prompt
---@return string? err
function tai.mcp.prompt(args) end

---The values a prompt's argument may take (completion/complete); {} when the server offers none.
---@param args {server: string, prompt: string, argument: string, value?: string, context?: table<string, string>}
---@return string[]? values
---@return string? err
function tai.mcp.complete_argument(args) end

---The instructions of the servers enabled for profile (default: the current one).
---@param args? {profile?: string}
---@return tai.mcp.Instructions[]? instructions
---@return string? err
function tai.mcp.instructions(args) end

---Lets a stdio server's sandbox read more files or folders (absolute, or from ~): adds them to the entry's sandbox.read after asking a person again.
---@param args {server: string, paths: string[]}
---@return string? said
---@return string? err
function tai.mcp.allow(args) end

---@class tai.mcp.ResourceList
---@field server string
---@field resources? {uri: string, name: string, title?: string, description?: string, mimeType?: string, size?: integer}[]
---@field templates? {uriTemplate: string, name: string, title?: string, description?: string, mimeType?: string}[]
---@field more? boolean the server listed more than were kept

---The resources and URI templates of a server enabled for the profile;
---quiet = true never asks anything (a server whose start needs consent is an error).
---@param args {server: string, quiet?: boolean}
---@return tai.mcp.ResourceList? list
---@return string? err
function tai.mcp.resources(args) end

---Reads one resource of an enabled server, audited, redacted and spilled as
---mcp_read_resource; the person's own read, not asked about again.
---@param args {server: string, uri: string}
---@return {text: string, isError: boolean}? result
---@return string? err
function tai.mcp.read(args) end

---Registers every server of another client's config files, or of one file.
---@param args tai.mcp.ImportArgs
---@return tai.mcp.ImportReport? report
---@return string? err
function tai.mcp.import(args) end

---Logs in to a registered http server with OAuth (opens the browser,
---$BROWSER when set, and prints the URL) and enables it for the profile.
---@param args tai.mcp.LoginArgs
---@return string? message
---@return string? err
function tai.mcp.login(args) end

---What a registered server logged (notifications/message) through this
---tai, redacted; never given to a model. With level, asks the server to
---log at level and above first (when it declares logging).
---@param args tai.mcp.LogArgs
---@return tai.mcp.Log? log
---@return string? err
function tai.mcp.log(args) end

---Sets, with n, how many sampling requests each server may make a minute
---(1 to 1000); returns the limit in force (default 10). More are refused
---at once, with a note on the call's line.
---@param n? integer
---@return integer limit
function tai.mcp.sampling_limit(n) end

---Set it to a function to answer every registered server's elicitations
---from the script (in the default mode; --auto, --yolo and served sessions
---decline them); tai opens a URL it accepts. false (the default): the
---person answers, at a terminal.
---@type false|fun(request: tai.Elicitation): tai.ElicitAnswer|"accept"|"decline"|"cancel"
tai.mcp.on_elicit = false

---How many prompts of one server become /SERVER:PROMPT commands (the first
---by name); /help says when a server lists more.
---@type integer
tai.mcp.MAX_PROMPTS = 100

---Opens a session on an entry (no vault row needed). opts.on_elicit
---answers the server's elicitations (and declares the capability); tai
---opens no URL for it.
---@param entry tai.Entry
---@param opts? {on_elicit?: fun(request: tai.Elicitation): tai.ElicitAnswer|"accept"|"decline"|"cancel"}
---@return tai.mcp.client? client
---@return string? err
function tai.mcp.connect(entry, opts) end

---The canonical entries and notes of a pasted config, without storing or starting anything.
---@param text string
---@param name? string names a bare entry
---@return tai.Entry[]? entries
---@return tai.Note[]|string notes or the error
function tai.mcp.normalize(text, name) end

---The entry with ${…} resolved (project folder, environment, vault
---secrets) and the names nothing resolved.
---@param entry tai.Entry
---@return tai.Entry entry
---@return string[] missing
function tai.mcp.expand(entry) end

---Splits text into words as a POSIX shell would.
---@param text string
---@return string[]? words
---@return string? err
function tai.mcp.split(text) end

---What the GitHub resolver makes of a repository, neither verified nor stored.
---@param url string
---@return tai.mcp.Resolution? resolution
---@return string? err
---@return tai.mcp.RepoServer[]? servers when the repository offers several: pick one and resolve its url
function tai.mcp.resolve(url) end

---The repository a GitHub URL names; nil alone when text is not a GitHub URL.
---@param text string
---@return tai.mcp.GitHubSource? source
---@return string? err
function tai.mcp.github(text) end

-- tai.profiles --------------------------------------------------------------

---The sandbox tai starts stdio servers and shell commands in.
tai.sandbox = {}

---The folders no sandbox grants: shell commands cannot read them, and an
---entry whose sandbox grants one (or a folder holding one) is refused. With
---a list it replaces the list (each folder absolute or under ~). The vault's
---folder is never granted, listed or not.
---@param folders? string[]
---@return string[] folders the list in force
function tai.sandbox.deny(folders) end

---The environment variables that change what a runtime or launcher runs
---(NODE_OPTIONS, PYTHONPATH, LD_PRELOAD, npm_config_*; a name ending in *
---stands for every name it begins): a server entry setting one is warned
---about on the consent screen, and one a model adds with nobody asked is
---refused. With a list it replaces the list; it returns the list in force.
---@param names? string[]
---@return string[] names the list in force
function tai.sandbox.runtime_env(names) end

---The Landlock ABI version the sandbox uses here, or nil and why there is
---none: then stdio servers and shell commands run with all of your rights,
---and an entry whose sandbox is required does not start.
---@return integer? abi
---@return string? why
function tai.sandbox.available() end

---Whether the model's shell commands run outside the sandbox for the rest
---of this process (its own sessions; served ones keep it). true lifts it,
---false puts it back; it returns what is in force. /sandbox off and
---/sandbox on call it. The lua tool the model calls cannot reach it.
---@param off? boolean
---@return boolean? off
---@return string? err
function tai.sandbox.session_off(off) end

tai.profiles = {}

---@return tai.ProfileRow[]? profiles
---@return string? err
function tai.profiles.list() end

---@return tai.Profile? profile
---@return string? err
function tai.profiles.current() end

---@param name string
---@return tai.Profile? profile
---@return string? err
function tai.profiles.get(name) end

---Switches this session to the profile.
---@param name string
---@return tai.Profile? profile
---@return string? err
function tai.profiles.use(name) end

---Stores a profile.
---@param profile tai.Profile
---@return true? ok
---@return string? err
function tai.profiles.save(profile) end

---@param name string
---@return true? ok
---@return string? err
function tai.profiles.delete(name) end

---A provider a profile may name.
---@class tai.Provider
---@field name string
---@field base_url string the default base URL
---@field key_env? string the variable the environment's profile reads the key from, in this order
---@field takes ("text"|"images"|"audio")[] what its API takes in a message
---@field picks_by_family boolean a profile naming no model picks one by tai.model_families

---The providers a profile may name, in the order the environment is read.
---@return tai.Provider[] providers
function tai.profiles.providers() end

-- tai.conversations -----------------------------------------------------------

tai.conversations = {}

---@param c tai.ConversationSave
---@return string? id
---@return string? err
function tai.conversations.save(c) end

---Newest first.
---@param n? integer default 20
---@param dir? string only those of this folder
---@return tai.Conversation[]? conversations
---@return string? err
function tai.conversations.list(n, dir) end

---@param id string
---@return tai.Conversation? conversation with its messages
---@return string? err
function tai.conversations.get(id) end

---@param id string
---@return true? ok
---@return string? err
function tai.conversations.delete(id) end

---Marks it used now in dir (default tai.cwd()): tai -c continues the one last used in a folder.
---@param id string
---@param dir? string
---@return true? ok
---@return string? err
function tai.conversations.use(id, dir) end

-- tai.permissions -------------------------------------------------------------

tai.permissions = {}

---The rules of dir (default tai.cwd()); "*" lists every folder's.
---@param dir? string
---@return tai.Permission[]? rules
---@return string? err
function tai.permissions.list(dir) end

---Keeps rule for its folder. A rule with sandbox = false runs the commands
---it covers outside the sandbox: ok then comes with a note saying it trusts
---what the model can write in that folder.
---@param rule tai.PermissionArgs
---@return true? ok
---@return string? err the error, or beside ok the note
function tai.permissions.add(rule) end

---@param rule tai.PermissionArgs
---@return true? ok
---@return string? err
function tai.permissions.remove(rule) end

---The kept rule that covers consent in tai.cwd(); with rule, whether that rule would.
---@param consent tai.Consent
---@param rule? {tool: string, prefix?: string}
---@return tai.Permission?
function tai.permissions.allows(consent, rule) end

---The prefix a rule for this shell call would keep ("git status"), nil when none can cover it.
---@param consent tai.Consent
---@return string?
function tai.permissions.suggest(consent) end

-- tai.media -----------------------------------------------------------------

tai.media = {}

---How many images, audio and blobs of tool results were shown in this conversation.
---@return integer n
function tai.media.count() end

---Writes the Nth binary shown to a file (0600) in a folder private to this tai in the
---temporary folder (removed when tai exits), named like image-2.png, and opens it when
---there is a display; a type that can run script (SVG, HTML) or is not an image, audio
---or PDF is only saved, and why says so.
---@param n integer
---@return string? path
---@return boolean|string opened_or_err
---@return string? why
function tai.media.open(n) end

-- tai.term ------------------------------------------------------------------

tai.term = {}

---@param stream? "stdout"|"stderr"|"stdin" default stdout
---@return boolean
function tai.term.isatty(stream) end

---isatty() and NO_COLOR unset.
---@return boolean
function tai.term.color() end

---Writes s to stdout, no newline.
---@param s string
function tai.term.write(s) end

---Writes s to stderr, no newline.
---@param s string
function tai.term.ewrite(s) end

---Writes s and a newline to stderr.
---@param s string
function tai.term.warn(s) end

---Reads all of stdin (at most 8 MiB).
---@return string? text
---@return string? err
function tai.term.read_stdin() end

---The REPL's history file.
---@return string
function tai.term.history_file() end

---Like pcall, with a traceback in err; Ctrl-C stops fn (err is "interrupted").
---@param fn function
---@param ... any
---@return boolean ok
---@return any ... fn's results, or the error
function tai.term.protect(fn, ...) end

---Stops the innermost protected run as Ctrl-C would; false when none runs.
---@return boolean
function tai.term.interrupt() end

---The columns of the terminal, 0 when stream is not one.
---@param stream? "stdout"|"stderr"
---@return integer
function tai.term.width(stream) end

---s made safe to show: control characters, invalid UTF-8 and bidi
---overrides rendered visibly; with oneline also newline, tab and invisible characters.
---@param s string
---@param oneline? boolean
---@return string
function tai.term.clean(s, oneline) end

---s rendered for a person to approve: first and last lines of a long one,
---runs of blanks counted; note says what was left out ("" when nothing).
---@param s string
---@param lines integer
---@param bytes integer
---@return string shown
---@return string note
function tai.term.fold(s, lines, bytes) end

---Each word on lines of its own, shell-quoted and cleaned, a long one folded at width.
---@param list string[]
---@param width? integer
---@return string[] lines
function tai.term.words(list, width) end

---@param opts? tai.ReadlineOptions
---@return tai.readline? rl
---@return string? err
function tai.term.readline(opts) end

---Reads a line typed on the terminal without echo (a secret's value);
---err is "interrupt" for Ctrl-C.
---@param prompt string
---@return string? text
---@return string? err
function tai.term.read_hidden(prompt) end
