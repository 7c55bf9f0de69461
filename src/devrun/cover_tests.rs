use super::*;

fn set(files: &[&str]) -> BTreeSet<String> {
    files.iter().map(|f| f.to_string()).collect()
}

#[test]
fn a_seed_names_the_modules_it_imports_in_the_common_spellings() {
    let index = NameIndex::new([
        "shop/__init__.py",
        "shop/pricing.py",
        "shop/stock.py",
        "src/money.rs",
        "src/lib.rs",
        "web/cart.js",
        "web/util.js",
        "other/cart.js",
        "README.md",
    ]);
    let py = "import unittest\nfrom shop.pricing import total\n";
    assert_eq!(index.named_in("tests/test_pricing.py", py), set(&["shop/pricing.py"]));
    let rs = "use crate::money::Money;\nfn main() {}\n";
    assert_eq!(index.named_in("src/lib.rs", rs), set(&["src/money.rs"]));
    // A stem two files share counts only beside the seed; a name every project has never alone.
    let js = "const cart = require('./cart');\nconst u = require('./util');\n";
    assert_eq!(index.named_in("web/app.js", js), set(&["web/cart.js"]));
    // A file never names itself; a whole path does.
    assert_eq!(index.named_in("shop/pricing.py", "see shop/pricing.py and README.md"), set(&["README.md"]));
    // A bare word that is one file's stem.
    assert_eq!(index.named_in("tests/test_stock.py", "from stock import in_stock"), set(&["shop/stock.py"]));
    assert!(index.named_in("x.py", "nothing here names a module").is_empty());
}

fn agents(n: usize) -> Vec<String> {
    ["alice", "bob", "carol", "dave"][..n].iter().map(|a| a.to_string()).collect()
}

fn check_seed(test: &str) -> Vec<Evidence> {
    vec![Evidence::Check(set(&[test]))]
}

