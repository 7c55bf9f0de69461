//! The store's own rules: who writes a chain, which ref names it takes.

use super::*;

#[test]
fn owners_follow_ref_names() {
    assert_eq!(owner_of("refs/mas/journal/alice"), Some("alice"));
    assert_eq!(owner_of("refs/mas/focus/bob"), Some("bob"));
    assert_eq!(owner_of("refs/mas/runs/r1/events/carol"), Some("carol"));
    assert_eq!(owner_of("refs/mas/runs/r1/proposals/dave"), Some("dave"));
    assert_eq!(owner_of("refs/mas/frame"), None);
    assert_eq!(owner_of("refs/mas/runs/r1/meta"), None);
    assert_eq!(owner_of("refs/heads/main"), None);
}

#[test]
fn ref_names_must_be_under_the_namespace_and_valid() {
    assert!(validate_ref("refs/mas/journal/alice").is_ok());
    assert!(validate_ref("refs/mas/shared/x").is_ok());
    for bad in ["refs/heads/main", "refs/mas/", "refs/mas/a..b", "refs/mas/a b", "refs/mas/x.lock"] {
        assert!(validate_ref(bad).is_err(), "{bad}");
    }
}
