//! The property test of schema and dispatch agreement (see
//! `toolkit_tests::agreement`) over the example registry and a corpus of
//! tools written to stress serde and schemars the way real code does:
//! every serde enum representation, flatten, defaults, `Option<Option<T>>`,
//! maps, sets, tuples, recursion, 64- and 128-bit integers, `char`,
//! `Duration`, `serde_json::Value`, renamed and kebab-case fields, a
//! 300-variant enum and deep nesting.

#![allow(missing_docs)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolkit_core::{Registry, tool, tools};
use toolkit_tests::agreement::check_registry;

// ---- Enums in every serde representation ----

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub enum External {
    Unit,
    Newtype(u8),
    Tuple(String, bool),
    Struct { x: i32, y: Option<String> },
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Internal {
    Circle { radius: f64 },
    Square { side: f64, label: Option<String> },
    Nothing,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
pub enum Adjacent {
    Text(String),
    Pair(u8, u8),
    Named { on: bool },
    Empty,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Untagged {
    Number(i64),
    Words { words: Vec<String> },
    Flag(bool),
}

/// A unit enum whose names are kebab-case on the wire.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kebab {
    /// The first one.
    FirstChoice,
    SecondChoice,
    #[serde(rename = "third")]
    Third,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub enum Many {
    V0,
    V1,
    V2,
    V3,
    V4,
    V5,
    V6,
    V7,
    V8,
    V9,
    V10,
    V11,
    V12,
    V13,
    V14,
    V15,
    V16,
    V17,
    V18,
    V19,
    V20,
    V21,
    V22,
    V23,
    V24,
    V25,
    V26,
    V27,
    V28,
    V29,
    V30,
    V31,
    V32,
    V33,
    V34,
    V35,
    V36,
    V37,
    V38,
    V39,
    V40,
    V41,
    V42,
    V43,
    V44,
    V45,
    V46,
    V47,
    V48,
    V49,
    V50,
    V51,
    V52,
    V53,
    V54,
    V55,
    V56,
    V57,
    V58,
    V59,
    V60,
    V61,
    V62,
    V63,
    V64,
    V65,
    V66,
    V67,
    V68,
    V69,
    V70,
    V71,
    V72,
    V73,
    V74,
    V75,
    V76,
    V77,
    V78,
    V79,
    V80,
    V81,
    V82,
    V83,
    V84,
    V85,
    V86,
    V87,
    V88,
    V89,
    V90,
    V91,
    V92,
    V93,
    V94,
    V95,
    V96,
    V97,
    V98,
    V99,
    V100,
    V101,
    V102,
    V103,
    V104,
    V105,
    V106,
    V107,
    V108,
    V109,
    V110,
    V111,
    V112,
    V113,
    V114,
    V115,
    V116,
    V117,
    V118,
    V119,
    V120,
    V121,
    V122,
    V123,
    V124,
    V125,
    V126,
    V127,
    V128,
    V129,
    V130,
    V131,
    V132,
    V133,
    V134,
    V135,
    V136,
    V137,
    V138,
    V139,
    V140,
    V141,
    V142,
    V143,
    V144,
    V145,
    V146,
    V147,
    V148,
    V149,
    V150,
    V151,
    V152,
    V153,
    V154,
    V155,
    V156,
    V157,
    V158,
    V159,
    V160,
    V161,
    V162,
    V163,
    V164,
    V165,
    V166,
    V167,
    V168,
    V169,
    V170,
    V171,
    V172,
    V173,
    V174,
    V175,
    V176,
    V177,
    V178,
    V179,
    V180,
    V181,
    V182,
    V183,
    V184,
    V185,
    V186,
    V187,
    V188,
    V189,
    V190,
    V191,
    V192,
    V193,
    V194,
    V195,
    V196,
    V197,
    V198,
    V199,
    V200,
    V201,
    V202,
    V203,
    V204,
    V205,
    V206,
    V207,
    V208,
    V209,
    V210,
    V211,
    V212,
    V213,
    V214,
    V215,
    V216,
    V217,
    V218,
    V219,
    V220,
    V221,
    V222,
    V223,
    V224,
    V225,
    V226,
    V227,
    V228,
    V229,
    V230,
    V231,
    V232,
    V233,
    V234,
    V235,
    V236,
    V237,
    V238,
    V239,
    V240,
    V241,
    V242,
    V243,
    V244,
    V245,
    V246,
    V247,
    V248,
    V249,
    V250,
    V251,
    V252,
    V253,
    V254,
    V255,
    V256,
    V257,
    V258,
    V259,
    V260,
    V261,
    V262,
    V263,
    V264,
    V265,
    V266,
    V267,
    V268,
    V269,
    V270,
    V271,
    V272,
    V273,
    V274,
    V275,
    V276,
    V277,
    V278,
    V279,
    V280,
    V281,
    V282,
    V283,
    V284,
    V285,
    V286,
    V287,
    V288,
    V289,
    V290,
    V291,
    V292,
    V293,
    V294,
    V295,
    V296,
    V297,
    V298,
    V299,
}

// ---- Structs ----

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Inner {
    pub a: String,
    #[serde(default)]
    pub b: u32,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Flattened {
    pub id: u64,
    #[serde(flatten)]
    pub inner: Inner,
}

/// Keeps every field it does not know: extra fields are welcome.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Open {
    pub name: String,
    #[serde(flatten)]
    pub rest: HashMap<String, Value>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Strict {
    pub on: bool,
    pub level: Option<u8>,
}

fn three() -> u8 {
    3
}

fn rating() -> f32 {
    3.9
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    North,
    South,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Defaults {
    #[serde(default)]
    pub direction: Direction,
    #[serde(default = "three")]
    pub count: u8,
    #[serde(default = "rating")]
    pub rating: f32,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    pub first_name: String,
    #[serde(rename = "content-type")]
    pub content_type: String,
    #[serde(rename = "$ref")]
    pub reference: Option<String>,
    pub last_seen_at: Option<u64>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Tree {
    pub name: String,
    pub children: Vec<Tree>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    Num(f64),
    Add { left: Box<Expr>, right: Box<Expr> },
    Neg(Box<Expr>),
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Level5 {
    pub value: u8,
    pub names: Vec<String>,
}
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Level4 {
    pub items: Vec<Level5>,
}
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Level3 {
    pub four: Level4,
    pub maybe: Option<Level5>,
}
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Level2 {
    pub three: Level3,
}
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Level1 {
    pub two: Level2,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Point(pub f64, pub f64);

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Meters(pub f64);

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Bounded {
    #[schemars(range(min = 1, max = 10))]
    pub score: u8,
    #[schemars(length(min = 2, max = 5))]
    pub code: String,
    pub positive: NonZeroU32,
}

// ---- The tools ----

macro_rules! echo {
    ($($name:ident($($param:ident: $ty:ty),+);)*) => {
        $(
            /// Echoes its arguments.
            #[tool]
            fn $name($(#[tool(undocumented)] $param: $ty),+) -> String {
                format!("{:?}", ($($param,)+))
            }
        )*
    };
}

echo! {
    external(e: External);
    external_list(items: Vec<External>);
    internal(shape: Internal);
    internal_optional(shape: Option<Internal>);
    adjacent(a: Adjacent);
    untagged(u: Untagged);
    kebab(choice: Kebab, choices: Vec<Kebab>);
    many(v: Many);
    flattened(f: Flattened);
    open(o: Open);
    strict_struct(s: Strict);
    defaults(d: Defaults);
    // `Option<Option<T>>` (clear or leave), the dispatch tests' patch.
    patch(p: crate::dispatch_agreement::ContactPatch);
    renamed(r: Renamed);
    tree(t: Tree);
    expr(e: Expr);
    deep(one: Level1);
    point(p: Point, m: Meters);
    bounded(b: Bounded);
    map_of_numbers(m: HashMap<String, u32>);
    map_of_structs(m: BTreeMap<String, Inner>);
    hash_set(s: HashSet<String>);
    btree_set(s: BTreeSet<u8>);
    tuple_pair(t: (String, u32));
    tuple_triple(t: (bool, f64, char));
    array3(a: [u8; 3]);
    wide_unsigned(a: u64, b: usize, c: u128);
    wide_signed(a: i64, b: isize, c: i128);
    small_ints(a: u8, b: i8, c: u16, d: i16, e: u32, f: i32);
    floats(a: f32, b: f64);
    character(c: char, maybe: Option<char>);
    duration(d: Duration);
    free_form(v: Value);
    free_form_optional(v: Option<Value>, n: Option<Option<u8>>);
    nested_options(o: Option<Vec<Option<String>>>);
    boxed(b: Box<Inner>, s: Arc<str>);
    vec_of_vecs(v: Vec<Vec<i32>>);
    optional_struct(i: Option<Inner>, s: Option<Strict>);
    map_of_values(m: BTreeMap<String, Value>);
    non_zero(n: NonZeroU32, m: Option<NonZeroU32>);
    unit_like(u: (), flag: bool);
    strings(a: String, b: Option<String>, c: Vec<String>);
}

fn corpus() -> Registry {
    Registry::builder()
        .tools(tools![
            external,
            external_list,
            internal,
            internal_optional,
            adjacent,
            untagged,
            kebab,
            many,
            flattened,
            open,
            strict_struct,
            defaults,
            patch,
            renamed,
            tree,
            expr,
            deep,
            point,
            bounded,
            map_of_numbers,
            map_of_structs,
            hash_set,
            btree_set,
            tuple_pair,
            tuple_triple,
            array3,
            wide_unsigned,
            wide_signed,
            small_ints,
            floats,
            character,
            duration,
            free_form,
            free_form_optional,
            nested_options,
            boxed,
            vec_of_vecs,
            optional_struct,
            map_of_values,
            non_zero,
            unit_like,
            strings,
        ])
        .build()
        .expect("the corpus builds")
}

/// Cases per tool and provider; `TOOLKIT_AGREEMENT_CASES` raises it for a
/// long run.
fn cases() -> usize {
    std::env::var("TOOLKIT_AGREEMENT_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(24)
}

fn assert_agreement(report: toolkit_tests::agreement::Report, what: &str) {
    let shown: Vec<&String> = report.failures.iter().take(20).collect();
    assert!(
        report.failures.is_empty(),
        "{what}: {} disagreements (of {} accepted and {} refused values), the first:\n{}",
        report.failures.len(),
        report.accepted,
        report.refused,
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        report.accepted > 0 && report.refused > 0,
        "{what}: {report:?}"
    );
    eprintln!(
        "{what}: {} values accepted, {} mutations refused, each as text and as a value",
        report.accepted, report.refused
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stress_corpus_agrees_with_every_provider() {
    let registry = corpus();
    assert!(registry.names().count() >= 40);
    let report = check_registry(&registry, 0x5eed_0001, cases()).await;
    assert_agreement(report, "stress corpus");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_registry_agrees_with_every_provider() {
    let registry = toolkit_example_tools::registry().expect("the examples build");
    let report = check_registry(&registry, 0x5eed_0002, cases()).await;
    assert_agreement(report, "example registry");
}