#[test]
fn a_failing_test_and_the_module_it_imports_are_one_slice_and_every_seed_is_covered() {
    let ranked: Vec<String> = ["README.md", "setup.cfg", "shop/stock.py", "shop/pricing.py", "tests/test_pricing.py"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let seeds: BTreeMap<String, Vec<Evidence>> = [
        ("tests/test_pricing.py".to_string(), check_seed("Total.test_sums")),
        ("tests/test_stock.py".to_string(), check_seed("InStock.test_one")),
    ]
    .into();
    let neighbours: BTreeMap<String, Vec<(String, Via)>> = [
        ("tests/test_pricing.py".to_string(), vec![("shop/pricing.py".to_string(), Via::Imports)]),
        ("tests/test_stock.py".to_string(), vec![("shop/stock.py".to_string(), Via::Imports)]),
    ]
    .into();
    let plan = plan_covering("make the tests pass", &agents(2), &ranked, "f", &seeds, &neighbours).unwrap();
    assert_eq!(plan.source, SliceSource::Concerns);
    let slices: Vec<BTreeSet<String>> = plan.slices.iter().map(|s| s.targets.iter().cloned().collect()).collect();
    assert!(slices.contains(&set(&["tests/test_pricing.py", "shop/pricing.py"])), "{slices:?}");
    assert!(slices.contains(&set(&["tests/test_stock.py", "shop/stock.py"])), "{slices:?}");
    // Ranked files first: the module the frame ranks is the top target.
    let pricing = plan.slices.iter().find(|s| s.targets.contains(&"shop/pricing.py".to_string())).unwrap();
    assert_eq!(pricing.targets[0], "shop/pricing.py");
    assert_eq!(pricing.why["shop/pricing.py"], "the failing test tests/test_pricing.py (Total.test_sums) imports it");
    assert_eq!(pricing.why["tests/test_pricing.py"], "it holds the failing test Total.test_sums");
    crate::devrun::slices::check_plan(&plan).unwrap();
    // Two groups, three agents: the third reviews, it is dealt no filler (README.md, setup.cfg).
    let plan = plan_covering("make the tests pass", &agents(3), &ranked, "f", &seeds, &neighbours).unwrap();
    assert_eq!(plan.slices.len(), 2, "{plan:?}");
    assert_eq!(plan.reviewers.len(), 1);
    assert_eq!(plan.reviewers[0].agent, "carol");
    assert_eq!(plan.reviewers[0].why, "nothing the goal concerns is left for a third slice");
    let held: Vec<&String> = plan.slices.iter().flat_map(|s| &s.targets).collect();
    assert_eq!(held.len(), 4, "{held:?}");
    crate::devrun::slices::check_plan(&plan).unwrap();
}

#[test]
fn nothing_is_cut_at_the_focus_cap_and_an_agent_without_a_group_reviews() {
    let many: Vec<(String, Via)> = (0..12).map(|i| (format!("src/m{i:02}.rs"), Via::Imports)).collect();
    let mut many = many;
    // A manifest is never a neighbour, whatever links to it.
    many.push(("Cargo.toml".to_string(), Via::References));
    let seeds: BTreeMap<String, Vec<Evidence>> = [("src/lib.rs".to_string(), vec![Evidence::Errors])].into();
    let neighbours: BTreeMap<String, Vec<(String, Via)>> = [("src/lib.rs".to_string(), many)].into();
    let ranked: Vec<String> = ["Cargo.lock", "README.md", "src/lib.rs"].iter().map(|s| s.to_string()).collect();
    let plan = plan_covering("fix it", &agents(2), &ranked, "f", &seeds, &neighbours).unwrap();
    assert_eq!(plan.slices.len(), 1, "{plan:?}");
    assert_eq!(plan.slices[0].targets.len(), 13, "{:?}", plan.slices[0]);
    assert_eq!(plan.slices[0].targets[0], "src/lib.rs");
    // bob: no group is left for him, and no filler (README.md) is dealt: he reviews.
    assert_eq!(plan.reviewers.len(), 1);
    assert_eq!(plan.reviewers[0].agent, "bob");
    assert_eq!(plan.members(), agents(2));
    // No seed: the caller deals the ranking.
    assert_eq!(plan_covering("fix it", &agents(2), &ranked, "f", &BTreeMap::new(), &neighbours), None);
}

#[test]
fn groups_are_dealt_largest_first_to_the_agent_holding_fewest() {
    let seeds: BTreeMap<String, Vec<Evidence>> =
        ["a.py", "b.py", "c.py"].iter().map(|f| (f.to_string(), vec![Evidence::Named])).collect();
    let neighbours: BTreeMap<String, Vec<(String, Via)>> =
        [("a.py".to_string(), vec![("a1.py".to_string(), Via::References), ("a2.py".to_string(), Via::ReferencedBy)])]
            .into();
    let plan = plan_covering("g", &agents(2), &[], "f", &seeds, &neighbours).unwrap();
    let sizes: Vec<usize> = plan.slices.iter().map(|s| s.targets.len()).collect();
    assert_eq!(sizes, vec![3, 2], "{:?}", plan.slices);
    assert_eq!(plan.slices[1].targets, vec!["b.py".to_string(), "c.py".to_string()]);
    assert_eq!(plan.slices[0].why["a1.py"], "a.py uses what it defines (SCIP)");
    assert_eq!(plan.slices[0].why["a2.py"], "it uses what a.py defines (SCIP)");
}

#[test]
fn a_module_several_failing_tests_import_goes_with_its_narrowest_importer() {
    // test_curried imports every module through the package; test_items imports items.py alone.
    // The package-wide test ranks first, yet items.py goes with its own test, and the two bugs'
    // modules end in two slices.
    let ranked: Vec<String> =
        ["tests/test_curried.py", "tests/test_items.py", "tests/test_tax.py", "pkg/items.py", "pkg/tax.py"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let seeds: BTreeMap<String, Vec<Evidence>> = [
        ("tests/test_curried.py".to_string(), check_seed("test_namespace")),
        ("tests/test_items.py".to_string(), check_seed("test_items")),
        ("tests/test_tax.py".to_string(), check_seed("test_tax")),
    ]
    .into();
    let imports = |files: &[&str]| files.iter().map(|f| (f.to_string(), Via::Imports)).collect::<Vec<_>>();
    let neighbours: BTreeMap<String, Vec<(String, Via)>> = [
        ("tests/test_curried.py".to_string(), imports(&["pkg/items.py", "pkg/tax.py", "pkg/curried.py"])),
        ("tests/test_items.py".to_string(), imports(&["pkg/items.py"])),
        ("tests/test_tax.py".to_string(), imports(&["pkg/tax.py"])),
    ]
    .into();
    let plan = plan_covering("make the tests pass", &agents(3), &ranked, "f", &seeds, &neighbours).unwrap();
    let owner = |file: &str| plan.slices.iter().find(|s| s.targets.iter().any(|t| t == file)).map(|s| s.agent.clone());
    assert_eq!(owner("pkg/items.py"), owner("tests/test_items.py"), "{plan:#?}");
    assert_eq!(owner("pkg/tax.py"), owner("tests/test_tax.py"), "{plan:#?}");
    assert_ne!(owner("pkg/items.py"), owner("pkg/tax.py"), "{plan:#?}");
    assert_eq!(owner("pkg/curried.py"), owner("tests/test_curried.py"), "{plan:#?}");
}
