//! Why a schema could not be made canonical, or lowered for a provider.

use std::fmt;

use super::keywords::show_path;

/// Why a generated schema could not be made canonical.
///
/// Each of these is a bug in the code that produced the schema or the
/// parameter order, not something a tool author can hit with ordinary
/// types; the message says what was found where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// The root does not describe a JSON object: tool arguments are always
    /// an object of named parameters.
    RootNotObject {
        /// What the root is instead, e.g. `type "array"` or `a boolean`.
        found: String,
    },
    /// A keyword that must hold a schema holds something else.
    NotASchema {
        /// Where, e.g. `properties.tags.items`.
        path: String,
        /// What was found, e.g. `a number`.
        found: String,
    },
    /// The parameter order names a parameter the schema does not have.
    UnknownParam {
        /// The name.
        name: String,
    },
    /// The parameter order names a parameter twice.
    DuplicateParam {
        /// The name.
        name: String,
    },
    /// A `$ref` that does not point into the schema's own `$defs` (or at
    /// the root, `#`).
    UnsupportedRef {
        /// Where the reference is.
        path: String,
        /// The reference.
        reference: String,
    },
    /// A `$ref` to a definition the schema does not have.
    MissingDefinition {
        /// Where the reference is.
        path: String,
        /// The definition's name.
        name: String,
    },
    /// The schema nests deeper than this module will follow.
    TooDeep {
        /// The JSON nesting depth found.
        depth: usize,
        /// The most this module accepts.
        limit: usize,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RootNotObject { found } => write!(
                f,
                "the parameter schema's root must be an object schema (`\"type\": \"object\"`), \
                 found {found}: tool arguments are an object of named parameters"
            ),
            Self::NotASchema { path, found } => write!(
                f,
                "{} must be a schema (an object or a boolean), found {found}",
                show_path(path)
            ),
            Self::UnknownParam { name } => write!(
                f,
                "the parameter order names `{name}`, which is not a property of the schema; \
                 names must be the serialized (serde-renamed) property names"
            ),
            Self::DuplicateParam { name } => {
                write!(f, "the parameter order names `{name}` twice")
            }
            Self::UnsupportedRef { path, reference } => write!(
                f,
                "the `$ref` at {} is `{reference}`; only `#` and `#/$defs/NAME` are supported",
                show_path(path)
            ),
            Self::MissingDefinition { path, name } => write!(
                f,
                "the `$ref` at {} points to `#/$defs/{name}`, which the schema does not define",
                show_path(path)
            ),
            Self::TooDeep { depth, limit } => write!(
                f,
                "the schema nests {depth} levels deep; at most {limit} are accepted"
            ),
        }
    }
}

impl std::error::Error for SchemaError {}

/// A form of JSON Schema a provider takes; each provider's forms are
/// given by [`Provider::schema_dialects`](crate::Provider::schema_dialects).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// The canonical schema as it is: OpenAI without strict mode, Anthropic,
    /// MCP.
    Canonical,
    /// OpenAI Structured Outputs (`"strict": true`), Chat and Responses.
    OpenAiStrict,
    /// Gemini's `parameters` (an OpenAPI 3.0 subset).
    Gemini,
    /// Gemini's `parametersJsonSchema`: the canonical schema itself, for
    /// tools `parameters` cannot express (recursive types, free-form
    /// values, maps, names outside its alphabet).
    GeminiJsonSchema,
    /// The schema as its author wrote it, every keyword kept (`$schema`,
    /// `$defs`, `$anchor`, `$ref`): what MCP receives for a tool whose
    /// schema was given as JSON (a run-time tool's, an MCP server's). A
    /// tool whose schema is derived from its Rust types has no written
    /// form, and MCP receives its canonical schema.
    Written,
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Canonical => "the canonical schema",
            Self::OpenAiStrict => "OpenAI strict mode",
            Self::Gemini => "Gemini `parameters`",
            Self::GeminiJsonSchema => "Gemini `parametersJsonSchema`",
            Self::Written => "the schema as written",
        })
    }
}

/// Why a canonical schema cannot be expressed in a provider's dialect:
/// every place that cannot, each with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweringError {
    dialect: Dialect,
    // Never empty; the first is the first found.
    problems: Vec<(String, LoweringErrorKind)>,
}

