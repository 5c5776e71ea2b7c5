//! Emitting a result that holds a 1 MiB PNG, against base64-encoding the same
//! bytes alone, measured in the same run (docs/performance.md).

use std::hint::black_box;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use criterion::{Criterion, criterion_group, criterion_main};
use toolkit_core::emit::{self, EmitOptions, Emitted};
use toolkit_core::{Block, Image, ToolCallResult, ToolResult};

const MIB: usize = 1 << 20;

/// A valid PNG of exactly `size` bytes: a greyscale image of noise, stored
/// without compression so that its size is what we ask for.
fn png_of_size(size: usize) -> Vec<u8> {
    // Fixed overhead: signature 8, IHDR 25, IDAT framing 12 + zlib 2 + adler 4, IEND 12.
    let overhead = 8 + 25 + 12 + 2 + 4 + 12;
    // Each stored deflate block adds 5 bytes and holds up to 65,535 bytes;
    // each row adds its filter byte. Pick the width, then the height, that
    // come closest from below, and pad the rest with an ancillary chunk.
    let width: usize = 1024;
    let mut height = 1;
    let idat_len = |h: usize| {
        let raw = h * (width + 1);
        raw + raw.div_ceil(65_535) * 5
    };
    while overhead + idat_len(height + 1) + 12 <= size {
        height += 1;
    }
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut noise = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as u8
    };
    // Each row: the filter byte (0, none), then the pixels.
    let mut raw = Vec::with_capacity(height * (width + 1));
    for _ in 0..height {
        raw.extend(std::iter::once(0).chain((0..width).map(|_| noise())));
    }
    let mut zlib = vec![0x78, 0x01];
    let chunks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == chunks.len()));
        let len = chunk.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(chunk);
    }
    zlib.extend_from_slice(&adler32(&raw).to_be_bytes());

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&(width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(height as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit greyscale
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &zlib);
    let padding = size - png.len() - 12 - 12;
    chunk(&mut png, b"teXt", &vec![b'x'; padding]);
    chunk(&mut png, b"IEND", &[]);
    assert_eq!(png.len(), size);
    png
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in bytes {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

type Emitter = fn(&[ToolCallResult], &EmitOptions) -> Emitted;

const DIALECTS: [(&str, Emitter); 5] = [
    ("openai_chat", emit::openai_chat),
    ("openai_responses", emit::openai_responses),
    ("anthropic", emit::anthropic),
    ("gemini", emit::gemini),
    ("mcp", emit::mcp),
];

fn bench(c: &mut Criterion) {
    let png = png_of_size(MIB);
    let image = Image::png(&png).expect("a valid PNG");
    let turn = [ToolCallResult::new(
        "call_1",
        "screenshot",
        ToolResult::blocks([Block::text("The page."), Block::image(image)]),
    )];
    let options = EmitOptions::default();

    let dir = std::env::temp_dir().join(format!("toolkit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("shot.png"), &png).unwrap();
    let path_turn = [ToolCallResult::new(
        "call_1",
        "screenshot",
        ToolResult::blocks([
            Block::text("The page."),
            Block::image(Image::from_file(dir.join("shot.png")).unwrap()),
        ]),
    )];
    let path_options = EmitOptions::default().with_image_dir(&dir);

    let mut group = c.benchmark_group("png_1mib");
    group.bench_function("base64_encode", |b| {
        b.iter(|| STANDARD.encode(black_box(&png)))
    });
    for (name, emitter) in DIALECTS {
        group.bench_function(format!("emit/{name}"), |b| {
            b.iter(|| emitter(black_box(&turn), &options))
        });
        // What reaches the wire: emission plus serde_json's serialization,
        // into a fresh buffer as most HTTP clients do, and into a reused one.
        group.bench_function(format!("emit_to_vec/{name}"), |b| {
            b.iter(|| serde_json::to_vec(&emitter(black_box(&turn), &options).items).unwrap())
        });
        let mut buffer = Vec::with_capacity(2 * MIB);
        group.bench_function(format!("emit_to_reused_buffer/{name}"), |b| {
            b.iter(|| {
                buffer.clear();
                serde_json::to_writer(&mut buffer, &emitter(black_box(&turn), &options).items)
                    .unwrap();
                buffer.len()
            })
        });
    }
    group.bench_function("emit_from_file/openai_chat", |b| {
        b.iter(|| emit::openai_chat(black_box(&path_turn), &path_options))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
