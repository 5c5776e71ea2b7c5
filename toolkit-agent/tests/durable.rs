//! Runs that survive their process: a child process runs an agent with a
//! file store and is killed (SIGKILL) at random points, over and over; each
//! new child resumes from the store. And a run paused for approval in one
//! process, approved and finished in another.
//!
//! The model is played by a real HTTP server in this process, answering
//! from the conversation it is sent (so a request repeated after a kill
//! gets the same calls, with the same ids); the children speak to it with
//! `HttpModel`. This binary is its own child: run with `DURABLE_ROLE` set,
//! it plays the role named.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_agent::{Agent, CallStatus, Decision, FileStore, HttpModel, Limits, StopReason};
use toolkit_core::{CallContext, Registry, ToolDef, ToolResult};
use toolkit_tests::http::{Reply, Request, Route, TestServer};
use toolkit_tests::runner::{self, Test};

/// Steps of the crash run; each makes three calls.
const STEPS: usize = 40;
/// Kills at least, over the crash run.
const KILLS: usize = 50;

fn main() -> ExitCode {
    if let Ok(role) = std::env::var("DURABLE_ROLE") {
        let args: Vec<String> = std::env::args().skip(1).collect();
        return child(&role, &args);
    }
    runner::run(vec![
        Test::new("killed_runs_resume_and_no_call_runs_twice", killed_runs),
        Test::new(
            "an_approval_deferred_in_one_process_is_given_in_another",
            deferred_approval,
        ),
    ])
}

// ---------------------------------------------------------------- the model

/// The calls of the model's step `step` (from 0) of the crash run.
fn crash_calls(step: usize) -> Vec<(String, &'static str, Value)> {
    vec![
        (
            format!("s{step}-append"),
            "append_effect",
            json!({"note": step}),
        ),
        (format!("s{step}-flag"), "set_flag", json!({})),
        (format!("s{step}-peek"), "count_effects", json!({})),
    ]
}

/// Answers a Chat Completions request from its messages: the next step's
/// calls, or the answer once every step was made. A request whose tool
/// messages do not answer every call of the turn before is refused, as a
/// provider would.
fn crash_model(request: &Request) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Err(problem) = check_answered(&messages) {
        return Reply::status(400, &problem);
    }
    let step = messages.iter().filter(|m| m["role"] == "assistant").count();
    if step >= STEPS {
        return chat_reply(json!({"role": "assistant", "content": "all steps made"}));
    }
    chat_calls(crash_calls(step))
}

fn check_answered(messages: &[Value]) -> Result<(), String> {
    for (i, message) in messages.iter().enumerate() {
        let Some(calls) = message["tool_calls"].as_array() else {
            continue;
        };
        let answered: BTreeSet<&str> = messages[i + 1..]
            .iter()
            .take_while(|m| m["role"] == "tool")
            .filter_map(|m| m["tool_call_id"].as_str())
            .collect();
        for call in calls {
            let id = call["id"].as_str().unwrap_or("");
            if !answered.contains(id) {
                return Err(format!("the call {id} has no tool message"));
            }
        }
    }
    Ok(())
}

fn chat_calls(calls: Vec<(String, &str, Value)>) -> Reply {
    let calls: Vec<Value> = calls
        .into_iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    chat_reply(json!({"role": "assistant", "content": null, "tool_calls": calls}))
}

fn chat_reply(message: Value) -> Reply {
    Reply::json(&json!({"choices": [{"index": 0, "message": message,
        "finish_reason": if message["tool_calls"].is_array() { "tool_calls" } else { "stop" }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3}}))
}

// ----------------------------------------------------------------- the tools

/// Appends a line to `file` and flushes it to disk.
fn append_line(file: &Path, line: &str) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .expect("the log opens");
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_data())
        .expect("the log is written");
}

fn lines(file: &Path) -> Vec<String> {
    fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The crash run's tools, acting in `dir`: one with a side effect that is
/// not idempotent (a line appended per call), one idempotent (a file per
/// call id), one read-only.
fn crash_tools(dir: &Path) -> Registry {
    let effects = dir.join("effects.log");
    let flags = dir.join("flags");
    fs::create_dir_all(&flags).unwrap();
    let append = {
        let effects = effects.clone();
        ToolDef::builder("append_effect")
            .description("Appends a line to the log.")
            .handler(move |_: Value, call: CallContext| {
                let effects = effects.clone();
                async move {
                    append_line(&effects, call.call_id());
                    // A window after the effect and before its result is
                    // recorded, for kills to land in.
                    tokio::time::sleep(Duration::from_millis(15)).await;
                    "appended"
                }
            })
    };
    let flag = ToolDef::builder("set_flag")
        .description("Sets a flag.")
        .idempotent(true)
        .handler(move |_: Value, call: CallContext| {
            let flags = flags.clone();
            async move {
                fs::write(flags.join(call.call_id()), b"set").unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
                "set"
            }
        });
    let count = ToolDef::builder("count_effects")
        .description("Counts the log's lines.")
        .read_only(true)
        .handler(move |_: Value, _: CallContext| {
            let effects = effects.clone();
            async move { lines(&effects).len().to_string() }
        });
    Registry::builder()
        .tool(append)
        .tool(flag)
        .tool(count)
        .build()
        .unwrap()
}

// ---------------------------------------------------------------- the child

fn child(role: &str, args: &[String]) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let code = runtime.block_on(async {
        match role {
            "crash" => crash_child(&args[0], Path::new(&args[1])).await,
            "defer-a" | "defer-b" => defer_child(role, &args[0], Path::new(&args[1])).await,
            other => panic!("no role {other}"),
        }
    });
    // Calls may still sleep on the blocking pool; nothing waits for them.
    runtime.shutdown_background();
    code
}

