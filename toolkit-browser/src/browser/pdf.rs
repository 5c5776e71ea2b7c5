//! The text of a downloaded PDF (the `pdf` feature), read with `lopdf`
//! within bounds.
//!
//! A PDF is the page's, and a small one can hold a stream that inflates
//! to gigabytes: `lopdf` decompresses object and cross-reference streams
//! while loading and each page's content while extracting, all of it at
//! once. So before loading, every stream `lopdf` may decompress is
//! inflated into nothing, counting, up to [`MAX_PDF_DECODED_BYTES`] in
//! all; after loading and before extracting, the page count and the
//! decoded size of every page's content (a stream shared by pages counted
//! for each) are checked the same way. Over a limit, nothing is extracted
//! and the error says which limit.

use std::collections::HashMap;
use std::io::Write;

use crate::error::BrowserError;

/// The most bytes the streams of one PDF may decompress to, counted
/// before anything is decompressed for real; the same again for the
/// pages' content that text extraction decompresses.
pub const MAX_PDF_DECODED_BYTES: u64 = 128 << 20;

/// The most pages a PDF's text is extracted from.
pub const MAX_PDF_PAGES: usize = 5000;

/// The most text taken from one PDF.
const MAX_PDF_TEXT_BYTES: usize = 64 << 20;

/// The limits [`text`] works within (smaller in tests).
#[derive(Clone, Copy)]
struct Limits {
    decoded: u64,
    pages: usize,
}

const LIMITS: Limits = Limits {
    decoded: MAX_PDF_DECODED_BYTES,
    pages: MAX_PDF_PAGES,
};

/// The text of the PDF `bytes`, for the download `name`.
pub(super) fn text(bytes: &[u8], name: &str) -> Result<String, BrowserError> {
    text_within(bytes, name, LIMITS)
}

fn text_within(bytes: &[u8], name: &str, limits: Limits) -> Result<String, BrowserError> {
    let failed = |detail: &dyn std::fmt::Display| {
        BrowserError::invalid(format!(
            "the text of the PDF {name:?} cannot be extracted: {detail}"
        ))
    };
    let too_large = |what: &str| {
        failed(&format_args!(
            "{what} decompress to more than {} MiB, more than is read from one PDF",
            limits.decoded >> 20
        ))
    };
    if stored_streams_size(bytes, limits.decoded) > limits.decoded {
        return Err(too_large("its streams"));
    }
    // lopdf's reading refuses a page tree that loops and reads each
    // page's own content only, never a form drawn into it (which may draw
    // itself); a panic on a malformed file is still caught.
    let extracted = std::panic::catch_unwind(|| {
        LOADING.set((0, limits.decoded));
        let options = lopdf::LoadOptions {
            filter: Some(count_stream),
            ..lopdf::LoadOptions::default()
        };
        let loaded = lopdf::Document::load_mem_with_options(bytes, options);
        if LOADING.get().0 > limits.decoded {
            return Ok(Err(too_large("its streams")));
        }
        let document = loaded?;
        let pages = document.get_pages();
        if pages.len() > limits.pages {
            return Ok(Err(failed(&format_args!(
                "it has {} pages, more than the {} read from one PDF",
                pages.len(),
                limits.pages
            ))));
        }
        let mut content = 0u64;
        for page in pages.values() {
            for id in document.get_page_contents(*page) {
                if let Ok(stream) = document.get_object(id).and_then(lopdf::Object::as_stream) {
                    let filters: Vec<&[u8]> = stream.filters().unwrap_or_default();
                    let left = limits.decoded.saturating_sub(content);
                    content += decoded_size(&filters, &stream.content, left);
                    if content > limits.decoded {
                        return Ok(Err(too_large("its pages' contents")));
                    }
                }
            }
        }
        let ids: Vec<lopdf::ObjectId> = pages.values().copied().collect();
        lines_of(&document, &ids).map(Ok)
    });
    match extracted {
        Ok(Ok(Err(refused))) => Err(refused),
        Ok(Ok(Ok(text))) if text.len() > MAX_PDF_TEXT_BYTES => Err(failed(&format_args!(
            "its text is longer than {} MiB",
            MAX_PDF_TEXT_BYTES >> 20
        ))),
        Ok(Ok(Ok(text))) => Ok(text),
        Ok(Err(e)) => Err(failed(&e)),
        Err(_) => Err(failed(&"the file is malformed")),
    }
}

