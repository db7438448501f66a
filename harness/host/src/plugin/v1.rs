//! `sparktest:plugin@0.1.0` (the first released interface):
//! its generated bindings, its conversions to and from the host's types,
//! and its imports implemented on the one case state ([`super::state`]).
//! What it shares with the other versions comes from [`super::adapter`]'s
//! macros.

bindings!("wit/since_v0.1.0");

shared_conversions!();

/// This version's replies, facts and errors.
pub mod convert {
    use super::sparktest::plugin::endpoint as wit;
    use sparktest_endpoint as dom;

    /// A reply for a 0.1.0 guest.
    pub fn reply(r: dom::Reply) -> wit::Reply {
        wit::Reply {
            text: r.text,
            reasoning: r.reasoning,
            tool_calls: r.tool_calls.into_iter().map(Into::into).collect(),
            finish_reason: r.finish_reason,
            model: r.model,
            usage: super::shared::usage(r.usage),
            timing: super::shared::timing(r.timing),
            status: r.status,
        }
    }

    /// A call error for a 0.1.0 guest. `Invalid` never reaches it: the host
    /// traps the instance instead, because the request was the instrument's
    /// bug.
    pub fn call_error(e: dom::CallError) -> Result<wit::CallError, String> {
        use crate::plugin::adapter::{Seen, seen_by_instrument};
        Ok(match seen_by_instrument(&e)? {
            Seen::Lost { reason, .. } => wit::CallError::Lost(reason),
            Seen::Rejected { status, body } => wit::CallError::Rejected(wit::Rejection { status, body }),
            Seen::Unsupported(reason) => wit::CallError::Unsupported(reason),
        })
    }

    /// The facts for a 0.1.0 guest: typed facts become the `footprint.*`
    /// strings 0.1.0 instruments read.
    pub fn facts(f: dom::ServerFacts) -> wit::ServerFacts {
        wit::ServerFacts {
            engine: f.engine,
            model_id: f.model_id,
            build: f.build,
            model_path: f.model_path,
            context_per_request: f.context_per_request,
            slots: f.slots,
            kv_pool_tokens: f.kv_pool_tokens,
            extra: super::shared::pairs(f.extra),
        }
    }
}

/// This version's imports, on the host's case state.
mod host {
    use super::super::state::{CaseState, trap_invalid};
    use super::convert::{call_error, facts, reply};
    use super::sparktest::plugin::{endpoint as wit, plugin_types, suite_data, types};
    use sparktest_endpoint as dom;

    shared_imports!();

    impl wit::Host for CaseState {
        shared_endpoint_calls!();

        /// 0.1.0 instruments read the last load window as `sparktest:window_*`
        /// samples, even where the engine's metrics are off.
        async fn scrape_metrics(&mut self) -> wasmtime::Result<Result<Vec<wit::MetricSample>, wit::CallError>> {
            let mut result = CaseState::scrape_metrics(self).await?;
            if let Some(window) = &self.last_window {
                let derived = window_samples(window);
                result = match result {
                    Ok(mut samples) => {
                        samples.extend(derived);
                        Ok(samples)
                    }
                    Err(dom::CallError::Unsupported(_)) => Ok(derived),
                    Err(err) => Err(err),
                };
            }
            out(result, "metrics", |v| v.into_iter().map(Into::into).collect())
        }
    }

    /// The `sparktest:window_*` samples for a load window.
    fn window_samples(w: &dom::LoadWindow) -> Vec<dom::MetricSample> {
        let labels = vec![("source".to_string(), w.source.clone())];
        let mut out = vec![
            ("sparktest:window_requests_running_max", f64::from(w.running_max)),
            ("sparktest:window_requests_running_mean", w.running_mean),
            ("sparktest:window_samples", f64::from(w.samples)),
        ];
        if let Some(waiting) = w.waiting_max {
            out.push(("sparktest:window_requests_waiting_max", f64::from(waiting)));
        }
        out.into_iter()
            .map(|(name, value)| dom::MetricSample { name: name.into(), labels: labels.clone(), value })
            .collect()
    }
}
