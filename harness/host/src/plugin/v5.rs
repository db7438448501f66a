//! `sparktest:plugin@0.5.0` (0.4.0 with the run's limits: `run.limits`
//! tells an instrument the case's and a request's wall-clock limits and
//! the most requests a load may send, from `cases` on, and a load past the
//! case's limit is not sent, said in its result, instead of trapping): its
//! generated bindings and `since_v0_5!`; everything else as 0.4.0
//! ([`super::adapter`]), on the one case state ([`super::state`]).

bindings!("wit/since_v0.5.0");

shared_conversions!();
since_v0_2!(since_v0_4_endpoint_calls!(crate::plugin::state::PastLimit::NotSent););
since_v0_4!();
since_v0_5!();

// The facts as 0.3.0 gives them.
facts_since_v0_3!();