/// The text of `pages`, line by line: a line ends where the text moves
/// down (`Td`, `TD`, `T*`, a new text matrix lower or higher, the end of
/// a text object) and each page ends a paragraph. `lopdf`'s own
/// extraction keeps only `T*` and the end of a text object, so the lines
/// most writers place with a move run together ("Q3Revenue grew…"), and
/// so do the last line of a page and the first of the next.
fn lines_of(document: &lopdf::Document, pages: &[lopdf::ObjectId]) -> lopdf::Result<String> {
    let mut out = String::new();
    for &page in pages {
        let encodings: HashMap<Vec<u8>, lopdf::Encoding<'_>> = document
            .get_page_fonts(page)?
            .into_iter()
            .filter_map(|(name, font)| Some((name, font.get_font_encoding(document).ok()?)))
            .collect();
        let content = lopdf::content::Content::decode(&document.get_page_content(page)?)?;
        let mut encoding = None;
        // The vertical position of the last text matrix set (`Tm`).
        let mut matrix_y: Option<f32> = None;
        for operation in &content.operations {
            let operands = &operation.operands;
            let number = |i: usize| operands.get(i).and_then(|o| o.as_float().ok());
            match operation.operator.as_str() {
                "Tf" => {
                    encoding = operands
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|name| encodings.get(name));
                }
                "Tj" | "TJ" => show(&mut out, encoding, operands),
                "'" => {
                    end_line(&mut out);
                    show(&mut out, encoding, operands);
                }
                "\"" => {
                    end_line(&mut out);
                    show(&mut out, encoding, operands.get(2..).unwrap_or_default());
                }
                "T*" | "ET" => end_line(&mut out),
                "Td" | "TD" => match (number(0), number(1)) {
                    (_, Some(dy)) if dy != 0.0 => end_line(&mut out),
                    (Some(dx), _) if dx != 0.0 => space(&mut out),
                    _ => {}
                },
                "Tm" => {
                    // A matrix at the height of the last one continues
                    // its line; any other starts a line.
                    let y = number(5);
                    if matrix_y.is_some() && y == matrix_y {
                        space(&mut out);
                    } else {
                        end_line(&mut out);
                    }
                    matrix_y = y;
                }
                _ => {}
            }
            if out.len() > MAX_PDF_TEXT_BYTES {
                return Ok(out);
            }
        }
        end_line(&mut out);
        if pages.len() > 1 {
            out.push('\n');
        }
    }
    Ok(out.trim_end().to_owned() + "\n")
}

/// Adds the strings of a text-showing operation's operands: a large gap
/// in a `TJ` array (more than a tenth of the font size) is a space.
fn show(out: &mut String, encoding: Option<&lopdf::Encoding<'_>>, operands: &[lopdf::Object]) {
    let Some(encoding) = encoding else {
        return;
    };
    for operand in operands {
        match operand {
            lopdf::Object::String(bytes, _) => {
                let _ = encoding.write_to_string(bytes, out);
            }
            lopdf::Object::Array(items) => show(out, Some(encoding), items),
            gap if gap.as_float().is_ok_and(|g| g < -100.0) => space(out),
            _ => {}
        }
    }
}

