//! Programs against a real registry: the lookups task, parallel calls,
//! validation, run state, and every adversarial program the sandbox must
//! answer with an error the program or the model reads, the host intact.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_code::{CodeError, CodeMode, Limit, Limits, RunOutcome};
use toolkit_core::{CallContext, Registry, RunState, ToolDef, tool, tools};

/// The population of a city, in thousands.
#[tool]
fn population(
    /// The city's name.
    city: String,
) -> Result<u64, String> {
    CITIES
        .iter()
        .find(|(name, _)| *name == city)
        .map(|(_, n)| *n)
        .ok_or_else(|| format!("no city named {city}"))
}

const CITIES: [(&str, u64); 20] = [
    ("Oslo", 709),
    ("Lima", 10_092),
    ("Paris", 2_102),
    ("Rome", 2_749),
    ("Cairo", 10_230),
    ("Tokyo", 13_988),
    ("Delhi", 16_787),
    ("Quito", 2_011),
    ("Accra", 2_514),
    ("Hanoi", 8_053),
    ("Dakar", 1_438),
    ("Sofia", 1_286),
    ("Riga", 605),
    ("Lagos", 15_388),
    ("Dhaka", 10_294),
    ("Bern", 134),
    ("Minsk", 1_996),
    ("Kyiv", 2_952),
    ("Seoul", 9_411),
    ("Vienna", 1_982),
];

/// Moves a parcel; slow on purpose, so that calls made together overlap.
#[tool]
async fn slow_echo(
    /// What to echo.
    text: String,
    /// How long to wait, in milliseconds.
    millis: u64,
) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    text
}

/// Books a room.
#[tool]
fn book(
    /// The room's number.
    room: u32,
    /// The guest's name.
    guest: String,
    /// Whether breakfast is included.
    breakfast: bool,
) -> String {
    format!("room {room} for {guest}, breakfast {breakfast}")
}

#[derive(Clone)]
struct Tenant(&'static str);

fn registry() -> Arc<Registry> {
    let tenant = ToolDef::builder("whoami")
        .description("The tenant this run is for.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .handler(|_: Value, context: CallContext| async move {
            context
                .state::<Tenant>()
                .map_or("nobody".to_owned(), |tenant| tenant.0.to_owned())
        });
    Arc::new(
        Registry::builder()
            .tools(tools![population, slow_echo, book])
            .tool(tenant)
            .build()
            .expect("the registry builds"),
    )
}

fn mode() -> CodeMode {
    CodeMode::new(registry()).limits(Limits::default().with_time(Duration::from_secs(5)))
}

fn limit(outcome: &RunOutcome) -> Option<Limit> {
    match &outcome.error {
        Some(CodeError::Limit(limit)) => Some(*limit),
        _ => None,
    }
}

/// After any program, a fresh one still runs: the host is intact.
async fn host_intact(mode: &CodeMode) {
    let outcome = mode
        .run("return Number(await tools.population({ city: 'Oslo' })) + 1;")
        .await;
    assert_eq!(outcome.value, Some(json!(710)), "{outcome:?}");
}

const LOOKUPS: &str = r#"
const cities = ["Oslo", "Lima", "Paris", "Rome", "Cairo", "Tokyo", "Delhi", "Quito",
  "Accra", "Hanoi", "Dakar", "Sofia", "Riga", "Lagos", "Dhaka", "Bern", "Minsk",
  "Kyiv", "Seoul", "Vienna"];
let total = 0;
let largest = { city: "", people: 0 };
for (const city of cities) {
  const people = Number(await tools.population({ city }));
  total += people;
  if (people > largest.people) largest = { city, people };
}
console.log(`largest: ${largest.city}`);
return { total, largest: largest.city };
"#;

#[tokio::test]
async fn twenty_lookups_and_an_aggregate_in_one_program() {
    let mode = mode();
    let outcome = mode.run(LOOKUPS).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(outcome.calls, 20);
    let total: u64 = CITIES.iter().map(|(_, n)| n).sum();
    assert_eq!(
        outcome.value,
        Some(json!({"total": total, "largest": "Delhi"}))
    );
    // The model reads the output and the value only: none of the twenty
    // results by itself.
    let text = outcome.to_text();
    // The value's keys come in the program's order or sorted, as the
    // build's serde_json keeps maps (its `preserve_order` feature, which
    // other crates of a build may turn on).
    let (printed, value) = text.split_once('\n').expect("the output, then the value");
    assert_eq!(printed, "largest: Delhi");
    assert_eq!(
        serde_json::from_str::<Value>(value).expect("JSON"),
        json!({"total": total, "largest": "Delhi"})
    );
    assert!(!text.contains("10092"));
}

