//! Files a tool names are read only from inside the folder the host allows,
//! opened once and checked on the open handle: no link followed, no FIFO
//! waited on, no check-then-open race. Saved outputs are private and never
//! written through a planted link.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use toolkit_core::builtin::{ReadOutputError, read_output};
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Block, History, Image, ImageError, OutputBudget, ToolCallResult, ToolResult};
use toolkit_tests::fixtures::{ScratchDir, png_bytes, within};

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

/// A thread that swaps `name` in `dir`, as fast as it can, between a
/// regular file holding `inside` and a link to `outside`, each swap one
/// atomic rename, until the returned flag is raised.
fn swapper(dir: &Path, name: &str, inside: Vec<u8>, outside: PathBuf) -> Swapper {
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let (flag, count) = (Arc::clone(&stop), Arc::clone(&swaps));
    let (dir, name) = (dir.to_path_buf(), name.to_owned());
    let handle = thread::spawn(move || {
        let target = dir.join(&name);
        let (link, file) = (dir.join(".swap-link"), dir.join(".swap-file"));
        while !flag.load(Ordering::Relaxed) {
            let _ = fs::remove_file(&link);
            symlink(&outside, &link).unwrap();
            fs::rename(&link, &target).unwrap();
            fs::write(&file, &inside).unwrap();
            fs::rename(&file, &target).unwrap();
            count.fetch_add(1, Ordering::Relaxed);
        }
    });
    Swapper {
        stop,
        swaps,
        handle,
    }
}

struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    handle: thread::JoinHandle<()>,
}

impl Swapper {
    fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let swaps = self.swaps;
        self.handle.join().unwrap();
        swaps.load(Ordering::Relaxed)
    }
}

/// Which side of the race one round landed on.
enum Side {
    /// The regular file was read.
    Inside,
    /// The link was seen and refused.
    Refused,
}

/// Runs `round` against a swapping file until the race has really been
/// run: at least [`RACE_ROUNDS`] rounds, [`RACE_SWAPS`] swaps, and both
/// sides seen. The count of rounds adapts because on a loaded machine the
/// swapping thread may get little time; a deadline keeps a starved run
/// from going on for ever. Returns (rounds inside, rounds refused, swaps).
fn race(swapping: Swapper, mut round: impl FnMut() -> Side) -> (u64, u64, u64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut inside, mut refused, mut rounds) = (0_u64, 0_u64, 0_u64);
    loop {
        match round() {
            Side::Inside => inside += 1,
            Side::Refused => refused += 1,
        }
        rounds += 1;
        let raced =
            rounds >= RACE_ROUNDS && swapping.swaps() >= RACE_SWAPS && inside > 0 && refused > 0;
        if raced || Instant::now() > deadline {
            break;
        }
        if rounds % 64 == 0 {
            // Leave the swapping thread room on a machine with few cores.
            thread::yield_now();
        }
    }
    (inside, refused, swapping.finish())
}

const RACE_ROUNDS: u64 = 20_000;
const RACE_SWAPS: u64 = 1_000;

// ---------------------------------------------------------------------------
// read_output
// ---------------------------------------------------------------------------

#[test]
fn read_output_never_reads_through_a_link_swapped_in() {
    let dir = ScratchDir::new("files-race-read");
    let outside = ScratchDir::new("files-race-read-outside");
    fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    fs::write(dir.join("out.txt"), "inside").unwrap();
    let budget = OutputBudget::new(1_000, &dir);

    let swapping = swapper(
        &dir,
        "out.txt",
        b"inside".to_vec(),
        outside.join("secret.txt"),
    );
    let (read, refused, swaps) = race(swapping, || {
        match read_output("out.txt".into(), None, budget.clone()) {
            Ok(result) => {
                let text = result.to_text();
                assert!(!text.contains("SECRET"), "read outside the folder: {text}");
                assert!(text.ends_with("inside"), "{text}");
                Side::Inside
            }
            Err(ReadOutputError::NoSuchFile(_)) => Side::Refused,
            Err(other) => panic!("{other}"),
        }
    });
    // Both sides of the race were seen: it really raced.
    assert!(swaps >= RACE_SWAPS, "{swaps} swaps");
    assert!(read > 0 && refused > 0, "read {read}, refused {refused}");
}