/// Ends the current line (once: an empty line is a page's end only).
fn end_line(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

/// Separates two pieces of one line.
fn space(out: &mut String) {
    if !out.is_empty() && !out.ends_with([' ', '\n']) {
        out.push(' ');
    }
}

std::thread_local! {
    /// What the streams `lopdf` has loaded so far decompress to, and how
    /// much they may: [`count_stream`]'s state, since the reader takes a
    /// plain function. The reader runs on the calling thread.
    static LOADING: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// The reader's filter: counts what each stream it loads decompresses to
/// before the reader decompresses any (an object stream is unpacked
/// right after this), and drops every stream once the count is over the
/// limit. The byte scan before loading reads the file as a lexer would;
/// this counts what the reader itself took for a stream.
fn count_stream(id: (u32, u16), object: &mut lopdf::Object) -> Option<((u32, u16), lopdf::Object)> {
    if let lopdf::Object::Stream(stream) = object {
        let (used, cap) = LOADING.get();
        let image = stream
            .dict
            .get(b"Subtype")
            .and_then(lopdf::Object::as_name)
            .is_ok_and(|n| n == b"Image");
        let used = if image && !stream.dict.has_type(b"ObjStm") {
            used
        } else {
            let filters: Vec<&[u8]> = stream.filters().unwrap_or_default();
            used.saturating_add(decoded_size(
                &filters,
                &stream.content,
                cap.saturating_sub(used),
            ))
        };
        LOADING.set((used, cap));
        if used > cap {
            return None;
        }
        // The reader keeps the object it passed for an indirect object
        // (a stream is always one) and drops what is returned.
        return Some((id, lopdf::Object::Null));
    }
    // It keeps what is returned for an object unpacked from an object
    // stream (never a stream).
    Some((id, object.clone()))
}

/// What the streams `lopdf` may decompress while loading or reading text
/// decompress to, in all, counted up to a little over `cap`: every stream
/// of the file with a filter `lopdf` decodes, images excepted (they are
/// never decompressed for text). Read from the file's bytes, since
/// loading it is what is to be bounded.
fn stored_streams_size(bytes: &[u8], cap: u64) -> u64 {
    let mut total = 0u64;
    let mut at = 0;
    // Built only when a stream's length is a reference.
    let mut integers: Option<HashMap<(u64, u64), usize>> = None;
    while let Some(found) = find(&bytes[at..], b"stream") {
        // Every part of the file is looked at once: the dictionary is
        // looked for after the previous stream, and the next stream
        // after this one's data.
        let after_previous = at;
        let keyword = at + found;
        at = keyword + b"stream".len();
        if bytes[..keyword].ends_with(b"end") {
            continue;
        }
        // The reader allows spaces and tabs before the line's end.
        let eol = at
            + bytes[at..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
        let start = match &bytes[eol..] {
            [b'\r', b'\n', ..] => eol + 2,
            [b'\n' | b'\r', ..] => eol + 1,
            _ => continue,
        };
        // The dictionary: what lies between the object's start and the
        // keyword (a stream is always an indirect object's).
        let from = after_previous;
        let dict_start = rfind(&bytes[from..keyword], b"obj").map_or(from, |i| from + i);
        let dict = &bytes[dict_start..keyword];
        let length = match stream_length(dict) {
            Some(Length::Direct(n)) => Some(n),
            Some(Length::Indirect(id)) => integers
                .get_or_insert_with(|| integer_objects(bytes))
                .get(&id)
                .copied(),
            None => None,
        };
        // As the reader does: the declared length when there is one that
        // fits, else up to `endstream`.
        let end = length
            .and_then(|n| start.checked_add(n))
            .filter(|&end| end <= bytes.len())
            .unwrap_or_else(|| {
                find(&bytes[start..], b"endstream").map_or(bytes.len(), |i| start + i)
            });
        let data = &bytes[start..end];
        // An image is never decompressed for text, unless it is also what
        // the reader decompresses while loading (a dictionary naming
        // another type too is counted). A `/Filter` inside a string
        // could stand before the real one: each named is tried, and the
        // largest count kept.
        let image = names_after(dict, b"/Subtype").contains(&b"Image".as_slice())
            && find(dict, b"ObjStm").is_none()
            && find(dict, b"XRef").is_none();
        if !image {
            let left = cap.saturating_sub(total);
            total += each_after(dict, b"/Filter")
                .map(|filters| decoded_size(&filters, data, left))
                .max()
                .unwrap_or(0);
            if total > cap {
                return total;
            }
        }
        at = end.max(at);
    }
    total
}

/// A stream's `/Length`: a number, or a reference to an object holding it.
enum Length {
    Direct(usize),
    Indirect((u64, u64)),
}

fn stream_length(dict: &[u8]) -> Option<Length> {
    let at = find(dict, b"/Length")? + b"/Length".len();
    let rest = &dict[at..];
    if rest.first().is_some_and(u8::is_ascii_alphanumeric) {
        return None; // `/Length1` and such
    }
    let (first, rest) = integer(rest.trim_ascii_start())?;
    let rest = rest.trim_ascii_start();
    // `5 0 R` is a reference, whose value is elsewhere.
    if let Some((generation, after)) = integer(rest)
        && after.trim_ascii_start().starts_with(b"R")
    {
        return Some(Length::Indirect((first, generation)));
    }
    usize::try_from(first).ok().map(Length::Direct)
}

/// The number `text` starts with, and what follows it.
fn integer(text: &[u8]) -> Option<(u64, &[u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let value = std::str::from_utf8(&text[..digits]).ok()?.parse().ok()?;
    Some((value, &text[digits..]))
}

/// The objects of the file that hold nothing but a whole number
/// (`12 0 obj 4096 endobj`), by number and generation: where streams keep
/// lengths written after them.
fn integer_objects(bytes: &[u8]) -> HashMap<(u64, u64), usize> {
    let mut found = HashMap::new();
    let mut at = 0;
    while let Some(i) = find(&bytes[at..], b" obj") {
        let keyword = at + i;
        at = keyword + b" obj".len();
        let before = &bytes[keyword.saturating_sub(24)..keyword];
        let mut words = before.split(u8::is_ascii_whitespace).rev();
        let (Some(generation), Some(number)) = (words.next(), words.next()) else {
            continue;
        };
        let parse = |w: &[u8]| std::str::from_utf8(w).ok()?.parse::<u64>().ok();
        let (Some(number), Some(generation)) = (parse(number), parse(generation)) else {
            continue;
        };
        let Some((value, rest)) = integer(bytes[at..].trim_ascii_start()) else {
            continue;
        };
        if rest.trim_ascii_start().starts_with(b"endobj")
            && let Ok(value) = usize::try_from(value)
        {
            found.insert((number, generation), value);
        }
    }
    found
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// The names given to each `key` in a dictionary, first to last.
fn each_after<'a>(dict: &'a [u8], key: &'a [u8]) -> impl Iterator<Item = Vec<&'a [u8]>> + 'a {
    let mut at = 0;
    std::iter::from_fn(move || {
        let found = at + find(&dict[at..], key)?;
        at = found + key.len();
        Some(names_at(&dict[found..], key))
    })
}

/// The names given to `key` in a dictionary: `/Filter /FlateDecode` or
/// `/Filter [/ASCII85Decode /FlateDecode]`, without their slashes.
fn names_after<'a>(dict: &'a [u8], key: &[u8]) -> Vec<&'a [u8]> {
    match find(dict, key) {
        Some(at) => names_at(&dict[at..], key),
        None => Vec::new(),
    }
}

/// The names given to `key` at the start of `dict`.
fn names_at<'a>(dict: &'a [u8], key: &[u8]) -> Vec<&'a [u8]> {
    let rest = dict[key.len()..].trim_ascii_start();
    let (list, single) = match rest.first() {
        Some(b'[') => {
            let close = rest.iter().position(|&b| b == b']').unwrap_or(rest.len());
            (&rest[1..close], false)
        }
        Some(b'/') => (rest, true),
        _ => return Vec::new(),
    };
    let names = list
        .split(|b| b.is_ascii_whitespace() || *b == b'/')
        .filter(|n| !n.is_empty())
        .map(|n| {
            let end = n
                .iter()
                .position(|b| b"<>[]()%{}".contains(b))
                .unwrap_or(n.len());
            &n[..end]
        });
    if single {
        names.take(1).collect()
    } else {
        names.collect()
    }
}