/// The reason a lowering failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoweringErrorKind {
    /// The root is not an object schema.
    RootNotObject,
    /// An object whose `additionalProperties` is a schema: a map with free
    /// keys.
    FreeFormMap,
    /// A keyword the dialect rejects and that cannot be rewritten.
    Unsupported {
        /// The keyword.
        keyword: String,
    },
    /// A schema that accepts any JSON value (`true`, `{}`).
    Unconstrained,
    /// A `type` array naming several non-null types.
    TypeUnion {
        /// The types.
        types: Vec<String>,
    },
    /// A union (`anyOf`/`oneOf`) beside `properties`, as
    /// `#[serde(flatten)]` of an enum produces: the union's properties
    /// cannot be combined with a closed object.
    UnionBesideProperties,
    /// A `$ref`, i.e. a recursive type, which the dialect cannot express.
    Recursive {
        /// The reference.
        reference: String,
    },
    /// A `$ref` to a definition the schema does not have.
    MissingDefinition {
        /// The reference.
        reference: String,
    },
    /// A tuple (`prefixItems`), which the dialect cannot express.
    Tuple,
    /// More object properties in total than the dialect allows.
    TooManyProperties {
        /// How many the schema has.
        count: usize,
        /// The most allowed.
        limit: usize,
    },
    /// Objects nested deeper than the dialect allows.
    TooDeep {
        /// The nesting level reached (the root object is level 1).
        depth: usize,
        /// The most allowed.
        limit: usize,
    },
    /// More characters in property names, definition names, enum and const
    /// values than the dialect allows.
    TooManyCharacters {
        /// How many the schema has.
        count: usize,
        /// The most allowed.
        limit: usize,
    },
    /// More enum values in total than the dialect allows.
    TooManyEnumValues {
        /// How many the schema has.
        count: usize,
        /// The most allowed.
        limit: usize,
    },
    /// A constraint the dialect has no keyword for: folded into the
    /// description it would let through values the tool refuses.
    Constraint {
        /// The keyword, e.g. `uniqueItems`.
        keyword: String,
    },
    /// A property name the dialect does not accept.
    PropertyName {
        /// The name.
        name: String,
    },
    /// A large string enum whose values are too long in total.
    EnumTooLong {
        /// How many values the enum has.
        values: usize,
        /// Their total length in characters.
        count: usize,
        /// The most allowed.
        limit: usize,
    },
}

impl LoweringError {
    pub(crate) fn new(dialect: Dialect, path: &str, kind: LoweringErrorKind) -> Self {
        Self {
            dialect,
            problems: vec![(path.to_owned(), kind)],
        }
    }

    /// Joins the problems of several errors of one dialect, in order.
    pub(crate) fn merge(mut errors: Vec<LoweringError>) -> Option<Self> {
        let mut first = errors.drain(..1.min(errors.len())).next()?;
        for error in errors {
            first.problems.extend(error.problems);
        }
        Some(first)
    }

    /// The dialect that could not express the schema.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Where in the schema the first problem is, e.g.
    /// `properties.filter.properties.tags`; empty for the root or the
    /// schema as a whole.
    pub fn path(&self) -> &str {
        &self.problems[0].0
    }

    /// The first problem's reason.
    pub fn kind(&self) -> &LoweringErrorKind {
        &self.problems[0].1
    }

    /// Every problem: its schema path and its reason, in the order found.
    pub fn problems(&self) -> impl Iterator<Item = (&str, &LoweringErrorKind)> {
        self.problems
            .iter()
            .map(|(path, kind)| (path.as_str(), kind))
    }
}

/// A schema path as the Rust value's path: property names joined by `.`,
/// `[]` for an array's items, `[i]` for a tuple's, `[*]` for a map's
/// values; unions and definitions add nothing but a definition's name at
/// the start. `properties.expr.oneOf[2].properties.add.properties.left`
/// is `expr.add.left`.
pub fn rust_path(schema_path: &str) -> String {
    let mut out = String::new();
    let mut segments = schema_path.split('.').peekable();
    let push_name = |out: &mut String, name: &str| {
        if !out.is_empty() && !out.ends_with('.') {
            out.push('.');
        }
        out.push_str(name);
    };
    while let Some(segment) = segments.next() {
        match segment {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Some(name) = segments.next() {
                    push_name(&mut out, name);
                }
            }
            "items" => out.push_str("[]"),
            "additionalProperties" => out.push_str("[*]"),
            other => {
                if let Some(index) = other.strip_prefix("prefixItems") {
                    out.push_str(index);
                }
                // `anyOf[i]`, `oneOf[i]`, `allOf[i]`, `not`: the same value.
            }
        }
    }
    out
}