#[test]
fn read_output_refuses_links_fifos_and_folders() {
    let dir = ScratchDir::new("files-kinds-read");
    let outside = ScratchDir::new("files-kinds-read-outside");
    fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    fs::write(dir.join("inside.txt"), "inside").unwrap();
    symlink(outside.join("secret.txt"), dir.join("link.txt")).unwrap();
    symlink(dir.join("inside.txt"), dir.join("inner-link.txt")).unwrap();
    fs::create_dir(dir.join("sub")).unwrap();
    mkfifo(&dir.join("pipe.txt"));
    let budget = OutputBudget::new(1_000, &dir);

    let read = |name: &str| {
        let (name, budget) = (name.to_owned(), budget.clone());
        within(Duration::from_secs(20), move || {
            read_output(name, None, budget).map(|result| result.to_text())
        })
    };
    assert!(read("inside.txt").unwrap().ends_with("inside"));
    for name in [
        "link.txt",
        "inner-link.txt",
        "sub",
        "pipe.txt",
        "missing.txt",
    ] {
        match read(name) {
            Err(ReadOutputError::NoSuchFile(file)) => assert_eq!(file, name),
            other => panic!("{name}: {other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------

fn image_turn(image: Image) -> Vec<ToolCallResult> {
    vec![ToolCallResult::new(
        "call_1",
        "screenshot",
        ToolResult::blocks([Block::image(image)]),
    )]
}

#[test]
fn path_images_never_read_through_a_link_swapped_in() {
    let dir = ScratchDir::new("files-race-image");
    let outside = ScratchDir::new("files-race-image-outside");
    let mut secret = png_bytes();
    secret.extend_from_slice(b"SECRET PIXELS");
    fs::write(outside.join("secret.png"), &secret).unwrap();
    let secret_data = STANDARD.encode(&secret);
    let inside_data = STANDARD.encode(png_bytes());
    fs::write(dir.join("shot.png"), png_bytes()).unwrap();
    let options = EmitOptions::default().with_image_dir(&dir);
    let image = Image::from_path("image/png", "shot.png").unwrap();
    let turn = image_turn(image);

    let swapping = swapper(&dir, "shot.png", png_bytes(), outside.join("secret.png"));
    let (sent, refused, swaps) = race(swapping, || {
        let emitted = emit::anthropic(&turn, &options);
        let text = emitted.to_json().to_string();
        assert!(
            !text.contains(&secret_data),
            "sent a file outside the folder"
        );
        if emitted.problems.is_empty() {
            assert!(text.contains(&inside_data));
            Side::Inside
        } else {
            assert!(
                matches!(
                    emitted.problems[0].error,
                    ImageError::OutsideImageDir { .. }
                ),
                "{:?}",
                emitted.problems
            );
            Side::Refused
        }
    });
    assert!(swaps >= RACE_SWAPS, "{swaps} swaps");
    assert!(sent > 0 && refused > 0, "sent {sent}, refused {refused}");
}

#[test]
fn path_images_refuse_links_fifos_and_climbing_and_keep_the_folder_private() {
    let dir = ScratchDir::new("files-kinds-image");
    let outside = ScratchDir::new("files-kinds-image-outside");
    fs::write(outside.join("secret.png"), png_bytes()).unwrap();
    fs::create_dir(dir.join("shots")).unwrap();
    fs::write(dir.join("shots/ok.png"), png_bytes()).unwrap();
    symlink(&outside, dir.join("elsewhere")).unwrap();
    symlink(dir.join("shots"), dir.join("shortcut")).unwrap();
    symlink(dir.join("shots/ok.png"), dir.join("inner-link.png")).unwrap();
    mkfifo(&dir.join("pipe.png"));
    let options = EmitOptions::default().with_image_dir(&dir);
    let folder = dir.to_str().unwrap().to_owned();

    let emit_one = |path: PathBuf| {
        let options = options.clone();
        within(Duration::from_secs(20), move || {
            let turn = image_turn(Image::from_path("image/png", path).unwrap());
            emit::openai_chat(&turn, &options)
        })
    };

    // Inside, by a relative or an absolute path: sent.
    for path in [PathBuf::from("shots/ok.png"), dir.join("shots/ok.png")] {
        let emitted = emit_one(path.clone());
        assert!(
            emitted.problems.is_empty(),
            "{path:?}: {:?}",
            emitted.problems
        );
    }

    type Expected = fn(&ImageError) -> bool;
    let refused: [(PathBuf, Expected); 9] = [
        ("elsewhere/secret.png".into(), |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        }),
        ("shortcut/ok.png".into(), |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        }),
        ("inner-link.png".into(), |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        }),
        (dir.join("inner-link.png"), |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        }),
        ("shots/../../secret.png".into(), |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        }),
        (outside.join("secret.png"), |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        }),
        ("pipe.png".into(), |e| {
            matches!(e, ImageError::Unreadable { .. })
        }),
        ("shots".into(), |e| {
            matches!(e, ImageError::Unreadable { .. })
        }),
        (dir.join("shots/missing.png"), |e| {
            matches!(e, ImageError::Unreadable { .. })
        }),
    ];
    for (path, expected) in refused {
        let emitted = emit_one(path.clone());
        assert_eq!(emitted.problems.len(), 1, "{path:?}");
        let error = &emitted.problems[0].error;
        assert!(expected(error), "{path:?}: {error:?}");
        // What the model reads names neither the folder nor the outside.
        let text = emitted.to_json().to_string();
        assert!(text.contains("[image not available: "), "{text}");
        assert!(
            !text.contains(&folder),
            "{path:?} reveals the folder: {text}"
        );
        assert!(
            !text.contains(outside.to_str().unwrap()),
            "{path:?} reveals a host path: {text}"
        );
    }

    // A folder that cannot be opened is not named to the model either.
    let missing_folder = dir.join("no-such-folder");
    let options = EmitOptions::default().with_image_dir(&missing_folder);
    let turn = image_turn(Image::from_path("image/png", "a.png").unwrap());
    let emitted = emit::openai_chat(&turn, &options);
    assert!(matches!(
        emitted.problems[0].error,
        ImageError::ImageDirUnavailable { .. }
    ));
    assert!(!emitted.to_json().to_string().contains(&folder));
}