/// Runs, or resumes, the crash run; settles a call that may have run by
/// what the log says it did.
async fn crash_child(base_url: &str, dir: &Path) -> ExitCode {
    let model = HttpModel::openai_chat("scripted")
        .base_url(base_url)
        .no_key()
        .build()
        .unwrap();
    let effects = dir.join("effects.log");
    let reports = dir.join("may-have-run.log");
    let agent = Agent::builder(model, crash_tools(dir))
        .limits(Limits::default().max_steps(STEPS + 1))
        .store(FileStore::new(dir.join("sessions")).unwrap())
        .approval(move |pending| {
            let effects = effects.clone();
            let reports = reports.clone();
            async move {
                assert!(
                    matches!(pending.status, CallStatus::MayHaveRun { .. }),
                    "only calls that may have run wait: {pending:?}"
                );
                let id = pending.call.id.clone();
                let ran = lines(&effects).contains(&id);
                append_line(
                    &reports,
                    &format!("{id} {}", if ran { "ran" } else { "not-run" }),
                );
                if ran {
                    Decision::Answered(ToolResult::text("appended"))
                } else {
                    Decision::Approve
                }
            }
        })
        .build()
        .unwrap();
    let outcome = match agent.load("crash").await {
        // Killed after the run's last save: nothing is left to do.
        Ok(session) if session.is_ended() => {
            println!("finished before");
            return ExitCode::SUCCESS;
        }
        Ok(mut session) => agent.resume(&mut session).await,
        Err(_) => {
            let mut session = agent.session();
            session.set_id("crash").unwrap();
            agent.send(&mut session, "Make every step.").await
        }
    };
    match outcome {
        Ok(outcome) if outcome.stop == StopReason::Answered => {
            println!("finished after {} steps", outcome.steps);
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("the run did not finish: {other:?}");
            ExitCode::FAILURE
        }
    }
}

// --------------------------------------------------------- the crash parent

/// A small xorshift generator: the kill points, from a seed printed so a
/// failure can be replayed (`DURABLE_SEED`).
struct Points(u64);

impl Points {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-durable-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn spawn(role: &str, args: &[&str]) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(args)
        .env("DURABLE_ROLE", role)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child starts")
}

fn killed_runs() {
    let server = TestServer::start([("/chat/completions", Route::handler(crash_model))]);
    let dir = scratch("crash");
    let dir_arg = dir.to_string_lossy().into_owned();
    let base_url = server.base_url();
    let seed = std::env::var("DURABLE_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    println!("kill points from DURABLE_SEED={seed}");
    let mut points = Points(seed);
    let mut kills = 0;
    let mut finished = false;
    let mut runs = 0;
    while !finished {
        runs += 1;
        assert!(runs < 400, "the run never finished");
        let mut child = spawn("crash", &[&base_url, &dir_arg]);
        if kills < KILLS {
            // Past the process's start, into the run: 40 to 160 ms.
            std::thread::sleep(Duration::from_millis(40 + points.next(120)));
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                continue;
            }
        }
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        // A run came to its end: every check holds for it, whether more
        // kills are needed (in a new run) or not.
        let settled = check_run(&dir);
        println!("a run finished: {settled} calls that may have run, settled by the host");
        finished = kills >= KILLS;
        if !finished {
            fs::remove_dir_all(&dir).unwrap();
            fs::create_dir_all(&dir).unwrap();
        }
    }
    println!("{kills} kills over {runs} processes");
    assert!(kills >= KILLS);
    let _ = fs::remove_dir_all(&dir);
}

