//! The property that a tool's schemas and its dispatch agree: values
//! generated from each provider's emitted schema are accepted, sent as JSON
//! text and as a value; values made to break the schema (an unknown field
//! at depth, a wrong type, a missing required field, an array for an
//! object) are refused.
//!
//! What is inside or outside a schema is judged by the `jsonschema` crate,
//! not by the toolkit's own checker. Gemini's `parameters` dialect is read
//! as JSON Schema with `nullable` as a `null` type and its objects closed
//! (Gemini generates the declared properties only). A mutation counts as
//! outside only when the canonical schema refuses it too: the canonical
//! schema is what the tool means, and a provider's dialect may say an
//! optional field must be sent (OpenAI strict mode), as `null`.

use serde_json::{Map, Number, Value, json};
use toolkit_core::{CallError, Provider, Registry};

/// A small, seeded pseudo-random generator (SplitMix64): the same seed
/// gives the same values on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A schema as a provider receives it, with what is needed to read it.
pub struct Emitted {
    /// The provider.
    pub provider: Provider,
    /// The schema, as sent.
    pub schema: Value,
    /// The schema as JSON Schema 2020-12, for the judge.
    pub judged: Value,
}

/// Each provider's schema for a tool, as emitted in its definitions.
pub fn emitted(registry: &Registry, tool: &str) -> Vec<Emitted> {
    let def = registry.get(tool).expect("the tool is registered");
    let mut out = Vec::new();
    for provider in Provider::ALL {
        let schema: Value = match def.schema().lowered(provider) {
            Ok(text) => serde_json::from_str(text).expect("schemas are JSON"),
            // Not sent to this provider at all: nothing to agree with.
            Err(_) => continue,
        };
        let gemini_parameters = provider == Provider::Gemini
            && def.schema().dialect(provider).ok() == Some(toolkit_core::schema::Dialect::Gemini);
        let judged = if gemini_parameters {
            gemini_as_json_schema(&schema)
        } else {
            schema.clone()
        };
        out.push(Emitted {
            provider,
            schema,
            judged,
        });
    }
    out
}

/// Gemini's `parameters` dialect read as JSON Schema: `nullable` is a
/// `null` type, and objects with properties are closed.
pub fn gemini_as_json_schema(schema: &Value) -> Value {
    let Value::Object(members) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in members {
        let value = match key.as_str() {
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| (name.clone(), gemini_as_json_schema(sub)))
                    .collect(),
            ),
            "items" => gemini_as_json_schema(value),
            "anyOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(gemini_as_json_schema)
                    .collect(),
            ),
            "nullable" | "propertyOrdering" | "example" | "format" => continue,
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    if members.get("nullable") == Some(&Value::Bool(true)) {
        if let Some(Value::String(kind)) = out.get("type").cloned() {
            out.insert("type".into(), json!([kind, "null"]));
        }
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            values.push(Value::Null);
        }
        if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
            branches.push(json!({"type": "null"}));
        }
    }
    if out.contains_key("properties") {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

/// Whether `instance` is inside `schema` (JSON Schema 2020-12). Each
/// schema is compiled once per thread.
pub fn inside(schema: &Value, instance: &Value) -> bool {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;
    thread_local! {
        static COMPILED: RefCell<HashMap<String, Rc<jsonschema::Validator>>> =
            RefCell::new(HashMap::new());
    }
    let key = schema.to_string();
    let validator = COMPILED.with(|compiled| {
        compiled
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| {
                Rc::new(
                    jsonschema::draft202012::new(schema).unwrap_or_else(|error| {
                        panic!("the schema does not compile: {error}\n{schema:#}")
                    }),
                )
            })
            .clone()
    });
    validator.is_valid(instance)
}

/// Random values inside a schema.
pub struct Generator<'s> {
    root: &'s Value,
    rng: Rng,
}

/// How deep generation goes before it takes the shortest way out.
const DEEP: usize = 7;

impl<'s> Generator<'s> {
    /// A generator for `root`, seeded.
    pub fn new(root: &'s Value, seed: u64) -> Self {
        Self {
            root,
            rng: Rng::new(seed),
        }
    }

    /// One value of the root schema.
    pub fn value(&mut self) -> Value {
        self.of(self.root, 0)
    }

