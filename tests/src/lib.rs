//! Support for the workspace's integration tests: fixtures, a test HTTP
//! server, a throwaway Postgres server, skipping what needs a missing
//! program, a libtest-speaking runner for `harness = false` test
//! binaries, and independent judges of the JSON the emitters write:
//! third-party SDK types for OpenAI and MCP, types written from the
//! providers' documentation for Anthropic and Gemini.

pub mod agreement;
pub mod asking;
pub mod error_chain;
pub mod fixtures;
pub mod http;
pub mod judges;
pub mod meta_schema;
pub mod postgres;
pub mod runner;
pub mod sdk_judges;
pub mod skip;
pub mod trace;