/// What `data` decompresses to through `filters` (in decoding order, as
/// `lopdf` applies them), counted up to a little over `cap`. A filter
/// `lopdf` does not decode ends the chain, as it does there.
fn decoded_size(filters: &[&[u8]], data: &[u8], cap: u64) -> u64 {
    let Some((last, before)) = filters.split_last() else {
        return 0; // kept as stored: already counted in the file's size
    };
    let mut input = std::borrow::Cow::Borrowed(data);
    for filter in before {
        let mut out = Capped::new(Vec::new(), cap);
        if !decode(filter, &input, &mut out) {
            return 0;
        }
        if out.over {
            return out.written;
        }
        input = std::borrow::Cow::Owned(out.into_inner());
    }
    let mut counted = Capped::new(std::io::sink(), cap);
    decode(last, &input, &mut counted);
    counted.written
}

/// Decodes `data` with `filter` into `out`, up to its cap; false for a
/// filter `lopdf` does not decode.
fn decode<W: Write>(filter: &[u8], data: &[u8], out: &mut Capped<W>) -> bool {
    match filter {
        b"FlateDecode" => {
            let mut zlib = flate2::read::ZlibDecoder::new(data);
            let _ = std::io::copy(&mut zlib, out);
            // lopdf retries a stream that decodes to nothing as raw
            // deflate after a two-byte header.
            if out.written == 0 && data.len() > 2 {
                let mut raw = flate2::read::DeflateDecoder::new(&data[2..]);
                let _ = std::io::copy(&mut raw, out);
            }
            true
        }
        b"LZWDecode" => {
            // Both code-size switches lopdf may use; the later one
            // yields longer output, so it is the one counted.
            let mut decoder =
                weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
            let _ = decoder.into_stream(&mut *out).decode_all(data);
            true
        }
        b"ASCII85Decode" => {
            let _ = ascii85(data, out);
            true
        }
        _ => false,
    }
}

