//! The commands that talk to the resident engine: the hook (`sens hook`), the
//! query tools' stdio MCP server (`sens mcp`), `approve`, `reject` and
//! `status`. All but `status` start the engine when none answers; `status`
//! only asks a running one.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail, ensure};
use sens_engine::mcp;
use sens_engine::session::checkpoint::Checkpoints;
use serde_json::Value;

use super::protocol::{Reply, Request, receive, send};
use super::{Project, open_own, shell_quoted};
use crate::invocation::Invocation;
use crate::ledger::LedgerLine;

/// Exit code of a command hook that blocks (the CLI shows its stderr).
const BLOCKING_EXIT: u8 = 2;
/// Kept back from the hook's timeout, so the fail-closed answer reaches the CLI
/// before it gives up on the hook.
const HOOK_MARGIN: Duration = Duration::from_secs(2);
/// How long the human commands wait for the engine (its first index included).
const COMMAND_LIMIT: Duration = Duration::from_secs(300);
/// How often a starting engine's socket is tried.
const CONNECT_POLL: Duration = Duration::from_millis(20);
/// Decisions `status` shows.
const LAST_DECISIONS: usize = 5;

/// How to start the engine of a project when none answers.
#[derive(Debug, Clone)]
pub struct Launch {
    pub project: Project,
    /// The rules file the engine judges with (`sens --rules`).
    pub rules: Option<PathBuf>,
    pub idle: Duration,
    /// The binary that starts it (`serve`) and that messages name.
    pub invocation: Invocation,
}

/// `sens hook`: the hook input on stdin, the engine's answer on stdout. When
/// the engine cannot be reached in time the answer is the CLI's blocking form
/// (exit 2, the reason on stderr): never an approval, never a hang.
pub fn hook(
    dir: Option<&Path>,
    rules: Option<PathBuf>,
    invocation: &Invocation,
    timeout: Duration,
    idle: Duration,
) -> ExitCode {
    let deadline = Instant::now() + answer_budget(timeout);
    let answered = project_dir(dir).and_then(|dir| {
        let launch = Launch {
            project: Project::new(&dir)?,
            rules,
            idle,
            invocation: invocation.clone(),
        };
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the hook input on stdin")?;
        let input: Value =
            serde_json::from_str(&text).context("the hook input on stdin is not JSON")?;
        request(&launch, &Request::Hook { input }, deadline)
    });
    match answered {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{}", unreachable_message(invocation, dir, &err));
            ExitCode::from(BLOCKING_EXIT)
        }
    }
}

/// `sens mcp DIR`: the query tools as a stdio MCP server, the transport
/// Claude Code starts for a `.mcp.json` server: one JSON-RPC message per line on
/// stdin, each answered by the resident engine's session (so from its index,
/// and as a ledger line), the response one line on stdout. Ends with stdin.
pub fn mcp(launch: &Launch) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.context("cannot read a message on stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let (dir, invocation) = (&launch.project.root, &launch.invocation);
        if let Some(response) = mcp_answer(&line, dir, invocation, |message| {
            request(launch, message, Instant::now() + COMMAND_LIMIT)
        }) {
            send(&mut stdout, &response).context("cannot write a response on stdout")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The response to one line of the MCP client, `ask`ing the engine: `None` for
/// notifications alone. A line that is not JSON, or an engine out of reach, is
/// a JSON-RPC error (the latter, for each request of a batch, saying how to
/// start or disable Sens).
fn mcp_answer(
    line: &str,
    dir: &Path,
    invocation: &Invocation,
    ask: impl FnOnce(&Request) -> anyhow::Result<Value>,
) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(err) => {
            return Some(mcp::error(
                Value::Null,
                mcp::PARSE_ERROR,
                &format!("the message is not JSON: {err}"),
            ));
        }
    };
    let request = Request::Mcp {
        message: message.clone(),
    };
    match ask(&request) {
        Ok(Value::Null) => None,
        Ok(response) => Some(response),
        Err(err) => {
            let why = unreachable_message(invocation, Some(dir), &err);
            mcp::answer_each(&message, |_, id| mcp::error(id, mcp::INTERNAL_ERROR, &why))
        }
    }
}

