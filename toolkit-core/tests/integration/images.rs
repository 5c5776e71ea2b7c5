//! Image validation: every way an image can be wrong is a clear error where
//! it is made or where it is emitted, never a silently broken message.

use serde_json::json;
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Block, Image, ImageError, ImageSource, ToolCallResult, ToolResult};
use toolkit_tests::fixtures::{PNG_BASE64, ScratchDir, png_bytes};

fn one_image_turn(image: Image) -> Vec<ToolCallResult> {
    vec![ToolCallResult::new(
        "call_1",
        "screenshot",
        ToolResult::blocks([
            Block::text("before"),
            Block::image(image),
            Block::text("after"),
        ]),
    )]
}

#[test]
fn both_or_neither_source_is_an_error() {
    assert_eq!(
        Image::from_parts("image/png", Some(PNG_BASE64.into()), Some("a.png".into())),
        Err(ImageError::BothDataAndPath)
    );
    assert_eq!(
        Image::from_parts("image/png", None, None),
        Err(ImageError::NeitherDataNorPath)
    );
    assert!(Image::from_parts("image/png", Some(PNG_BASE64.into()), None).is_ok());
    assert!(Image::from_parts("image/png", None, Some("a.png".into())).is_ok());
}

#[test]
fn deserializing_validates_too() {
    let both = json!({"mime_type": "image/png", "data": PNG_BASE64, "path": "a.png"});
    let error = serde_json::from_value::<Image>(both).unwrap_err();
    assert!(
        error.to_string().contains("both base64 data and a path"),
        "{error}"
    );

    let neither = json!({"mime_type": "image/png"});
    let error = serde_json::from_value::<Image>(neither).unwrap_err();
    assert!(error.to_string().contains("neither"), "{error}");

    let good = json!({"mime_type": "image/png", "data": PNG_BASE64});
    let image: Image = serde_json::from_value(good.clone()).unwrap();
    assert_eq!(serde_json::to_value(&image).unwrap(), good);
}

#[test]
fn a_mime_type_that_is_not_an_image_is_an_error() {
    for mime in ["text/plain", "application/pdf", "image/", "png", ""] {
        let error = Image::from_base64(mime, PNG_BASE64).unwrap_err();
        assert!(
            matches!(error, ImageError::NotAnImage { .. }),
            "{mime:?}: {error:?}"
        );
        assert!(error.to_string().contains("not an image MIME type"));
    }
    assert!(Image::from_path("audio/wav", "a.wav").is_err());
}

#[test]
fn invalid_base64_is_an_error() {
    for data in ["not base64!", "iVBORw0KGgo", "data:image/png;base64,iVBO"] {
        let error = Image::from_base64("image/png", data).unwrap_err();
        assert!(
            matches!(error, ImageError::InvalidBase64 { .. }),
            "{data:?}: {error:?}"
        );
    }
}

#[test]
fn bytes_of_another_format_are_an_error() {
    let error = Image::jpeg(&png_bytes()).unwrap_err();
    assert_eq!(
        error,
        ImageError::WrongFormat {
            declared: "image/jpeg".into(),
            found: Some("image/png"),
        }
    );
    assert!(error.to_string().contains("holds image/png data"));
    assert!(Image::png(b"plain text").is_err());
    assert!(Image::png(&png_bytes()).is_ok());
}

#[test]
fn file_type_comes_from_the_extension() {
    assert_eq!(
        Image::from_file("shot.PNG").unwrap().mime_type(),
        "image/png"
    );
    assert_eq!(
        Image::from_file("a.jpeg").unwrap().mime_type(),
        "image/jpeg"
    );
    assert!(matches!(
        Image::from_file("notes.txt"),
        Err(ImageError::UnknownExtension { .. })
    ));
}

#[test]
fn a_path_image_is_read_at_emission_inside_the_allowed_folder() {
    let dir = ScratchDir::new("images-inside");
    std::fs::write(dir.join("shot.png"), png_bytes()).unwrap();
    let image = Image::from_file(dir.join("shot.png")).unwrap();
    assert!(matches!(image.source(), ImageSource::Path(_)));

    let options = EmitOptions::default().with_image_dir(&dir);
    let emitted = emit::mcp(&one_image_turn(image.clone()), &options);
    assert!(emitted.problems.is_empty(), "{:?}", emitted.problems);
    assert_eq!(
        emitted.items[0]["content"][1],
        json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"})
    );

    // A relative path is taken inside the folder.
    let relative = Image::from_path("image/png", "shot.png").unwrap();
    let emitted = emit::mcp(&one_image_turn(relative), &options);
    assert!(emitted.problems.is_empty(), "{:?}", emitted.problems);

    // The file is read when emitted, not when the result is built.
    std::fs::write(dir.join("shot.png"), b"no longer a png").unwrap();
    let emitted = emit::mcp(&one_image_turn(image), &options);
    assert!(matches!(
        emitted.problems[0].error,
        ImageError::WrongFormat { .. }
    ));
}

