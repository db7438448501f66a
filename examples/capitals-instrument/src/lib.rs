//! `capitals`: a minimal third-party instrument. It asks for the capital of
//! each country in its suite's data file and passes a case when the reply
//! names the expected city.
//!
//! Build it and pin it (a third-party instrument loads only as a prebuilt
//! component with its sha256; building one runs its build script and proc
//! macros natively, which is trusted code):
//!
//! ```sh
//! cargo build --manifest-path examples/capitals-instrument/Cargo.toml --target wasm32-wasip2 --release
//! sha256sum examples/capitals-instrument/target/wasm32-wasip2/release/capitals_instrument.wasm
//! ```
//!
//! The suite in `suite/` loads the copy built against interface 0.1.0
//! (`capitals-wit-0.1.0.wasm`), the one in `suite-wit-0.2.0/` the copy built
//! against 0.2.0; both are kept to show released versions still load:
//! `cargo sparktest --suite examples/capitals-instrument/suite`.

use serde::Deserialize;
use sparktest_sdk::*;

struct Capitals;

#[derive(Deserialize)]
struct Item {
    country: String,
    capital: String,
}

fn items() -> Result<Vec<Item>, String> {
    let text = read_text("capitals.json")?;
    serde_json::from_str(&text).map_err(|err| format!("capitals.json: {err}"))
}

fn slug(country: &str) -> String {
    country.to_lowercase().replace(' ', "_")
}

impl Instrument for Capitals {
    type Config = NoConfig;
    type Case = Item;

    fn describe() -> Info {
        Info::new(
            "capitals",
            "Capital cities (example)",
            env!("CARGO_PKG_VERSION"),
            "Asks for a country's capital at temperature 0; passes when the reply names it.",
        )
    }

    fn cases(_config: &NoConfig) -> Result<Vec<Case<Item>>, String> {
        Ok(items()?.into_iter().map(|i| Case::new(format!("country::{}", slug(&i.country)), i)).collect())
    }

    fn run(_config: &NoConfig, item: &Item) -> Finding {
        let question = format!("What is the capital of {}? Answer with the city name only.", item.country);
        let reply = match chat(&ChatRequest::new(vec![Message::user(&question)]).greedy().max_tokens(16)) {
            Ok(reply) => reply,
            // Lost stays lost, a 4xx fails: the SDK's conversion keeps them apart.
            Err(err) => return err.into(),
        };
        let named = reply.text.to_lowercase().contains(&item.capital.to_lowercase());
        Finding::judge(named, format!("expected {}, got {:?}", item.capital, reply.text.trim()))
            .metric("completion-tokens", f64::from(reply.usage.completion_tokens.unwrap_or(0)), "tokens")
    }
}

register_instrument!(Capitals);
