//! The record as an animated GIF: one frame per step, then the page at
//! the end, each scaled down to [`MAX_GIF_WIDTH`] and mapped onto one
//! fixed palette.
//!
//! A fixed palette (a 6×6×6 colour cube and 40 greys) rather than one
//! quantized per frame: screenshots are mostly text on flat colours, the
//! outline colour is exactly on the cube, every frame costs one pass over
//! its pixels, and the GIF encoder is built without its quantizer.

use std::io::Cursor;

use super::{MAX_GIF_WIDTH, RecordError};

/// How long a step's frame shows, in hundredths of a second.
const STEP_DELAY: u16 = 150;

/// How long the last frame (the page at the end) shows.
const END_DELAY: u16 = 300;

/// The grey of a frame whose screenshot is missing (the palette's index).
const MISSING: u8 = 216 + 30;

/// The levels of the colour cube's channels.
const LEVELS: [u8; 6] = [0, 51, 102, 153, 204, 255];

/// How many greys the palette holds besides the cube's own.
const GREYS: u32 = 40;

/// The GIF of `frames` (PNG screenshots; `None` where a step has none).
///
/// Frames are decoded, scaled and written one at a time, so what is held
/// besides the output is one frame: a record of many steps would otherwise
/// hold every screenshot decoded (4 MB each at 1280×800) at once.
pub(super) fn encode(frames: &[Option<&[u8]>]) -> Result<Vec<u8>, RecordError> {
    // The first screenshot that decodes sets the size; it is kept (one
    // frame) so that it is not decoded twice.
    let mut first = frames
        .iter()
        .enumerate()
        .find_map(|(n, png)| Some((n, Rgb::decode((*png)?).ok()?)));
    let (width, height) = first
        .as_ref()
        .map_or((MAX_GIF_WIDTH, MAX_GIF_WIDTH * 5 / 8), |(_, rgb)| {
            scaled_size(rgb.width, rgb.height)
        });
    let (w16, h16) = (
        u16::try_from(width).map_err(|_| RecordError::Image("frame too wide".into()))?,
        u16::try_from(height).map_err(|_| RecordError::Image("frame too tall".into()))?,
    );
    let palette = palette();
    let mut out = Vec::new();
    {
        let image = |e: gif::EncodingError| RecordError::Image(e.to_string());
        let mut encoder = gif::Encoder::new(&mut out, w16, h16, &palette).map_err(image)?;
        encoder.set_repeat(gif::Repeat::Infinite).map_err(image)?;
        let last = frames.len().saturating_sub(1);
        for (n, png) in frames.iter().enumerate() {
            let decoded = match first.take() {
                Some((at, rgb)) if at == n => Some(rgb),
                kept => {
                    first = kept;
                    png.and_then(|png| Rgb::decode(png).ok())
                }
            };
            let indices = match decoded {
                Some(rgb) => rgb.indices_scaled(width, height),
                None => vec![MISSING; (width * height) as usize],
            };
            let frame = gif::Frame {
                delay: if n == last { END_DELAY } else { STEP_DELAY },
                width: w16,
                height: h16,
                buffer: indices.into(),
                ..gif::Frame::default()
            };
            encoder.write_frame(&frame).map_err(image)?;
        }
    }
    Ok(out)
}

/// The size a frame of `width`×`height` is scaled to.
fn scaled_size(width: u32, height: u32) -> (u32, u32) {
    let width = width.max(1);
    if width <= MAX_GIF_WIDTH {
        return (width, height.max(1));
    }
    let scaled =
        (u64::from(height) * u64::from(MAX_GIF_WIDTH) + u64::from(width) / 2) / u64::from(width);
    (MAX_GIF_WIDTH, u32::try_from(scaled).unwrap_or(1).max(1))
}

/// The palette: the 216 colours of the cube, then the greys.
fn palette() -> Vec<u8> {
    let mut palette = Vec::with_capacity(256 * 3);
    for r in LEVELS {
        for g in LEVELS {
            for b in LEVELS {
                palette.extend_from_slice(&[r, g, b]);
            }
        }
    }
    for k in 1..=GREYS {
        let grey = u8::try_from(k * 255 / (GREYS + 1)).unwrap_or(u8::MAX);
        palette.extend_from_slice(&[grey, grey, grey]);
    }
    palette
}

/// The palette index nearest to a colour: its cube colour or its grey,
/// whichever is closer.
fn index_of(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| (u32::from(v) + 25) / 51;
    let (lr, lg, lb) = (level(r), level(g), level(b));
    let cube = u8::try_from(lr * 36 + lg * 6 + lb).unwrap_or(0);
    let distance = |a: [u32; 3], b: [u32; 3]| -> u32 {
        a.iter().zip(b).map(|(x, y)| x.abs_diff(y).pow(2)).sum()
    };
    let pixel = [u32::from(r), u32::from(g), u32::from(b)];
    let to_cube = distance(pixel, [lr * 51, lg * 51, lb * 51]);
    let mean = (pixel[0] + pixel[1] + pixel[2]) / 3;
    let k = ((mean * (GREYS + 1) + 127) / 255).clamp(1, GREYS);
    let grey = k * 255 / (GREYS + 1);
    if distance(pixel, [grey; 3]) < to_cube {
        u8::try_from(216 + k - 1).unwrap_or(0)
    } else {
        cube
    }
}