// ---------------------------------------------------------------------------
// Saved outputs
// ---------------------------------------------------------------------------

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn saved_outputs_are_private() {
    let root = ScratchDir::new("files-private");
    let folder = root.join("agent").join("outputs");
    let mut history = History::with_budget(OutputBudget::new(10, &folder));
    history
        .record(vec![ToolCallResult::new(
            "call_1",
            "search",
            ToolResult::text("x".repeat(100)),
        )])
        .unwrap();
    let file = history.saved_file(1, 0).unwrap().to_path_buf();
    assert_eq!(fs::read_to_string(&file).unwrap(), "x".repeat(100));
    assert_eq!(mode(&folder), 0o700, "the folder");
    assert_eq!(
        mode(&root.join("agent")),
        0o700,
        "its parent, created with it"
    );
    assert_eq!(mode(&file), 0o600, "the file");
}

#[test]
fn a_planted_link_is_never_written_through() {
    let folder = ScratchDir::new("files-planted");
    let outside = ScratchDir::new("files-planted-outside");
    let target = outside.join("target.txt");
    fs::write(&target, "ORIGINAL").unwrap();
    symlink(&target, folder.join("step1-call1-call_1.txt")).unwrap();

    let mut history = History::with_budget(OutputBudget::new(10, &folder));
    let long = "y".repeat(100);
    history
        .record(vec![ToolCallResult::new(
            "call_1",
            "search",
            ToolResult::text(long.clone()),
        )])
        .unwrap();
    assert_eq!(fs::read_to_string(&target).unwrap(), "ORIGINAL");
    let file = history.saved_file(1, 0).unwrap();
    assert_eq!(file.file_name().unwrap(), "step1-call1-call_1-2.txt");
    assert_eq!(fs::read_to_string(file).unwrap(), long);
    // The model is told the name the output really went to.
    let seen = history.render();
    assert!(seen.contains("`step1-call1-call_1-2.txt`"), "{seen}");
    // The link is left as it was.
    assert_eq!(
        fs::read_link(folder.join("step1-call1-call_1.txt")).unwrap(),
        target
    );
}

#[test]
fn links_planted_while_recording_are_never_written_through() {
    const STEPS: usize = 300;
    let folder = ScratchDir::new("files-planting");
    let outside = ScratchDir::new("files-planting-outside");
    let target = outside.join("target.txt");
    fs::write(&target, "ORIGINAL").unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let planted = Arc::new(AtomicU64::new(0));
    let planter = {
        let (stop, planted) = (Arc::clone(&stop), Arc::clone(&planted));
        let (folder, target) = (folder.to_path_buf(), target.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for step in 1..=STEPS {
                    if symlink(&target, folder.join(format!("step{step}-call1-c.txt"))).is_ok() {
                        planted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        })
    };
    // Links are in place before the first output is saved, however late
    // the planting thread gets to run.
    while planted.load(Ordering::Relaxed) == 0 {
        thread::yield_now();
    }
    let mut history = History::with_budget(OutputBudget::new(5, &folder));
    for step in 1..=STEPS {
        let text = format!("step {step} output, long enough to be saved");
        history
            .record(vec![ToolCallResult::new(
                "c",
                "t",
                ToolResult::text(text.clone()),
            )])
            .unwrap();
        let file = history.saved_file(step, 0).unwrap();
        assert_eq!(fs::read_to_string(file).unwrap(), text);
        assert!(!fs::symlink_metadata(file).unwrap().is_symlink());
    }
    stop.store(true, Ordering::Relaxed);
    planter.join().unwrap();
    assert_eq!(fs::read_to_string(&target).unwrap(), "ORIGINAL");
}
