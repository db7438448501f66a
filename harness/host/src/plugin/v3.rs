//! `sparktest:plugin@0.3.0` (0.2.0 with the last footprint fact typed:
//! `footprint-unmeasured`): its generated bindings and its facts (as
//! every later version gives them, [`super::adapter`]'s
//! `facts_since_v0_3!`); everything else it adapts as 0.2.0 does
//! (`since_v0_2!`), on the one case state ([`super::state`]).

bindings!("wit/since_v0.3.0");

shared_conversions!();
since_v0_2!();

// The facts for a 0.3.0 guest, typed to the end: why the footprint is
// missing is a field, and `extra` holds only what no field names.
facts_since_v0_3!();

#[cfg(test)]
mod tests {
    use sparktest_contract::facts as fact;
    use sparktest_endpoint as dom;

    fn unmeasured() -> dom::ServerFacts {
        dom::ServerFacts {
            footprint_unmeasured: Some("not launched".into()),
            extra: vec![
                (fact::FOOTPRINT_NOT_MEASURED.name().into(), "not launched".into()),
                ("kv_pool_source".into(), "/slots".into()),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn a_0_3_0_guest_reads_why_there_is_no_footprint_from_a_field_and_a_0_2_0_guest_from_its_pair() {
        let v3 = super::convert::facts(unmeasured());
        assert_eq!(v3.footprint_unmeasured.as_deref(), Some("not launched"));
        let keys: Vec<&str> = v3.extra.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["kv_pool_source"], "the typed footprint is not repeated as pairs");
        let v2 = super::super::v2::convert::facts(unmeasured());
        assert!(v2.extra.iter().any(|p| p.key == fact::FOOTPRINT_NOT_MEASURED.name() && p.value == "not launched"));
    }
}