/// The folder the hook serves: DIR, else the CLI's `CLAUDE_PROJECT_DIR`.
fn project_dir(dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    match dir {
        Some(dir) => Ok(dir.to_path_buf()),
        None => std::env::var_os("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .context("no project folder: give DIR, or run the hook from Claude Code (which sets CLAUDE_PROJECT_DIR)"),
    }
}

/// The time the hook may spend: the CLI's timeout less a margin, at least 1 s.
fn answer_budget(timeout: Duration) -> Duration {
    timeout
        .saturating_sub(HOOK_MARGIN)
        .max(Duration::from_secs(1))
}

fn unreachable_message(invocation: &Invocation, dir: Option<&Path>, err: &anyhow::Error) -> String {
    let dir = dir.map_or_else(|| "DIR".to_string(), shell_quoted);
    format!(
        "Sens blocked this because its engine could not answer ({err:#}). To see why, start the \
         engine in a terminal with `{}`; to disable Sens, run `{}`.",
        invocation.command(&format!("serve {dir}")),
        invocation.command(&format!("uninstall {dir}")),
    )
}

/// Sends `request` to the project's engine, starting it if none answers, and
/// returns its answer. A connection closed without a reply (the engine exited
/// for idleness just then, or was killed) is tried once more.
pub fn request(launch: &Launch, request: &Request, deadline: Instant) -> anyhow::Result<Value> {
    let mut failure = None;
    for _ in 0..2 {
        let stream = connect_or_start(launch, deadline)?;
        match exchange(&stream, request, deadline) {
            Ok(reply) => return reply.map_err(|err| anyhow!("the engine failed: {err}")),
            Err(err) => failure = Some(err),
        }
    }
    Err(failure.unwrap_or_else(|| anyhow!("no reply from the engine")))
}

fn exchange(stream: &UnixStream, request: &Request, deadline: Instant) -> anyhow::Result<Reply> {
    let left = deadline.saturating_duration_since(Instant::now());
    ensure!(!left.is_zero(), "the engine did not answer in time");
    stream.set_write_timeout(Some(left))?;
    stream.set_read_timeout(Some(left))?;
    send(&mut &*stream, request).context("sending the request to the engine")?;
    receive(&mut BufReader::new(stream)).context("reading the engine's answer")
}

fn connect_or_start(launch: &Launch, deadline: Instant) -> anyhow::Result<UnixStream> {
    let socket = launch.project.socket()?;
    if let Ok(stream) = UnixStream::connect(&socket) {
        return Ok(stream);
    }
    let mut engine = start(launch)?;
    loop {
        if let Ok(stream) = UnixStream::connect(&socket) {
            return Ok(stream);
        }
        // A successful exit is an engine that found another one serving.
        if let Some(status) = engine.try_wait()?.filter(|s| !s.success()) {
            bail!(
                "the engine exited ({status}) before it listened; its log is {}",
                launch.project.log().display()
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "the engine did not listen on {} in time; its log is {}",
                socket.display(),
                launch.project.log().display()
            );
        }
        std::thread::sleep(CONNECT_POLL);
    }
}

/// Starts `serve` detached (its own process group, its stderr appended
/// to `.sens/engine.log`), so it outlives the hook that started it.
fn start(launch: &Launch) -> anyhow::Result<Child> {
    let project = &launch.project;
    project.create_engine_dir()?;
    let log_path = project.log();
    let log = open_own(&log_path, OpenOptions::new().create(true).append(true))
        .with_context(|| format!("cannot open the engine's log {}", log_path.display()))?;
    let binary = &launch.invocation.exe;
    let mut command = Command::new(binary);
    command.args(&launch.invocation.prefix);
    if let Some(rules) = &launch.rules {
        command.arg("--rules").arg(rules);
    }
    command
        .arg("serve")
        .arg(&project.root)
        .arg("--idle-secs")
        .arg(launch.idle.as_secs().to_string())
        .current_dir(&project.root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start the engine ({})", binary.display()))
}

/// `sens approve DIR`: the project as it stands becomes the approved state.
pub fn approve(launch: &Launch) -> anyhow::Result<ExitCode> {
    let status = request(launch, &Request::Approve, Instant::now() + COMMAND_LIMIT)?;
    println!(
        "approved: {} is now the approved state (checkpoint {})",
        launch.project.root.display(),
        status["approved"]["number"]
    );
    Ok(ExitCode::SUCCESS)
}

/// `sens reject DIR`: after confirming (or `--yes`), the files are restored to
/// the approved state; the rejected state is kept under a ref.
pub fn reject(launch: &Launch, yes: bool) -> anyhow::Result<ExitCode> {
    let deadline = Instant::now() + COMMAND_LIMIT;
    let status = request(launch, &Request::Status, deadline)?;
    let unapproved = strings(&status["unapproved"]);
    if unapproved.is_empty() {
        println!("nothing to reject: the project is in its approved state");
        return Ok(ExitCode::SUCCESS);
    }
    println!("These files differ from the approved state:");
    for path in &unapproved {
        println!("  {}", escaped(path));
    }
    if !yes && !confirmed("Restore the approved state? [y/N] ")? {
        println!("nothing changed");
        return Ok(ExitCode::from(1));
    }
    let answer = request(launch, &Request::Reject, deadline)?;
    let kept = answer["kept"].as_str().unwrap_or("(nothing)");
    println!(
        "restored the approved state; the rejected one is kept as {kept} \
         (`git restore --source={kept} --worktree -- .` brings its files back)"
    );
    Ok(ExitCode::SUCCESS)
}

fn confirmed(question: &str) -> anyhow::Result<bool> {
    eprint!("{question}");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the answer on stdin")?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

/// `sens status DIR`: the engine process (asked only when running), the
/// approved point and the last decisions (from disk).
pub fn status(project: &Project, invocation: &Invocation) -> anyhow::Result<ExitCode> {
    let live = UnixStream::connect(project.socket()?)
        .ok()
        .map(|stream| {
            exchange(
                &stream,
                &Request::Status,
                Instant::now() + Duration::from_secs(10),
            )
        })
        .transpose()?
        .transpose()
        .map_err(|err| anyhow!("the engine failed: {err}"))?;
    print!("{}", status_text(project, invocation, live.as_ref())?);
    Ok(ExitCode::SUCCESS)
}

fn status_text(
    project: &Project,
    invocation: &Invocation,
    live: Option<&Value>,
) -> anyhow::Result<String> {
    let mut out = format!("project   {}\n", project.root.display());
    match live {
        Some(live) => {
            out.push_str(&format!("engine    running, pid {}\n", live["pid"]));
            out.push_str(&format!(
                "index     {} files, {} units (when the engine started)\n",
                live["index_files"], live["index_units"]
            ));
        }
        None => out.push_str("engine    not running (the next hook call starts it)\n"),
    }
    let approved = Checkpoints::open(&project.root)?.approved()?;
    out.push_str(&match approved {
        Some(c) => format!("approved  checkpoint {} ({})\n", c.number, c.commit),
        None => "approved  none yet (set at the first prompt)\n".to_string(),
    });
    if let Some(live) = live {
        if live["awaiting_human"] == Value::Bool(true) {
            let dir = shell_quoted(&project.root);
            out.push_str(&format!(
                "paused    awaiting your decision: {} or {}\n",
                invocation.command(&format!("approve {dir}")),
                invocation.command(&format!("reject {dir}")),
            ));
        }
        let unapproved = strings(&live["unapproved"]);
        out.push_str(&format!("unapproved {} files\n", unapproved.len()));
        for path in unapproved {
            out.push_str(&format!("  {}\n", escaped(&path)));
        }
        let pending = live["pending"].as_array().map_or(&[][..], Vec::as_slice);
        out.push_str(&format!("pending   {} findings\n", pending.len()));
        for finding in pending {
            out.push_str(&format!(
                "  {}:{} {} ({})\n",
                escaped(finding["new"]["file"].as_str().unwrap_or("?")),
                finding["new"]["line"],
                escaped(finding["new"]["name"].as_str().unwrap_or("?")),
                escaped(finding["rule"].as_str().unwrap_or("?")),
            ));
        }
    }
    let ledger = project.ledger();
    let (lines, unreadable) = readable_decisions(&ledger)?;
    out.push_str(&format!(
        "decisions {} in {}\n",
        lines.len(),
        ledger.display()
    ));
    if unreadable > 0 {
        out.push_str(&format!(
            "skipped   {unreadable} unreadable lines of the ledger (torn, not UTF-8, or not a \
             decision)\n"
        ));
    }
    for line in lines.iter().rev().take(LAST_DECISIONS).rev() {
        out.push_str(&format!(
            "  #{} {} {} {:?}\n",
            line.seq,
            line.event,
            line.tool.as_deref().map(escaped).unwrap_or_default(),
            line.verdict
        ));
    }
    Ok(out)
}

/// The decisions of the ledger at `path` that can be read, and how many
/// non-blank lines could not (a torn line, bytes that are not UTF-8): `status`
/// shows what it can rather than fail on a damaged ledger.
fn readable_decisions(path: &Path) -> anyhow::Result<(Vec<LedgerLine>, usize)> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => {
            return Err(err)
                .with_context(|| format!("cannot read the hook ledger {}", path.display()));
        }
    };
    let mut unreadable = 0;
    let mut lines = Vec::new();
    for line in bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.trim_ascii().is_empty())
    {
        match serde_json::from_slice(line) {
            Ok(line) => lines.push(line),
            Err(_) => unreadable += 1,
        }
    }
    Ok((lines, unreadable))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Agent-made text (file and tool names) for a terminal: control characters
/// escaped, so a name cannot move the cursor or recolour the screen.
fn escaped(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_hook_keeps_a_margin_of_its_timeout_but_at_least_a_second() {
        assert_eq!(
            answer_budget(Duration::from_secs(60)),
            Duration::from_secs(58)
        );
        assert_eq!(
            answer_budget(Duration::from_secs(2)),
            Duration::from_secs(1)
        );
    }

    fn sens() -> Invocation {
        Invocation {
            exe: "/home/p/.cargo/bin/sens".into(),
            prefix: Vec::new(),
        }
    }

    #[test]
    fn the_unreachable_message_says_how_to_start_and_how_to_disable() {
        let dir = Some(Path::new("/p/x y"));
        let message = unreachable_message(&sens(), dir, &anyhow!("refused"));
        assert!(message.contains("refused"), "{message}");
        assert!(message.contains("`sens serve '/p/x y'`"), "{message}");
        assert!(message.contains("`sens uninstall '/p/x y'`"), "{message}");
        let bench = Invocation {
            exe: "/t/debug/sens-bench".into(),
            prefix: vec!["engine".into()],
        };
        let message = unreachable_message(&bench, dir, &anyhow!("refused"));
        assert!(
            message.contains("`sens-bench engine serve '/p/x y'`"),
            "{message}"
        );
        assert!(
            message.contains("`sens-bench engine uninstall '/p/x y'`"),
            "{message}"
        );
    }

    #[test]
    fn an_mcp_line_is_forwarded_and_a_notification_gets_no_response() {
        let dir = Path::new("/p");
        let asked = |request: &Request| {
            let Request::Mcp { message } = request else {
                panic!("not an mcp request");
            };
            Ok(match message.get("id") {
                Some(id) => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                None => Value::Null,
            })
        };
        let answer = mcp_answer(
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            dir,
            &sens(),
            asked,
        );
        assert_eq!(
            answer,
            Some(json!({"jsonrpc": "2.0", "id": 3, "result": {}}))
        );
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(mcp_answer(note, dir, &sens(), asked), None);
    }

    #[test]
    fn an_mcp_line_that_is_not_json_or_an_engine_out_of_reach_is_an_error_response() {
        let dir = Path::new("/p");
        let never = |_: &Request| -> anyhow::Result<Value> { panic!("asked") };
        let answer = mcp_answer("{not json", dir, &sens(), never).unwrap();
        assert_eq!(answer["error"]["code"], mcp::PARSE_ERROR);
        assert_eq!(answer["id"], Value::Null);
        let down = |_: &Request| -> anyhow::Result<Value> { Err(anyhow!("refused")) };
        let answer = mcp_answer(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            dir,
            &sens(),
            down,
        )
        .unwrap();
        assert_eq!(answer["id"], "a");
        assert_eq!(answer["error"]["code"], mcp::INTERNAL_ERROR);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("refused") && message.contains("`sens uninstall /p`"),
            "{message}"
        );
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(
            mcp_answer(note, dir, &sens(), down),
            None,
            "a notification is never answered"
        );
        let batch = format!(r#"[{note}, {{"jsonrpc":"2.0","id":1,"method":"ping"}}, 5]"#);
        let answer = mcp_answer(&batch, dir, &sens(), down).unwrap();
        let codes: Vec<(Value, Value)> = answer
            .as_array()
            .expect("a batch is answered with an array")
            .iter()
            .map(|r| (r["id"].clone(), r["error"]["code"].clone()))
            .collect();
        assert_eq!(
            codes,
            [
                (json!(1), json!(mcp::INTERNAL_ERROR)),
                (Value::Null, json!(-32600))
            ]
        );
    }

    #[test]
    fn control_characters_in_agent_text_are_escaped() {
        assert_eq!(escaped("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\n");
        assert_eq!(escaped("ñ's.py"), "ñ's.py");
    }
}