    fn of(&mut self, schema: &'s Value, depth: usize) -> Value {
        let Some(members) = schema.as_object() else {
            return self.anything(depth);
        };
        if let Some(Value::String(reference)) = members.get("$ref") {
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
                .unwrap_or(&Value::Bool(true));
            return self.of(target, depth + 1);
        }
        if let Some(Value::Array(values)) = members.get("enum") {
            return self.rng.pick(values).clone();
        }
        if let Some(value) = members.get("const") {
            return value.clone();
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = members.get(keyword) {
                let branch = if depth >= DEEP {
                    // The way out: a branch with no reference, if any.
                    branches
                        .iter()
                        .find(|b| !b.to_string().contains("$ref"))
                        .unwrap_or(&branches[0])
                } else {
                    self.rng.pick(branches)
                };
                return self.of(branch, depth + 1);
            }
        }
        let kinds: Vec<&str> = match members.get("type") {
            Some(Value::String(kind)) => vec![kind.as_str()],
            Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
            _ => return self.anything(depth),
        };
        let mut kind = *self.rng.pick(&kinds);
        if members.get("nullable") == Some(&Value::Bool(true)) && self.rng.one_in(4) {
            kind = "null";
        }
        match kind {
            "null" => Value::Null,
            "boolean" => Value::Bool(self.rng.one_in(2)),
            "integer" => self.integer(members),
            "number" => self.number(members),
            "string" => Value::String(self.string(members)),
            "array" => self.array(members, depth),
            "object" => self.object(members, depth),
            _ => self.anything(depth),
        }
    }

    fn integer(&mut self, schema: &Map<String, Value>) -> Value {
        let bound = |key: &str| schema.get(key).and_then(as_i128);
        let mut low = bound("minimum").unwrap_or(-1_000_000);
        let mut high = bound("maximum").unwrap_or(1_000_000);
        if let Some(x) = bound("exclusiveMinimum") {
            low = low.max(x + 1);
        }
        if let Some(x) = bound("exclusiveMaximum") {
            high = high.min(x - 1);
        }
        let span = (high - low) as u128;
        let n = match self.rng.below(5) {
            0 => low,
            1 => high,
            2 => 0i128.clamp(low, high),
            _ => {
                low + (u128::from(self.rng.next_u64()) % (span.clamp(1, u128::MAX - 1) + 1)) as i128
            }
        };
        let n = n.clamp(low, high);
        match u64::try_from(n) {
            Ok(n) => Value::Number(n.into()),
            Err(_) => Value::Number((n as i64).into()),
        }
    }

    fn number(&mut self, schema: &Map<String, Value>) -> Value {
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
        let low = bound("minimum").unwrap_or(-1e6);
        let high = bound("maximum").unwrap_or(1e6);
        let unit = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let x = match self.rng.below(4) {
            0 => low,
            1 => high,
            2 => (low + (high - low) * unit).round(),
            _ => low + (high - low) * unit,
        };
        Number::from_f64(x.clamp(low, high)).map_or(Value::Null, Value::Number)
    }

    fn string(&mut self, schema: &Map<String, Value>) -> String {
        let (mut min, mut max) = (0usize, 12usize);
        if let Some(n) = schema.get("minLength").and_then(Value::as_u64) {
            min = n as usize;
            max = max.max(min);
        }
        if let Some(n) = schema.get("maxLength").and_then(Value::as_u64) {
            max = n as usize;
        }
        // The only patterns the toolkit writes: lengths, for strict mode.
        if let Some(Value::String(pattern)) = schema.get("pattern")
            && let Some(counts) = pattern
                .strip_prefix("^[\\s\\S]{")
                .and_then(|rest| rest.strip_suffix("}$"))
        {
            let mut parts = counts.split(',');
            min = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            max = match parts.next() {
                None => min,
                Some("") => min + 12,
                Some(n) => n.parse().unwrap_or(min),
            };
        }
        const ALPHABET: &[char] = &[
            'a', 'b', 'z', 'A', 'Q', '0', '9', ' ', '-', '_', '"', '\\', '\n', 'é', '😀', '{',
        ];
        let length = min + self.rng.below(max - min + 1);
        (0..length).map(|_| *self.rng.pick(ALPHABET)).collect()
    }

    fn array(&mut self, schema: &'s Map<String, Value>, depth: usize) -> Value {
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = schema
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(min + 3, |n| n as usize)
            .min(min + 3);
        let length = if depth >= DEEP {
            min
        } else {
            min + self.rng.below(max - min + 1)
        };
        let prefix = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        (0..length)
            .map(
                |index| match prefix.get(index).or_else(|| schema.get("items")) {
                    Some(item) => self.of(item, depth + 1),
                    None => self.anything(depth + 1),
                },
            )
            .collect()
    }

