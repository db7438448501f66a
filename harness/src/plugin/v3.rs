//! `sparktest:plugin@0.3.0` (0.2.0 with the last footprint fact typed:
//! `footprint-unmeasured`): its generated bindings and its facts;
//! everything else it adapts as 0.2.0 does ([`super::adapter`]'s
//! `since_v0_2!`), on the one case state ([`super::state`]).

bindings!("../plugins/wit/since_v0.3.0");

shared_conversions!();
since_v0_2!();

/// The facts for a 0.3.0 guest, typed to the end: why the footprint is
/// missing is a field, and `extra` holds only what no field names (the
/// `footprint.*` pairs older guests read are left out).
mod facts {
    use super::convert::{footprint, kv_bytes, pools};
    use super::sparktest::plugin::endpoint as wit;
    use crate::endpoint as dom;

    pub fn facts(f: dom::ServerFacts) -> wit::ServerFacts {
        let typed = |k: &str| sparktest_contract::facts::FOOTPRINT.iter().any(|f| f.name() == k);
        let extra = f.extra.into_iter().filter(|(k, _)| !typed(k)).collect();
        wit::ServerFacts {
            engine: f.engine,
            model_id: f.model_id,
            build: f.build,
            model_path: f.model_path,
            context_per_request: f.context_per_request,
            slots: f.slots,
            kv_pool_tokens: f.kv_pool_tokens,
            vision: f.vision,
            footprint: f.footprint.map(footprint),
            footprint_unmeasured: f.footprint_unmeasured,
            memory_pools: pools(f.memory_pools),
            memory_unseen: f.memory_unseen,
            kv_bytes: f.kv_bytes.map(kv_bytes),
            extra: super::shared::pairs(extra),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::endpoint as dom;
    use sparktest_contract::facts as fact;

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