#[tokio::test]
async fn the_run_code_tool_answers_through_a_registry() {
    let mode = mode();
    let outer = Registry::builder().tool(mode.tool()).build().unwrap();
    let tool = outer.get("run_code").unwrap();
    assert!(tool.description().contains("population(args: {"));
    let outcome = outer
        .dispatch(("run_code", &json!({"code": LOOKUPS})))
        .await;
    assert!(!outcome.result.is_error(), "{:?}", outcome.result);
    assert!(outcome.result.to_text().starts_with("largest: Delhi\n"));

    let failing = outer
        .dispatch(("run_code", &json!({"code": "throw new Error('no')"})))
        .await;
    assert!(failing.result.is_error());
    assert!(
        failing
            .result
            .error_message()
            .unwrap()
            .contains("the program threw Error: no"),
        "{:?}",
        failing.result
    );
}

#[tokio::test]
async fn parallel_calls_run_together() {
    let mode = mode();
    let started = Instant::now();
    let outcome = mode
        .run(
            r#"
            const texts = await Promise.all(
              ["a", "b", "c", "d", "e", "f"].map((text) => tools.slow_echo({ text, millis: 300 })));
            return texts.join("");
            "#,
        )
        .await;
    assert_eq!(outcome.value, Some(json!("abcdef")), "{outcome:?}");
    // Six calls of 300 ms each, one after another, would take 1.8 s.
    assert!(
        started.elapsed() < Duration::from_millis(1_200),
        "{:?}",
        started.elapsed()
    );

    // At most two at once: three rounds.
    let narrow = mode.clone().limits(
        Limits::default()
            .with_concurrency(2)
            .with_time(Duration::from_secs(5)),
    );
    let started = Instant::now();
    let outcome = narrow
        .run(
            r#"
            const texts = await Promise.all(
              ["a", "b", "c", "d", "e", "f"].map((text) => tools.slow_echo({ text, millis: 200 })));
            return texts.join("");
            "#,
        )
        .await;
    assert_eq!(outcome.value, Some(json!("abcdef")), "{outcome:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn wrong_argument_types_are_every_error_at_once_as_dispatch_gives_them() {
    let mode = mode();
    let arguments = json!({"room": "twelve", "guest": 7});
    let direct = mode.registry().dispatch(("book", &arguments)).await;
    let expected = direct.result.error_message().unwrap().to_owned();
    assert!(
        expected.contains("room") && expected.contains("guest") && expected.contains("breakfast")
    );

    let outcome = mode
        .run(
            r#"
            try {
              await tools.book({ room: "twelve", guest: 7 });
              return "booked";
            } catch (error) {
              return { tool: error.tool, message: error.message };
            }
            "#,
        )
        .await;
    assert_eq!(
        outcome.value,
        Some(json!({"tool": "book", "message": expected})),
        "{outcome:?}"
    );

    // Uncaught, the model reads it.
    let outcome = mode.run("await tools.book({ room: 'twelve' });").await;
    let text = outcome.to_text();
    assert!(
        text.contains("room") && text.contains("breakfast"),
        "{text}"
    );
}

#[tokio::test]
async fn tool_errors_and_unknown_tools_are_thrown_errors() {
    let mode = mode();
    let outcome = mode
        .run(
            r#"
            const messages = [];
            try { await tools.population({ city: "Atlantis" }); } catch (e) { messages.push(e.message); }
            try { await tools.nope({}); } catch (e) { messages.push(e.constructor.name); }
            return messages;
            "#,
        )
        .await;
    assert_eq!(
        outcome.value,
        Some(json!(["no city named Atlantis", "TypeError"])),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn calls_read_the_run_state() {
    let mode = mode();
    let state = RunState::new().with(Tenant("acme"));
    let outcome = mode.run("return await tools.whoami();").state(&state).await;
    assert_eq!(outcome.value, Some(json!("acme")), "{outcome:?}");
}

#[tokio::test]
async fn the_run_code_tool_passes_its_run_state_on() {
    // `run_code` called as a model calls it, in a run with its own values:
    // the program's calls see them.
    let offered = Registry::builder()
        .tool(mode().tool())
        .build()
        .expect("a registry");
    let state = RunState::new().with(Tenant("acme"));
    let arguments = json!({"code": "return await tools.whoami();"});
    let outcome = offered
        .dispatch(("run_code", &arguments))
        .state(&state)
        .await;
    assert!(outcome.result.to_text().contains("acme"), "{outcome:?}");
}

#[tokio::test]
async fn an_endless_loop_reaches_the_time_limit_with_its_output() {
    let mode =
        CodeMode::new(registry()).limits(Limits::default().with_time(Duration::from_millis(300)));
    let started = Instant::now();
    let outcome = mode
        .run("console.log('before'); for (;;) { try { while (true) {} } catch (e) {} }")
        .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        limit(&outcome),
        Some(Limit::Time(Duration::from_millis(300)))
    );
    assert_eq!(outcome.output, "before\n");
    assert!(outcome.to_text().contains("time limit"));
    host_intact(&mode).await;
}

#[tokio::test]
async fn a_gibibyte_allocation_is_out_of_memory() {
    let mode = mode();
    let outcome = mode
        .run("console.log('start'); const big = new ArrayBuffer(1024 * 1024 * 1024); return big.byteLength;")
        .await;
    assert_eq!(
        limit(&outcome),
        Some(Limit::Memory(64 << 20)),
        "{outcome:?}"
    );
    assert_eq!(outcome.output, "start\n");
    let outcome = mode
        .run("const parts = []; for (;;) parts.push('x'.repeat(1 << 20) + parts.length);")
        .await;
    assert_eq!(
        limit(&outcome),
        Some(Limit::Memory(64 << 20)),
        "{outcome:?}"
    );
    host_intact(&mode).await;
}

#[tokio::test]
async fn deep_recursion_overflows_the_stack() {
    let mode = mode();
    let outcome = mode
        .run("function down(n) { return down(n + 1) + 1; } return down(0);")
        .await;
    assert!(
        matches!(limit(&outcome), Some(Limit::Stack(_))),
        "{outcome:?}"
    );
    host_intact(&mode).await;
}

#[tokio::test]
async fn ten_thousand_calls_from_a_loop_stop_at_the_call_limit() {
    let counted = Arc::new(AtomicUsize::new(0));
    let seen = counted.clone();
    let counter = ToolDef::builder("tick")
        .description("Counts.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .handler(move |_: Value, _: CallContext| {
            let seen = seen.clone();
            async move { seen.fetch_add(1, Ordering::SeqCst).to_string() }
        });
    let registry = Arc::new(Registry::builder().tool(counter).build().unwrap());
    let mode = CodeMode::new(registry).limits(Limits::default().with_calls(100));
    let outcome = mode
        .run(
            r#"
            let made = 0;
            for (let i = 0; i < 10000; i++) {
              try { await tools.tick(); made++; } catch (e) { /* caught, but it stops anyway */ }
            }
            return made;
            "#,
        )
        .await;
    assert_eq!(limit(&outcome), Some(Limit::Calls(100)), "{outcome:?}");
    assert_eq!(outcome.calls, 100);
    assert_eq!(counted.load(Ordering::SeqCst), 100);

    // Without awaiting: the calls are refused as they are made.
    let outcome = mode
        .run("const all = []; for (let i = 0; i < 10000; i++) all.push(tools.tick()); await Promise.all(all);")
        .await;
    assert_eq!(limit(&outcome), Some(Limit::Calls(100)), "{outcome:?}");
    assert!(counted.load(Ordering::SeqCst) <= 200);
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_stop_at_the_output_limit() {
    let mode = mode();
    let outcome = mode
        .run(
            r#"
            const line = "y".repeat(1000);
            for (let i = 0; i < 100000; i++) {
              try { console.log(line); } catch (e) {}
            }
            "#,
        )
        .await;
    assert_eq!(
        limit(&outcome),
        Some(Limit::Output(64 << 10)),
        "{outcome:?}"
    );
    assert_eq!(outcome.output.len(), 64 << 10);
    assert!(
        outcome
            .to_text()
            .ends_with("error: the program's output passed 65536 bytes")
    );
    host_intact(&mode).await;
}

#[tokio::test]
async fn no_file_system_network_process_or_module_loader() {
    let mode = mode();
    let outcome = mode
        .run(
            r#"
            const names = ["require", "process", "fetch", "XMLHttpRequest", "WebSocket", "std",
              "os", "Deno", "Bun", "print", "scriptArgs", "setTimeout", "Date", "performance"];
            const present = names.filter((name) => typeof globalThis[name] !== "undefined");
            let imported;
            try { await import("os"); imported = "imported"; } catch (e) { imported = e.message; }
            return { present, imported };
            "#,
        )
        .await;
    let value = outcome.value.clone().expect("a value");
    assert_eq!(value["present"], json!([]), "{outcome:?}");
    assert_ne!(value["imported"], json!("imported"));

    // Reading or writing a file is a thrown error the model reads.
    let outcome = mode.run("return std.loadFile('/etc/passwd');").await;
    assert!(
        outcome.to_text().contains("std is not defined"),
        "{outcome:?}"
    );

    // With the clock, `Date` is there.
    let clocked = mode.clone().clock(true);
    let outcome = clocked.run("return typeof Date.now();").await;
    assert_eq!(outcome.value, Some(json!("number")));
}

#[tokio::test]
async fn eval_and_tampering_reach_nothing_of_the_host() {
    let mode = mode();
    let outcome = mode
        .run(
            r#"
            const results = {};
            // The constructor of a binding is the sandbox's own Function.
            const global = tools.population.constructor("return this")();
            results.sameGlobal = global === globalThis;
            results.evalHost = eval("typeof call + typeof write");
            // The bindings cannot be replaced or changed.
            try { tools.population = () => "fake"; results.replaced = true; } catch (e) { results.replaced = e.constructor.name; }
            try { tools.injected = () => 1; results.injected = true; } catch (e) { results.injected = e.constructor.name; }
            try { globalThis.tools = {}; results.rebound = true; } catch (e) { results.rebound = e.constructor.name; }
            try { Object.defineProperty(tools.population, "call", { value: 1 }); results.redefined = true; } catch (e) { results.redefined = e.constructor.name; }
            // Prototype tampering changes what the program sends, not what
            // the registry checks.
            Object.prototype.toJSON = function () { return { city: "Atlantis" }; };
            try { await tools.population({ city: "Oslo" }); results.tampered = "accepted"; } catch (e) { results.tampered = e.message; }
            delete Object.prototype.toJSON;
            Promise.prototype.then = function () { throw new Error("hijacked"); };
            return results;
            "#,
        )
        .await;
    assert_eq!(
        outcome.value,
        Some(json!({
            "sameGlobal": true,
            "evalHost": "undefinedundefined",
            "replaced": "TypeError",
            "injected": "TypeError",
            "rebound": "TypeError",
            "redefined": "TypeError",
            "tampered": "no city named Atlantis",
        })),
        "{outcome:?}"
    );
    host_intact(&mode).await;
}

#[tokio::test]
async fn a_promise_nothing_settles_and_a_syntax_error_are_reported() {
    let mode = mode();
    let outcome = mode.run("await new Promise(() => {});").await;
    assert_eq!(outcome.error, Some(CodeError::Stalled));
    let outcome = mode.run("return (;").await;
    assert!(
        matches!(&outcome.error, Some(CodeError::Thrown { message, .. }) if message.starts_with("SyntaxError")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn cancelling_stops_the_program_and_its_calls() {
    let mode = mode();
    let cancellation = toolkit_core::Cancellation::new();
    let stop = cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
    });
    let started = Instant::now();
    let outcome = mode
        .run("console.log('waiting'); await tools.slow_echo({ text: 'x', millis: 10000 });")
        .cancellation(&cancellation)
        .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(outcome.error, Some(CodeError::Cancelled));
    assert_eq!(outcome.output, "waiting\n");
    let outcome = mode.run("for (;;) {}").cancellation(&cancellation).await;
    assert_eq!(outcome.error, Some(CodeError::Cancelled));
}

#[tokio::test(flavor = "current_thread")]
async fn runs_on_a_current_thread_runtime_too() {
    let mode = mode();
    let outcome = mode
        .run("return await Promise.all([tools.slow_echo({ text: 'a', millis: 20 }), tools.population({ city: 'Bern' })]);")
        .await;
    assert_eq!(outcome.value, Some(json!(["a", "134"])), "{outcome:?}");
}

/// A forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    /// Degrees Celsius.
    celsius: f64,
    /// The sky.
    sky: String,
}

/// Tomorrow's forecast for a city.
#[tool]
fn forecast(
    /// The city.
    city: String,
) -> Forecast {
    Forecast {
        celsius: city.len() as f64 + 0.5,
        sky: "clear".into(),
    }
}

#[tokio::test]
async fn a_tool_with_an_output_schema_gives_its_value_and_declares_its_type() {
    let registry = Arc::new(Registry::builder().tools(tools![forecast]).build().unwrap());
    let mode = CodeMode::new(registry);
    let declarations = mode.declarations();
    assert!(
        declarations.contains("}): Promise<{\n    /** Degrees Celsius. */\n    celsius: number;"),
        "{declarations}"
    );
    let outcome = mode
        .run(
            "const f = await tools.forecast({ city: 'Oslo' }); return f.celsius * 2 + ' ' + f.sky;",
        )
        .await;
    assert_eq!(outcome.value, Some(json!("9 clear")), "{outcome:?}");
}

#[tokio::test]
async fn tools_that_need_approval_are_neither_declared_nor_callable() {
    let guarded = ToolDef::builder("delete_all")
        .description("Deletes everything.")
        .needs_approval(true)
        .input_schema(json!({"type": "object", "properties": {}}))
        .handler(|_: Value, _: CallContext| async { "deleted" });
    let registry = Arc::new(
        Registry::builder()
            .tools(tools![population])
            .tool(guarded)
            .build()
            .unwrap(),
    );
    let mode = CodeMode::new(registry);
    assert!(!mode.declarations().contains("delete_all"));
    let outcome = mode.run("return await tools.delete_all();").await;
    assert!(
        outcome.to_text().contains("TypeError: not a function"),
        "{outcome:?}"
    );
}