/// An image as RGB rows.
struct Rgb {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Rgb {
    fn decode(png_bytes: &[u8]) -> Result<Self, String> {
        let mut decoder = png::Decoder::new(Cursor::new(png_bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
        let size = reader
            .output_buffer_size()
            .ok_or("the screenshot is too large")?;
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
        let channels = info.color_type.samples();
        let mut pixels = Vec::with_capacity(info.width as usize * info.height as usize * 3);
        for p in buf[..info.buffer_size()].chunks_exact(channels) {
            match channels {
                1 | 2 => pixels.extend_from_slice(&[p[0], p[0], p[0]]),
                _ => pixels.extend_from_slice(&p[..3]),
            }
        }
        Ok(Self {
            width: info.width,
            height: info.height,
            pixels,
        })
    }

    /// The image scaled to `width`×`height`, each pixel the mean of the
    /// pixels it covers.
    fn scaled(&self, width: u32, height: u32) -> Self {
        let span = |t: u32, to: u32, from: u32| {
            let start = u64::from(t) * u64::from(from) / u64::from(to);
            let end = (u64::from(t + 1) * u64::from(from) / u64::from(to)).max(start + 1);
            (start as usize, (end as usize).min(from as usize))
        };
        let mut pixels = Vec::with_capacity(width as usize * height as usize * 3);
        for ty in 0..height {
            let (y0, y1) = span(ty, height, self.height);
            for tx in 0..width {
                let (x0, x1) = span(tx, width, self.width);
                let mut sum = [0u32; 3];
                let mut count = 0u32;
                for y in y0..y1 {
                    let row = y * self.width as usize;
                    for x in x0..x1 {
                        let at = (row + x) * 3;
                        for (c, s) in sum.iter_mut().enumerate() {
                            *s += u32::from(self.pixels[at + c]);
                        }
                        count += 1;
                    }
                }
                let count = count.max(1);
                pixels.extend(sum.map(|s| u8::try_from(s / count).unwrap_or(u8::MAX)));
            }
        }
        Self {
            width,
            height,
            pixels,
        }
    }

    /// The palette indices of the image scaled to `width`×`height`.
    fn indices_scaled(self, width: u32, height: u32) -> Vec<u8> {
        if (width, height) == (self.width, self.height) {
            self.indices()
        } else {
            self.scaled(width, height).indices()
        }
    }

    fn indices(&self) -> Vec<u8> {
        self.pixels
            .chunks_exact(3)
            .map(|p| index_of(p[0], p[1], p[2]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_has_256_colours_and_keeps_cube_colours_exact() {
        let palette = palette();
        assert_eq!(palette.len(), 256 * 3);
        for colour in [[255, 0, 102], [255, 255, 255], [0, 0, 0], [51, 204, 153]] {
            let i = usize::from(index_of(colour[0], colour[1], colour[2]));
            assert_eq!(palette[i * 3..i * 3 + 3], colour);
        }
        // A grey between two cube levels goes to a grey of its own.
        let i = usize::from(index_of(120, 120, 120));
        assert!(i >= 216, "{i}");
        assert!(palette[i * 3].abs_diff(120) <= 4, "{}", palette[i * 3]);
    }

    #[test]
    fn wide_frames_are_scaled_to_the_limit() {
        assert_eq!(scaled_size(1280, 800), (800, 500));
        assert_eq!(scaled_size(640, 480), (640, 480));
        assert_eq!(scaled_size(10_000, 1), (800, 1));
        let image = Rgb {
            width: 4,
            height: 2,
            pixels: [[0, 0, 0], [255, 255, 255], [255, 0, 0], [255, 0, 0]]
                .repeat(2)
                .concat(),
        };
        let half = image.scaled(2, 1);
        assert_eq!(half.pixels, [127, 127, 127, 255, 0, 0]);
    }

    /// A PNG of `width`×`height` filled with one colour.
    fn png_of(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer
            .write_image_data(&rgb.repeat((width * height) as usize))
            .unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn frames_are_written_one_by_one_at_the_first_frame_s_size() {
        let red = png_of(1600, 1000, [255, 0, 0]);
        let white = png_of(800, 500, [255, 255, 255]);
        let broken = b"not a png".to_vec();
        let frames = [
            None,
            Some(broken.as_slice()),
            Some(red.as_slice()),
            Some(white.as_slice()),
        ];
        let gif_bytes = encode(&frames).unwrap();
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::Indexed);
        let mut decoder = options.read_info(gif_bytes.as_slice()).unwrap();
        assert_eq!((decoder.width(), decoder.height()), (800, 500));
        let mut seen = Vec::new();
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            assert_eq!((frame.width, frame.height), (800, 500));
            let first = frame.buffer[0];
            assert!(frame.buffer.iter().all(|&i| i == first));
            seen.push((first, frame.delay));
        }
        let (red, white) = (index_of(255, 0, 0), index_of(255, 255, 255));
        assert_eq!(
            seen,
            [
                (MISSING, STEP_DELAY),
                (MISSING, STEP_DELAY),
                (red, STEP_DELAY),
                (white, END_DELAY),
            ]
        );
    }
}