impl fmt::Display for LoweringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [(path, kind)] = self.problems.as_slice() {
            return problem(f, self.dialect, path, kind);
        }
        write!(f, "{} problems: ", self.problems.len())?;
        for (index, (path, kind)) in self.problems.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            problem(f, self.dialect, path, kind)?;
        }
        Ok(())
    }
}

/// One problem, on one line: the Rust path of the place and the reason.
fn problem(
    f: &mut fmt::Formatter<'_>,
    dialect: Dialect,
    path: &str,
    kind: &LoweringErrorKind,
) -> fmt::Result {
    {
        use LoweringErrorKind as K;
        let at = show_path(&rust_path(path));
        match kind {
            K::RootNotObject => write!(f, "{dialect} needs an object schema at the root"),
            K::FreeFormMap => write!(
                f,
                "free-form map at {at} (`additionalProperties` is a schema) is not allowed in \
                 {dialect}: every key must be declared; use a struct or a list of key/value pairs"
            ),
            K::Unsupported { keyword } => {
                write!(f, "`{keyword}` at {at} is not supported by {dialect}")
            }
            K::Unconstrained => write!(
                f,
                "{at} accepts any JSON value (a `serde_json::Value`?), which {dialect} cannot \
                 express: give it a concrete type"
            ),
            K::TypeUnion { types } => write!(
                f,
                "{at} has several types ({}), which {dialect} cannot express in one `type`",
                types.join(", ")
            ),
            K::UnionBesideProperties => write!(
                f,
                "{at} combines `properties` with a union (a `#[serde(flatten)]` enum?), which \
                 {dialect} cannot express: make the enum a named field"
            ),
            K::Recursive { reference } => write!(
                f,
                "{at} is a recursive type (`$ref` to `{reference}`), which {dialect} cannot \
                 express"
            ),
            K::MissingDefinition { reference } => write!(
                f,
                "the `$ref` at {at} points to `{reference}`, which the schema does not define"
            ),
            K::Tuple => write!(
                f,
                "{at} is a tuple (`prefixItems`), which {dialect} cannot express: use a struct"
            ),
            K::TooManyProperties { count, limit } => write!(
                f,
                "the schema has {count} object properties in total; {dialect} allows at most \
                 {limit}"
            ),
            K::TooDeep { depth, limit } => write!(
                f,
                "objects at {at} are nested {depth} levels deep; {dialect} allows at most {limit}"
            ),
            K::TooManyCharacters { count, limit } => write!(
                f,
                "property names, definition names, enum and const values add up to {count} \
                 characters; {dialect} allows at most {limit}"
            ),
            K::TooManyEnumValues { count, limit } => write!(
                f,
                "the schema has {count} enum values in total; {dialect} allows at most {limit}"
            ),
            K::Constraint { keyword } => write!(
                f,
                "`{keyword}` at {at} is a constraint {dialect} has no keyword for; described in \
                 words it would let through values the tool refuses"
            ),
            K::PropertyName { name } => write!(
                f,
                "the property name `{name}` at {at} is not accepted by {dialect} (names match \
                 `^[a-zA-Z_][a-zA-Z0-9_]{{0,63}}$`)"
            ),
            K::EnumTooLong {
                values,
                count,
                limit,
            } => write!(
                f,
                "the enum at {at} has {values} values totalling {count} characters; {dialect} \
                 allows at most {limit} characters in an enum of more than 250 values"
            ),
        }
    }
}

impl std::error::Error for LoweringError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_place_and_the_reason() {
        let error = LoweringError::new(
            Dialect::OpenAiStrict,
            "properties.filter.properties.tags",
            LoweringErrorKind::FreeFormMap,
        );
        let message = error.to_string();
        assert!(message.contains("free-form map at `filter.tags`"));
        assert!(message.contains("not allowed in OpenAI strict mode"));
        assert_eq!(error.path(), "properties.filter.properties.tags");
        assert_eq!(error.dialect(), Dialect::OpenAiStrict);

        assert_eq!(
            rust_path("properties.expr.oneOf[2].properties.add.properties.left"),
            "expr.add.left"
        );
        assert_eq!(
            rust_path("$defs.Expr.anyOf[0].properties.items.items.prefixItems[1]"),
            "Expr.items[][1]"
        );
        let error = SchemaError::UnknownParam {
            name: "qurey".into(),
        };
        assert!(error.to_string().contains("`qurey`"));
    }
}
