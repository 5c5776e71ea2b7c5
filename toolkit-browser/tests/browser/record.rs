//! The run recorder: calls made through a recorded registry as a model
//! would make them, then the record read back as its readers would: the
//! HTML page opened in the browser itself (served from 127.0.0.1, since
//! `file:` pages are refused), and the GIF decoded frame by frame.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolkit_browser::{Browser, MAX_GIF_WIDTH, Recorder, SafetyPolicy};
use toolkit_core::{CallContext, Origin, Provider, Registry, ToolDef};
use toolkit_tests::http::{Reply, Route, TestServer};

use crate::pictures::Picture;
use crate::support::runner::scenarios;
use crate::support::scratch;

scenarios![a_run_is_recorded_as_a_page_and_an_animation];

const SECRET: &str = "hunter2-Zq9x";

fn policy() -> SafetyPolicy {
    SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .secret("pw", SECRET)
        .build()
        .expect("a valid policy")
}

async fn call(registry: &Registry, name: &str, args: Value) -> String {
    let outcome = registry.dispatch((name, &args)).await;
    assert!(outcome.error.is_none(), "{name} did not run: {outcome:?}");
    assert!(
        !outcome.result.is_error(),
        "{name}({args}) failed: {}",
        outcome.result.to_text()
    );
    outcome.result.to_text()
}

async fn a_run_is_recorded_as_a_page_and_an_animation(browser: Browser, server: TestServer) {
    let dir = scratch().join(format!("record-{}", server.port()));
    let _ = std::fs::remove_dir_all(&dir);
    let recorder = Recorder::new(&dir, browser.clone());
    // Beside the actions, a tool from elsewhere (a plugin's), whose hints
    // an agent believes only where the host trusts it.
    let plugin = || {
        ToolDef::builder("note")
            .description("Notes a line.")
            .source("a plugin")
            .read_only(true)
            .handler(|_: Value, _: CallContext| async { "noted" })
    };
    let plain = toolkit_browser::registry(browser.clone(), policy())
        .tool(plugin())
        .build()
        .unwrap();
    let registry = recorder
        .wrap(
            toolkit_browser::registry(browser.clone(), policy())
                .tool(plugin())
                .build()
                .unwrap(),
        )
        .unwrap();
    for def in plain.tools() {
        let wrapped = registry.get(def.name()).expect("every tool is wrapped");
        assert_eq!(
            (wrapped.annotations(), wrapped.params()),
            (def.annotations(), def.params())
        );
        if let Origin::Runtime { source } = def.origin() {
            assert_eq!(wrapped.origin(), Origin::Runtime { source });
        }
    }
    // Recording changes nothing the model is sent: byte for byte, but
    // for MCP, which lists a run-time tool's schema as written (its keys
    // in a `Value`'s order).
    for provider in Provider::ALL {
        let (wrapped, own) = (
            registry.tool_list(provider).unwrap(),
            plain.tool_list(provider).unwrap(),
        );
        if provider == Provider::Mcp {
            assert_eq!(wrapped.to_value(), own.to_value());
        } else {
            assert_eq!(
                wrapped.to_json_string(),
                own.to_json_string(),
                "{provider:?}"
            );
        }
    }

    call(&registry, "navigate", json!({ "url": server.url("/form") })).await;
    let map = browser.page_map().await.unwrap();
    let query = map
        .elements
        .iter()
        .find(|e| e.field_name.as_deref() == Some("q"))
        .expect("the query field")
        .index;
    let search = map
        .elements
        .iter()
        .find(|e| e.tag == "button" && e.text.as_deref() == Some("Search"))
        .expect("the search button")
        .index;
    call(
        &registry,
        "input",
        json!({ "index": query, "text": "<secret>pw</secret>" }),
    )
    .await;
    // The form's answer holds the secret in its URL.
    call(&registry, "click", json!({ "index": search })).await;
    call(&registry, "done", json!({ "text": "searched" })).await;
    assert_eq!(recorder.steps(), 4);

    let files = recorder.finish().await.unwrap();
    assert_eq!(files.steps, 4);
    assert_eq!(files.html, dir.join("run.html"));
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(!html.contains(SECRET), "the secret is in the record");
    assert!(
        html.contains("&lt;secret&gt;pw&lt;/secret&gt;"),
        "{}",
        &html[..2000]
    );
    for (tool, section) in ["navigate", "input", "click", "done"].iter().zip(1..) {
        assert!(
            html.contains(&format!(
                "id=\"step-{section}\"><h2>Step {section}: {tool}</h2>"
            )),
            "step {section}"
        );
    }

    // The pictures, in order: the steps', then the end. The navigation
    // found a blank page; the input and the click outlined their element.
    let pictures: Vec<Picture> = html
        .split("src=\"data:image/png;base64,")
        .skip(1)
        .map(|rest| Picture::decode(&STANDARD.decode(&rest[..rest.find('"').unwrap()]).unwrap()))
        .collect();
    assert_eq!(pictures.len(), 5);
    let outlined: Vec<bool> = pictures.iter().map(|p| p.outline_pixels() > 0).collect();
    assert_eq!(outlined, [false, true, true, false, false]);
    let field = map.elements.iter().find(|e| e.index == query).unwrap();
    assert!(pictures[1].ring_share(field) > 0.8);

    // The page, read in a browser: every step, every picture shown.
    let page = html.clone();
    let site = TestServer::start([(
        "/run.html",
        Route::handler(move |_| Reply::html(page.clone())),
    )]);
    browser.navigate(&site.url("/run.html")).await.unwrap();
    let seen = browser
        .evaluate(
            "({ steps: document.querySelectorAll('section.step').length, \
               end: document.querySelectorAll('section.end').length, \
               images: [...document.images].filter((i) => i.complete && i.naturalWidth === 1280).length, \
               scripts: document.scripts.length })",
        )
        .await
        .unwrap();
    assert_eq!(
        seen,
        json!({ "steps": 4, "end": 1, "images": 5, "scripts": 0 })
    );
    // Nothing but the page itself was fetched.
    let paths: Vec<String> = site
        .requests()
        .iter()
        .map(|r| r.path().to_owned())
        .collect();
    assert!(
        paths
            .iter()
            .all(|p| p == "/run.html" || p == "/favicon.ico"),
        "{paths:?}"
    );

    // The animation: a frame per step and one for the end, scaled down.
    let bytes = std::fs::read(&files.gif).unwrap();
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(
        (u32::from(decoder.width()), u32::from(decoder.height())),
        (MAX_GIF_WIDTH, 500)
    );
    let mut frames = 0;
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        assert_eq!((frame.width, frame.height), (800, 500));
        assert!(frame.delay > 0);
        frames += 1;
    }
    assert_eq!(frames, 5);
}
