//! `sparktest:plugin@0.4.0` (0.3.0 with open-loop load: `open-loop`
//! sends a plan's requests at the instants of a seeded schedule the host
//! keeps): its generated bindings, 0.3.0's facts, and the load's
//! conversions ([`super::adapter`]'s `since_v0_4!`); everything else it
//! adapts as 0.2.0 and 0.3.0 do (`since_v0_2!`), on the one case state
//! ([`super::state`]). A plan past the case's limit traps, as 0.4.0 says.

bindings!("wit/since_v0.4.0");

shared_conversions!();
since_v0_2!(since_v0_4_endpoint_calls!(crate::plugin::state::PastLimit::Trap););
since_v0_4!();

// The facts as 0.3.0 gives them.
facts_since_v0_3!();