/// Decodes ASCII85 (`<~` … `~>`) as `lopdf` does, stopping where it does.
fn ascii85<W: Write>(data: &[u8], out: &mut W) -> std::io::Result<()> {
    let mut group = [0u8; 5];
    let mut count = 0;
    for &ch in data {
        match ch {
            b'~' => break,
            b'z' if count == 0 => out.write_all(&[0; 4])?,
            c if c.is_ascii_whitespace() => {}
            b'!'..=b'u' => {
                group[count] = ch - b'!';
                count += 1;
                if count == 5 {
                    let value = group
                        .iter()
                        .fold(0u32, |v, &d| v.wrapping_mul(85).wrapping_add(u32::from(d)));
                    out.write_all(&value.to_be_bytes())?;
                    count = 0;
                }
            }
            _ => break,
        }
    }
    if count > 1 {
        for slot in &mut group[count..] {
            *slot = 84;
        }
        let value = group
            .iter()
            .fold(0u32, |v, &d| v.wrapping_mul(85).wrapping_add(u32::from(d)));
        out.write_all(&value.to_be_bytes()[..count - 1])?;
    }
    Ok(())
}

/// A writer that counts what it is given and refuses more than its cap
/// (plus one byte, so that going over shows).
struct Capped<W> {
    inner: W,
    written: u64,
    cap: u64,
    over: bool,
}

impl<W: Write> Capped<W> {
    fn new(inner: W, cap: u64) -> Self {
        Self {
            inner,
            written: 0,
            cap,
            over: false,
        }
    }

    fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Capped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_add(1).saturating_sub(self.written);
        if room == 0 {
            self.over = true;
            return Err(std::io::Error::other("over the limit"));
        }
        let take = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.write(&buf[..take])?;
        self.written += n as u64;
        if self.written > self.cap {
            self.over = true;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Document, Object, Stream, dictionary};

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    /// A one-page PDF whose page shows `text`, with one more stream
    /// (`extra`, its dictionary entries and its stored bytes) when given.
    fn pdf(text: &str, repeats: usize, extra: Option<(lopdf::Dictionary, Vec<u8>)>) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier",
        });
        let content = format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET\n");
        let stream = Stream::new(
            dictionary! { "Filter" => "FlateDecode" },
            zlib(content.as_bytes()),
        );
        let content_id = doc.add_object(stream);
        let contents: Vec<Object> = (0..repeats)
            .map(|_| Object::Reference(content_id))
            .collect();
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => contents,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
            }),
        );
        if let Some((dict, bytes)) = extra {
            doc.add_object(Stream::new(dict, bytes).with_compression(false));
        }
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    const SMALL: Limits = Limits {
        decoded: 1 << 20,
        pages: 10,
    };

    #[test]
    fn a_small_pdf_is_read() {
        let text = text_within(&pdf("Hello bounds", 1, None), "a.pdf", SMALL).unwrap();
        assert!(text.contains("Hello bounds"), "{text:?}");
    }

    #[test]
    fn lines_placed_by_moves_stay_lines() {
        let shown = "Q3) Tj /F1 10 Tf 0 -30 Td (Revenue grew 42 percent) Tj 0 -16 Td (Costs) Tj \
                     120 0 Td (held ) Tj [(flat,) -250 (still)] TJ \
                     1 0 0 1 72 500 Tm (Codeword) Tj 1 0 0 1 200 500 Tm (heron";
        let text = text_within(&pdf(shown, 1, None), "a.pdf", SMALL).unwrap();
        assert_eq!(
            text,
            "Q3\nRevenue grew 42 percent\nCosts held flat, still\nCodeword heron\n"
        );
    }

    #[test]
    fn a_stream_that_inflates_past_the_limit_is_refused_before_loading() {
        // 2 MiB of zeros in about 10 KiB, twice the (test) limit.
        let bomb = zlib(&vec![0; 2 << 20]);
        assert!(bomb.len() < 16 << 10, "{}", bomb.len());
        // An object stream, which lopdf decompresses while loading (its
        // writer leaves object streams out, hence the renaming after).
        let extra =
            dictionary! { "Type" => "ObjStX", "N" => 0, "First" => 0, "Filter" => "FlateDecode" };
        let mut file = pdf("Hello", 1, Some((extra, bomb.clone())));
        let at = find(&file, b"/ObjStX").unwrap();
        file[at..at + 7].copy_from_slice(b"/ObjStm");
        let error = text_within(&file, "bomb.pdf", SMALL)
            .unwrap_err()
            .to_string();
        assert!(error.contains("decompress to more than 1 MiB"), "{error}");
        assert!(error.contains("bomb.pdf"), "{error}");
        // Nested filters are followed.
        let nested = zlib(&bomb);
        let extra = dictionary! {
            "Filter" => vec![Object::Name(b"FlateDecode".to_vec()), Object::Name(b"FlateDecode".to_vec())],
        };
        let file = pdf("Hello", 1, Some((extra, nested)));
        let error = text_within(&file, "nested.pdf", SMALL)
            .unwrap_err()
            .to_string();
        assert!(error.contains("decompress to more than"), "{error}");
        // An image is never decompressed for text, so it is not counted.
        let image = dictionary! { "Subtype" => "Image", "Filter" => "FlateDecode" };
        let file = pdf("Pictured", 1, Some((image, bomb)));
        assert!(
            text_within(&file, "image.pdf", SMALL)
                .unwrap()
                .contains("Pictured")
        );
    }

    /// A stream object as a file holds it, with `dict` before `stream`
    /// and `gap` between the keyword and the line's end.
    fn stored(dict: &str, gap: &str, data: &[u8]) -> Vec<u8> {
        let mut out = format!("1 0 obj\n{dict}\nstream{gap}\n").into_bytes();
        out.extend_from_slice(data);
        out.extend_from_slice(b"\nendstream\nendobj\n");
        out
    }

    #[test]
    fn the_scan_reads_streams_as_the_reader_does() {
        let bomb = zlib(&vec![0; 2 << 20]);
        let cap = SMALL.decoded;
        let over = |file: &[u8]| stored_streams_size(file, cap) > cap;
        let length = bomb.len();
        // Spaces before the line's end, which the reader allows.
        let dict = format!("<< /Filter /FlateDecode /Length {length} >>");
        assert!(over(&stored(&dict, " \t ", &bomb)));
        // A `/Filter` in a string before the real one.
        let dict = format!("<< /Note (/Filter /X) /Filter /FlateDecode /Length {length} >>");
        assert!(over(&stored(&dict, "", &bomb)));
        // A dictionary longer than any window.
        let padding = "/Pad 0 ".repeat(2000);
        let dict = format!("<< {padding} /Filter /FlateDecode /Length {length} >>");
        assert!(over(&stored(&dict, "", &bomb)));
        // An object stream calling itself an image is still unpacked on
        // loading; a real image is not counted.
        let dict =
            format!("<< /Type /ObjStm /Subtype /Image /Filter /FlateDecode /Length {length} >>");
        assert!(over(&stored(&dict, "", &bomb)));
        let dict = format!("<< /Subtype /Image /Filter /FlateDecode /Length {length} >>");
        assert!(!over(&stored(&dict, "", &bomb)));
    }

    #[test]
    fn the_reader_s_own_streams_are_counted_before_it_unpacks_them() {
        let bomb = zlib(&vec![0; 2 << 20]);
        let count = |dict: lopdf::Dictionary| {
            LOADING.set((0, SMALL.decoded));
            let mut object = Object::Stream(Stream::new(dict, bomb.clone()));
            let kept = count_stream((1, 0), &mut object).is_some();
            (kept, LOADING.get().0 > SMALL.decoded)
        };
        let objects =
            dictionary! { "Type" => "ObjStm", "Subtype" => "Image", "Filter" => "FlateDecode" };
        assert_eq!(count(objects), (false, true), "dropped, and over the limit");
        let image = dictionary! { "Subtype" => "Image", "Filter" => "FlateDecode" };
        assert_eq!(count(image), (true, false));
        let small = dictionary! { "Filter" => "FlateDecode" };
        LOADING.set((0, SMALL.decoded));
        let mut object = Object::Stream(Stream::new(small, zlib(b"BT ET")));
        assert!(count_stream((2, 0), &mut object).is_some());
        assert_eq!(LOADING.get().0, 5);
    }

    #[test]
    fn page_contents_are_counted_for_every_page_that_uses_them() {
        // One small stream, drawn 20000 times over: each copy is
        // decompressed again by the extraction.
        let file = pdf(&"x".repeat(60), 20_000, None);
        assert!(stored_streams_size(&file, SMALL.decoded) < SMALL.decoded);
        let error = text_within(&file, "many.pdf", SMALL)
            .unwrap_err()
            .to_string();
        assert!(error.contains("pages' contents"), "{error}");
        let no_pages = Limits { pages: 0, ..SMALL };
        let error = text_within(&pdf("x", 1, None), "one.pdf", no_pages).unwrap_err();
        assert!(
            error.to_string().contains("more than the 0 read"),
            "{error}"
        );
    }

    #[test]
    fn lengths_are_read_direct_or_through_their_object() {
        assert!(matches!(
            stream_length(b"<< /Length 42 >>"),
            Some(Length::Direct(42))
        ));
        assert!(matches!(
            stream_length(b"<</Length 7 0 R/Filter/FlateDecode>>"),
            Some(Length::Indirect((7, 0)))
        ));
        assert!(stream_length(b"<< /Length1 42 >>").is_none());
        let file =
            b"1 0 obj\n<< /Length 2 0 R >>\nstream\nabc\nendstream\nendobj\n2 0 obj\n3\nendobj\n";
        assert_eq!(integer_objects(file).get(&(2, 0)), Some(&3));
        assert_eq!(integer_objects(file).len(), 1);
    }

    #[test]
    fn ascii85_decodes_as_the_reader_does() {
        let mut out = Vec::new();
        ascii85(b"87cURD]i,\"Ebo80~>", &mut out).unwrap();
        assert_eq!(out, b"Hello World!");
        let mut zeros = Vec::new();
        ascii85(b"zz~>", &mut zeros).unwrap();
        assert_eq!(zeros, [0; 8]);
    }
}