    fn object(&mut self, schema: &'s Map<String, Value>, depth: usize) -> Value {
        let required = required_names(schema.get("required"));
        let mut out = Map::new();
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, sub) in properties {
                let wanted =
                    required.contains(&name.as_str()) || (depth < DEEP && self.rng.one_in(2));
                if wanted {
                    out.insert(name.clone(), self.of(sub, depth + 1));
                }
            }
        }
        match schema.get("additionalProperties") {
            Some(extra @ Value::Object(_)) if depth < DEEP => {
                for _ in 0..self.rng.below(3) {
                    let key = format!("key-{}", self.rng.below(1000));
                    if !out.contains_key(&key) {
                        let value = self.of(extra, depth + 1);
                        out.insert(key, value);
                    }
                }
            }
            Some(Value::Bool(true)) if depth < DEEP && self.rng.one_in(2) => {
                out.insert("extra".into(), self.anything(depth + 1));
            }
            _ => {}
        }
        Value::Object(out)
    }

    /// Any JSON value, with `null`s inside.
    fn anything(&mut self, depth: usize) -> Value {
        let choice = if depth >= DEEP {
            self.rng.below(4)
        } else {
            self.rng.below(6)
        };
        match choice {
            0 => Value::Null,
            1 => Value::Bool(self.rng.one_in(2)),
            2 => json!(self.rng.below(100)),
            3 => json!("free"),
            4 => Value::Array(vec![Value::Null, self.anything(depth + 1)]),
            _ => json!({"keep": null, "nested": self.anything(depth + 1)}),
        }
    }
}

fn as_i128(value: &Value) -> Option<i128> {
    value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
        .or_else(|| value.as_f64().map(|f| f as i128))
}

/// One way of breaking a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// An unknown field added to an object, as deep as possible.
    ExtraField,
    /// A value replaced by one of another type.
    WrongType,
    /// A required field taken out.
    MissingRequired,
    /// An object replaced by an array of its values.
    ArrayForObject,
}

impl Mutation {
    /// Every mutation.
    pub const ALL: [Mutation; 4] = [
        Mutation::ExtraField,
        Mutation::WrongType,
        Mutation::MissingRequired,
        Mutation::ArrayForObject,
    ];
}

