//! Every checker kind, with replies that must pass and near misses that
//! must fail.

use super::*;
use serde_json::json;

fn check(v: Value) -> Check {
    Check::parse(&v, "t").unwrap()
}

fn weather_tools() -> BTreeMap<String, Value> {
    BTreeMap::from([(
        "get_weather".to_string(),
        json!({"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"}}, "required": ["city"]}),
    )])
}

fn eval(c: &Check, text: &str, calls: &[(&str, &str)]) -> Result<(), String> {
    let calls: Vec<Call> = calls.iter().map(|(n, a)| Call { name: n.to_string(), arguments: a.to_string() }).collect();
    let tools = weather_tools();
    c.evaluate(&Reply { text, calls: &calls, tools: &tools })
}

#[test]
fn tool_call_passes_with_normalised_values_and_optional_absent() {
    let c = check(
        json!({"tool_calls": [{"name": "get_weather", "arguments": {"city": {"one_of": ["Paris", "Paris, France"]}, "unit": {"one_of": ["celsius"], "optional": true}}}]}),
    );
    assert_eq!(eval(&c, "", &[("get_weather", r#"{"city": "  PARIS. "}"#)]), Ok(()));
    assert_eq!(eval(&c, "", &[("get_weather", r#"{"city": "paris, france", "unit": "celsius"}"#)]), Ok(()));
}

#[test]
fn tool_call_near_misses_fail_with_the_reason() {
    let c = check(
        json!({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": {"one_of": ["celsius"], "optional": true}}}]}),
    );
    let why = eval(&c, "", &[("get_weather", r#"{"city": "Lyon"}"#)]).unwrap_err();
    assert!(why.contains("city") && why.contains("Lyon"), "{why}");
    let why = eval(&c, "", &[("get_weather", r#"{"city": "Paris", "days": 3}"#)]).unwrap_err();
    assert!(why.contains("unexpected parameter days"), "{why}");
    let why = eval(&c, "", &[("get_weather", r#"{"unit": "celsius"}"#)]).unwrap_err();
    assert!(why.contains("schema") || why.contains("missing parameter city"), "{why}");
    let why = eval(&c, "", &[("get_forecast", r#"{"city": "Paris"}"#)]).unwrap_err();
    assert!(why.contains("instead of get_weather"), "{why}");
    let why = eval(&c, "", &[("get_weather", r#"{"city": "Paris", "unit": "kelvin"}"#)]).unwrap_err();
    assert!(why.contains("schema"), "types and enums of the tool's own schema are checked: {why}");
    let why = eval(&c, "", &[]).unwrap_err();
    assert!(why.contains("expected 1 call"), "{why}");
}

#[test]
fn unparseable_arguments_fail_and_are_never_abstention() {
    let c = check(json!({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}));
    let why = eval(&c, "", &[("get_weather", r#"{"city": "Paris""#)]).unwrap_err();
    assert!(why.contains("not JSON"), "{why}");
    let none = check(json!({"no_tool_calls": true}));
    let why = eval(&none, "", &[("get_weather", "{oops")]).unwrap_err();
    assert!(why.contains("expected no tool call"), "a broken call is still a call: {why}");
}

#[test]
fn parallel_calls_match_in_any_order_only_when_asked() {
    let c = check(
        json!({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}], "any_order": true}),
    );
    assert_eq!(eval(&c, "", &[("get_weather", r#"{"city":"Oslo"}"#), ("get_weather", r#"{"city":"Paris"}"#)]), Ok(()));
    assert!(eval(&c, "", &[("get_weather", r#"{"city":"Oslo"}"#), ("get_weather", r#"{"city":"Oslo"}"#)]).is_err());
    let ordered = check(
        json!({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}], "any_order": false}),
    );
    assert!(
        eval(&ordered, "", &[("get_weather", r#"{"city":"Oslo"}"#), ("get_weather", r#"{"city":"Paris"}"#)]).is_err()
    );
}

#[test]
fn numbers_compare_by_value_and_ranges_hold() {
    let c = check(
        json!({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "days": {"range": [3, 5]}}}]}),
    );
    assert_eq!(eval(&c, "", &[("get_weather", r#"{"city":"Paris","days":4}"#)]), Ok(()));
    assert!(eval(&c, "", &[("get_weather", r#"{"city":"Paris","days":6}"#)]).is_err());
    assert!(values_equal(&json!(2), &json!(2.0)));
}

#[test]
fn no_tool_calls_with_a_text_check() {
    let c = check(json!({"no_tool_calls": true, "text": {"contains": ["already booked"]}}));
    assert_eq!(eval(&c, "Your room is Already  booked.", &[]), Ok(()));
    assert!(eval(&c, "I will book it.", &[]).unwrap_err().contains("already booked"));
}

#[test]
fn json_schema_and_fields() {
    let c = check(
        json!({"json": {"schema": {"type": "object", "properties": {"city": {"type": "string"}, "pop": {"type": "number"}}, "required": ["city", "pop"], "additionalProperties": false}, "fields": {"/city": "Tokyo", "/pop": {"range": [13, 15]}}}}),
    );
    assert_eq!(eval(&c, r#" {"city": "tokyo", "pop": 14.0} "#, &[]), Ok(()));
    assert!(eval(&c, r#"{"city": "Osaka", "pop": 14}"#, &[]).unwrap_err().contains("/city"));
    assert!(eval(&c, r#"{"city": "Tokyo", "pop": "14"}"#, &[]).unwrap_err().contains("schema"));
    assert!(eval(&c, r#"{"city": "Tokyo", "pop": 14, "x": 1}"#, &[]).unwrap_err().contains("schema"));
    assert!(eval(&c, "```json\n{\"city\": \"Tokyo\", \"pop\": 14}\n```", &[]).unwrap_err().contains("not JSON"));
    assert!(eval(&c, r#"Here you go: {"city": "Tokyo", "pop": 14}"#, &[]).is_err());
}

#[test]
fn text_checks() {
    let contains = check(json!({"contains": ["Café", "inv-2041"]}));
    assert_eq!(eval(&contains, "Invoice INV-2041 from the cafe\u{301}", &[]), Ok(()));
    assert!(eval(&contains, "Invoice INV-2042 from the café", &[]).is_err());
    let not = check(json!({"not_contains": ["password"]}));
    assert!(eval(&not, "Your PASSWORD is", &[]).is_err());
    assert_eq!(eval(&not, "nothing here", &[]), Ok(()));
    let re = check(json!({"regex": r"\btotal: \$?42(\.00)?\b"}));
    assert_eq!(eval(&re, "TOTAL: $42.00", &[]), Ok(()));
    assert!(eval(&re, "total: 420", &[]).is_err());
}

#[test]
fn order_of_steps() {
    let c = check(json!({"order": ["backup", "migrate", "restart"]}));
    assert_eq!(eval(&c, "1. Backup the db\n2. Migrate\n3. Restart", &[]), Ok(()));
    let why = eval(&c, "Migrate, then backup, then restart", &[]).unwrap_err();
    assert!(why.contains("comes before"), "{why}");
    assert!(eval(&c, "backup then restart", &[]).unwrap_err().contains("missing"));
}

#[test]
fn all_and_any() {
    let c = check(json!({"all": [{"contains": ["a"]}, {"any": [{"contains": ["x"]}, {"contains": ["y"]}]}]}));
    assert_eq!(eval(&c, "a y", &[]), Ok(()));
    assert!(eval(&c, "a z", &[]).unwrap_err().contains("none of the alternatives"));
}

#[test]
fn bad_checks_are_refused_with_their_place() {
    assert!(
        Check::parse(&json!({"contains": ["a"], "regex": "b"}), "a-tool::003").unwrap_err().contains("a-tool::003")
    );
    assert!(Check::parse(&json!({"regex": "("}), "t").unwrap_err().contains("bad regex"));
    assert!(Check::parse(&json!({"frobnicate": 1}), "t").unwrap_err().contains("unknown check"));
    assert!(Check::parse(&json!({"json": {"schema": {"type": 12}}}), "t").is_err());
}