/// Checks a crash run that came to its end, in `dir`; gives the number of
/// calls the host was asked about.
fn check_run(dir: &Path) -> usize {
    // Every call with a side effect ran exactly once.
    let effects = lines(&dir.join("effects.log"));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for id in &effects {
        *counts.entry(id).or_default() += 1;
    }
    let expected: BTreeSet<String> = (0..STEPS).map(|step| format!("s{step}-append")).collect();
    let ran: BTreeSet<String> = counts.keys().map(|id| id.to_string()).collect();
    assert_eq!(ran, expected, "every step's call ran");
    assert!(
        counts.values().all(|&count| count == 1),
        "no call ran twice: {counts:?}"
    );
    // The idempotent tool's effect is there for every step.
    for step in 0..STEPS {
        assert!(dir.join("flags").join(format!("s{step}-flag")).exists());
    }
    // What the host was asked about was settled by what the log said.
    let reports = lines(&dir.join("may-have-run.log"));
    for report in &reports {
        let (id, verdict) = report.split_once(' ').unwrap();
        assert!(
            id.ends_with("-append"),
            "only the non-idempotent tool asks: {id}"
        );
        assert!(verdict == "ran" || verdict == "not-run", "{report}");
    }
    // Nothing committed was lost: the saved session holds every step's
    // results, in order, and its run ended with the answer.
    // Read as a new process would: the snapshot and the journal after it.
    let store = FileStore::new(dir.join("sessions")).unwrap();
    let session = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(toolkit_agent::SessionStore::load(&store, "crash"))
        .unwrap()
        .expect("the session is stored");
    assert!(session.is_ended());
    let request = session.conversation().request();
    let messages = request["messages"].as_array().unwrap();
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    let all: Vec<String> = (0..STEPS)
        .flat_map(|step| crash_calls(step).into_iter().map(|(id, _, _)| id))
        .collect();
    assert_eq!(answered, all);
    reports.len()
}

// ------------------------------------------------------- deferred approval

fn defer_model(request: &Request) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Err(problem) = check_answered(&messages) {
        return Reply::status(400, &problem);
    }
    match messages.iter().rev().find(|m| m["role"] == "tool") {
        None => chat_calls(vec![(
            "mail-1".to_owned(),
            "send_email",
            json!({"to": "ada@example.org"}),
        )]),
        Some(result) => chat_reply(json!({"role": "assistant",
            "content": format!("done: {}", result["content"].as_str().unwrap_or(""))})),
    }
}

fn mail_tools(dir: &Path) -> Registry {
    let sent = dir.join("sent.log");
    Registry::builder()
        .tool(
            ToolDef::builder("send_email")
                .description("Sends an email.")
                .needs_approval(true)
                .input_schema(json!({"type": "object",
                    "properties": {"to": {"type": "string"}}, "required": ["to"]}))
                .handler(move |arguments: Value, _: CallContext| {
                    let sent = sent.clone();
                    async move {
                        let to = arguments["to"].as_str().unwrap_or("").to_owned();
                        append_line(&sent, &to);
                        format!("sent to {to}")
                    }
                }),
        )
        .build()
        .unwrap()
}

async fn defer_child(role: &str, base_url: &str, dir: &Path) -> ExitCode {
    let model = HttpModel::openai_chat("scripted")
        .base_url(base_url)
        .no_key()
        .build()
        .unwrap();
    let agent = Agent::builder(model, mail_tools(dir))
        .store(FileStore::new(dir.join("sessions")).unwrap())
        .build()
        .unwrap();
    if role == "defer-a" {
        let mut session = agent.session();
        session.set_id("mail").unwrap();
        let outcome = agent.send(&mut session, "Email Ada.").await.unwrap();
        println!("{} {}", outcome.stop, outcome.pending.len());
        for pending in &outcome.pending {
            println!("pending {} {}", pending.call.id, pending.call.name);
        }
    } else {
        let mut session = agent.load("mail").await.unwrap();
        let ids: Vec<String> = session
            .pending()
            .iter()
            .map(|p| p.call.id.clone())
            .collect();
        for id in ids {
            session.decide(&id, Decision::Approve).unwrap();
        }
        let outcome = agent.resume(&mut session).await.unwrap();
        println!("{}: {}", outcome.stop, outcome.answer.unwrap_or_default());
    }
    ExitCode::SUCCESS
}

fn deferred_approval() {
    let server = TestServer::start([("/chat/completions", Route::handler(defer_model))]);
    let dir = scratch("defer");
    let dir_arg = dir.to_string_lossy().into_owned();
    let base_url = server.base_url();
    let run = |role: &str| {
        let output = spawn(role, &[&base_url, &dir_arg])
            .wait_with_output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    };
    let first = run("defer-a");
    assert!(
        first.contains("calls wait for a decision 1")
            && first.contains("pending mail-1 send_email"),
        "{first}"
    );
    assert!(
        lines(&dir.join("sent.log")).is_empty(),
        "nothing sent before approval"
    );
    let second = run("defer-b");
    assert_eq!(
        second.trim(),
        "the model answered: done: sent to ada@example.org"
    );
    assert_eq!(lines(&dir.join("sent.log")), ["ada@example.org"]);
    // Two requests: the first, none while paused, one after the approval.
    assert_eq!(server.requests().len(), 2);
    let _ = fs::remove_dir_all(&dir);
}
