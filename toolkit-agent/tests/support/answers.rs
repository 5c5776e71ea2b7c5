//! The forms of typed answers in the tests: a city, and a forecast with
//! nested objects, an enum, an optional field and bounds.

use toolkit_agent::{Agent, Model, RunError};

/// A city.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
pub struct City {
    /// The city's name.
    pub name: String,
    /// How many live there.
    pub population: u64,
}

/// Asks for the largest city as a [`City`], with one retry, and expects
/// the run to fail.
pub async fn no_city<M: Model>(agent: &Agent<M>) -> RunError {
    agent
        .run("The largest city?")
        .answer::<City>()
        .retries(1)
        .await
        .unwrap_err()
}

/// A city's forecast.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
pub struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius, each hour.
    hourly: Vec<f64>,
    sky: Sky,
    humidity: Option<u8>,
    station: Station,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
enum Sky {
    Clear,
    Cloudy,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Station {
    id: String,
    elevation: Option<i32>,
}