/// Every place in a value, as a JSON pointer, deepest last.
fn places(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                places(field, format!("{at}/{escaped}"), out);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                places(item, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// `value` broken by `mutation` at a random place, if the value has a
/// place for it.
pub fn mutate(value: &Value, mutation: Mutation, rng: &mut Rng) -> Option<Value> {
    let mut all = Vec::new();
    places(value, String::new(), &mut all);
    let candidates: Vec<String> = all
        .into_iter()
        .filter(|at| {
            let node = value.pointer(at);
            match mutation {
                Mutation::ExtraField | Mutation::ArrayForObject => {
                    node.is_some_and(Value::is_object)
                }
                Mutation::MissingRequired => {
                    node.is_some_and(|n| n.as_object().is_some_and(|m| !m.is_empty()))
                }
                Mutation::WrongType => !at.is_empty(),
            }
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let at = rng.pick(&candidates).clone();
    let mut out = value.clone();
    let node = out.pointer_mut(&at)?;
    match mutation {
        Mutation::ExtraField => {
            node.as_object_mut()?
                .insert("zz_not_a_field".into(), json!(1));
        }
        Mutation::MissingRequired => {
            let map = node.as_object_mut()?;
            let key = rng.pick(&map.keys().cloned().collect::<Vec<_>>()).clone();
            map.remove(&key);
        }
        Mutation::ArrayForObject => {
            let values: Vec<Value> = node.as_object()?.values().cloned().collect();
            *node = Value::Array(values);
        }
        Mutation::WrongType => {
            *node = match node {
                Value::String(_) => json!(12345),
                Value::Number(_) => json!("not a number"),
                Value::Bool(_) => json!("yes"),
                Value::Array(_) => json!("a list"),
                Value::Object(_) => json!(7),
                Value::Null => json!({"z": [true]}),
            };
        }
    }
    Some(out)
}

/// `value` with the `null`s that stand for an absent optional field taken
/// out: what strict mode and Gemini send for "not given" where the
/// canonical schema has no `null`.
pub fn absent_nulls(root: &Value, schema: &Value, value: &Value) -> Value {
    let with_defs = |sub: &Value| {
        let mut sub = sub.clone();
        if let (Value::Object(map), Some(defs)) = (&mut sub, root.get("$defs")) {
            map.insert("$defs".into(), defs.clone());
        }
        sub
    };
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(schema),
        None => schema,
    };
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(branches)) =
                schema.get("anyOf").or_else(|| schema.get("oneOf"))
            {
                let fitting = branches.iter().find(|branch| {
                    branch
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| map.keys().all(|k| p.contains_key(k)))
                });
                return match fitting {
                    Some(branch) => absent_nulls(root, branch, value),
                    None => value.clone(),
                };
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let required = required_names(schema.get("required"));
            let mut out = Map::new();
            for (key, field) in map {
                let sub = properties.and_then(|p| p.get(key)).or_else(|| {
                    schema
                        .get("additionalProperties")
                        .filter(|extra| extra.is_object())
                });
                match sub {
                    Some(sub)
                        if field.is_null()
                            && !required.contains(&key.as_str())
                            && properties.is_some_and(|p| p.contains_key(key))
                            && !inside(&with_defs(sub), &Value::Null) => {}
                    Some(sub) => {
                        out.insert(key.clone(), absent_nulls(root, sub, field));
                    }
                    None => {
                        out.insert(key.clone(), field.clone());
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let prefix = schema
                .get("prefixItems")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            items
                .iter()
                .enumerate()
                .map(
                    |(index, item)| match prefix.get(index).or_else(|| schema.get("items")) {
                        Some(sub) => absent_nulls(root, sub, item),
                        None => item.clone(),
                    },
                )
                .collect()
        }
        _ => value.clone(),
    }
}

/// What one run of the property found.
#[derive(Debug, Default)]
pub struct Report {
    /// Values generated and sent (each twice: text and value).
    pub accepted: usize,
    /// Mutations judged outside and sent (each twice).
    pub refused: usize,
    /// Every disagreement, described.
    pub failures: Vec<String>,
}

/// Whether dispatch refused the arguments themselves (rather than the tool
/// failing for its own reasons, or a missing host state).
fn refused(outcome: &toolkit_core::CallOutcome) -> Option<String> {
    match &outcome.error {
        Some(error @ CallError::InvalidArguments { .. }) => Some(error.to_string()),
        _ => None,
    }
}

/// Runs the property over every tool of `registry`: `cases` generated
/// values per tool and provider, each with every mutation.
pub async fn check_registry(registry: &Registry, seed: u64, cases: usize) -> Report {
    let mut report = Report::default();
    let mut rng = Rng::new(seed);
    let names: Vec<String> = registry.names().collect();
    for name in &names {
        let def = registry.get(name).expect("registered");
        let canonical: Value =
            serde_json::from_str(def.schema().canonical().expect("built")).expect("JSON");
        for emitted in emitted(registry, name) {
            for case in 0..cases {
                let mut generator = Generator::new(&emitted.schema, rng.next_u64());
                let value = generator.value();
                if !inside(&emitted.judged, &value) {
                    // The generator does not know every rule (a `oneOf`
                    // matched twice, say); such a value proves nothing.
                    continue;
                }
                for (way, outcome) in [
                    (
                        "text",
                        registry.dispatch((name, value.to_string().as_str())).await,
                    ),
                    ("value", registry.dispatch((name, &value)).await),
                ] {
                    if let Some(error) = refused(&outcome) {
                        report.failures.push(format!(
                            "{name} ({}, {way}): refused a value its schema allows: {value}\n  {error}",
                            emitted.provider
                        ));
                    }
                }
                report.accepted += 1;
                for mutation in Mutation::ALL {
                    let Some(broken) = mutate(&value, mutation, &mut rng) else {
                        continue;
                    };
                    let meant = absent_nulls(&canonical, &canonical, &broken);
                    if inside(&emitted.judged, &broken) || inside(&canonical, &meant) {
                        continue;
                    }
                    for (way, outcome) in [
                        (
                            "text",
                            registry.dispatch((name, broken.to_string().as_str())).await,
                        ),
                        ("value", registry.dispatch((name, &broken)).await),
                    ] {
                        if refused(&outcome).is_none() {
                            report.failures.push(format!(
                                "{name} ({}, {way}, case {case}, {mutation:?}): accepted a value outside its schema: {broken}",
                                emitted.provider
                            ));
                        }
                    }
                    report.refused += 1;
                }
            }
        }
    }
    report
}

/// The names a schema's `required` lists (none when there is none).
fn required_names(required: Option<&Value>) -> Vec<&str> {
    required
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