/// Checks that the image was replaced, in place, by a text block naming the
/// problem, in every dialect, and that the host got the typed error.
fn assert_refused(image: Image, options: &EmitOptions, expect: fn(&ImageError) -> bool) {
    let turn = one_image_turn(image);
    for (name, emitted) in [
        ("openai_chat", emit::openai_chat(&turn, options)),
        ("openai_responses", emit::openai_responses(&turn, options)),
        ("anthropic", emit::anthropic(&turn, options)),
        ("gemini", emit::gemini(&turn, options)),
        ("mcp", emit::mcp(&turn, options)),
    ] {
        assert_eq!(emitted.problems.len(), 1, "{name}");
        let problem = &emitted.problems[0];
        assert_eq!((problem.call_id.as_str(), problem.block), ("call_1", 1));
        assert!(expect(&problem.error), "{name}: {:?}", problem.error);
        let text = serde_json::to_string(&emitted.items).unwrap();
        assert!(text.contains("[image not available: "), "{name}: {text}");
        assert!(!text.contains(PNG_BASE64), "{name}: {text}");
        let (before, after) = (text.find("before").unwrap(), text.find("after").unwrap());
        let notice = text.find("[image not available").unwrap();
        assert!(before < notice && notice < after, "{name}: order kept");
    }
}

#[test]
fn a_path_outside_the_allowed_folder_is_refused() {
    let allowed = ScratchDir::new("images-allowed");
    let outside = ScratchDir::new("images-outside");
    std::fs::write(outside.join("secret.png"), png_bytes()).unwrap();
    let options = EmitOptions::default().with_image_dir(&allowed);

    let absolute = Image::from_file(outside.join("secret.png")).unwrap();
    assert_refused(absolute, &options, |e| {
        matches!(e, ImageError::OutsideImageDir { .. })
    });

    let escaping = Image::from_path(
        "image/png",
        format!(
            "../{}/secret.png",
            outside.file_name().unwrap().to_str().unwrap()
        ),
    )
    .unwrap();
    assert_refused(escaping, &options, |e| {
        matches!(e, ImageError::OutsideImageDir { .. })
    });

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("secret.png"), allowed.join("link.png")).unwrap();
        let linked = Image::from_file(allowed.join("link.png")).unwrap();
        assert_refused(linked, &options, |e| {
            matches!(e, ImageError::OutsideImageDir { .. })
        });
    }
}

#[test]
fn path_images_need_an_allowed_folder() {
    let dir = ScratchDir::new("images-nofolder");
    std::fs::write(dir.join("shot.png"), png_bytes()).unwrap();
    let image = Image::from_file(dir.join("shot.png")).unwrap();
    assert_refused(image, &EmitOptions::default(), |e| {
        matches!(e, ImageError::NoImageDir { .. })
    });
}

#[test]
fn a_missing_file_is_refused() {
    let dir = ScratchDir::new("images-missing");
    let image = Image::from_file(dir.join("gone.png")).unwrap();
    let options = EmitOptions::default().with_image_dir(&dir);
    assert_refused(image, &options, |e| {
        matches!(e, ImageError::Unreadable { .. })
    });
}

#[test]
fn a_type_the_provider_refuses_is_reported() {
    let bmp = Image::from_base64("image/bmp", "Qk0=").unwrap();
    let turn = one_image_turn(bmp);
    let options = EmitOptions::default();
    for emitted in [
        emit::openai_chat(&turn, &options),
        emit::anthropic(&turn, &options),
        emit::gemini(&turn, &options),
    ] {
        assert!(matches!(
            emitted.problems[0].error,
            ImageError::Unsupported { .. }
        ));
    }
    // MCP carries any image type.
    assert!(emit::mcp(&turn, &options).problems.is_empty());
}
