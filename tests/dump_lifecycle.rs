//! Dumping, counting, actions and comparison (reference §3.6, §3.7, §3.10–§3.12).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use burn::backend::{Autodiff, NdArray};
use burn::tensor::Tensor;
use burn_profiled::dump::{AddOptions, CompareSettings, DumpError, DumpType, Map, TensorDumper};

type B = NdArray;

fn json() -> AddOptions {
    AddOptions::new(DumpType::Json)
}

fn t(values: [[f32; 3]; 2]) -> Tensor<B, 2> {
    Tensor::from_floats(values, &Default::default())
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(read) => read
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

#[test]
fn dump_if_empty_and_counting() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    assert!(d.dump(false).unwrap());
    assert_eq!(d.dump_count(), 0);
    assert!(entries(dir.path()).is_empty());
    d.dump(true).unwrap();
    assert_eq!(d.dump_count(), 1);
    assert_eq!(entries(&dir.path().join("0")), vec!["tensors.json"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap(),
        "{}"
    );
    d.add_tensor_data("x", vec![1, 2], json()).unwrap();
    d.dump(false).unwrap();
    assert_eq!(d.dump_count(), 2);
    assert_eq!(entries(dir.path()), vec!["0", "1"]);
}

/// At `usize::MAX` the count cannot go on: an error, with nothing written and the data kept.
#[test]
fn a_dump_at_the_largest_count_is_an_error_not_an_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.set_dump_count(usize::MAX);
    d.add_tensor_data("x", vec![1, 2], json()).unwrap();
    let message = format!(
        "Cannot dump or compare at dump count {}: the count after it would overflow (see `set_dump_count`)",
        usize::MAX
    );
    assert_eq!(d.dump(true).unwrap_err().to_string(), message);
    assert!(entries(dir.path()).is_empty());
    assert_eq!(
        d.compare_to_dumped_data(CompareSettings::default(), true)
            .unwrap_err()
            .to_string(),
        message
    );
    assert_eq!(d.dump_count(), usize::MAX);
    d.set_dump_count(0);
    d.dump(false).unwrap();
    assert_eq!(entries(&dir.path().join("0")), vec!["tensors.json"]);
}

#[test]
fn actions_fire_after_dumps_and_on_set_count_and_are_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let at_two = Arc::new(AtomicUsize::new(0));
    let at_zero = Arc::new(AtomicUsize::new(0));
    let counter = at_two.clone();
    d.perform_after_dump_count(2, move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let counter = at_zero.clone();
    d.perform_after_dump_count(0, move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    d.dump(true).unwrap();
    assert_eq!(at_two.load(Ordering::SeqCst), 0);
    d.dump(true).unwrap();
    assert_eq!(at_two.load(Ordering::SeqCst), 1);
    d.dump(false).unwrap(); // empty and skipped: no count, no action
    assert_eq!(d.dump_count(), 2);
    d.set_dump_count(2);
    assert_eq!(at_two.load(Ordering::SeqCst), 2);
    d.reset_dump_count();
    assert_eq!(at_zero.load(Ordering::SeqCst), 1);
    d.reset_dump_count();
    assert_eq!(at_zero.load(Ordering::SeqCst), 2);
    // Registering again replaces.
    let counter = at_two.clone();
    d.perform_after_dump_count(2, move || {
        counter.fetch_add(100, Ordering::SeqCst);
    });
    d.set_dump_count(2);
    assert_eq!(at_two.load(Ordering::SeqCst), 102);
}

fn reference(d: &mut TensorDumper) {
    d.add_tensor_data("t1", t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), json())
        .unwrap();
    let other = Map::new()
        .with("t2", t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        .with("t3", t([[0.0; 3]; 2]))
        .with("num", 1.5)
        .with("flag", true);
    d.add_tensor_data("other", other, json()).unwrap();
}

fn current(d: &mut TensorDumper) {
    d.add_tensor_data("t1", t([[1.0, 2.0, 3.0], [0.0, 5.0, 16.0]]), json())
        .unwrap();
    let other = Map::new()
        .with("t2", t([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]]))
        .with("t4", t([[0.0; 3]; 2]))
        .with("num", 1.50001)
        .with("flag", false);
    d.add_tensor_data("other", other, json()).unwrap();
}

/// The original's documented comparison message (section 3.11), shared with the unit test of
/// the comparison walk.
const MESSAGE: &str = include_str!("../crates/core/tests/golden/compare_message.txt");

#[test]
fn dump_then_compare_consistent_and_the_failure_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = TensorDumper::new(dir.path());
    reference(&mut first);
    first.dump(true).unwrap();
    reference(&mut first);
    first.dump(true).unwrap();

    let mut second = TensorDumper::new(dir.path());
    reference(&mut second);
    assert!(
        second
            .compare_to_dumped_data(CompareSettings::default(), true)
            .unwrap()
    );
    assert_eq!(second.dump_count(), 1);

    let mut third = TensorDumper::new(dir.path());
    current(&mut third);
    let settings = CompareSettings {
        num_errors_per_tensor_to_show: 2,
        ..Default::default()
    };
    let error = third.compare_to_dumped_data(settings, true).unwrap_err();
    assert!(matches!(error, DumpError::Mismatch(_)));
    assert_eq!(error.to_string(), MESSAGE);
    // Counted and cleared even on failure.
    assert_eq!(third.dump_count(), 1);
    // As a warning: Ok(false), counted.
    current(&mut third);
    let warn = CompareSettings {
        as_warning: true,
        ..settings
    };
    assert!(!third.compare_to_dumped_data(warn, true).unwrap());
    assert_eq!(third.dump_count(), 2);
    // Nothing to compare and compare_if_empty false: no count.
    assert!(third.compare_to_dumped_data(warn, false).unwrap());
    assert_eq!(third.dump_count(), 2);
}

#[test]
fn dump_is_compare_honours_allow_missing_data_in_previous() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("a", vec![1.0, 2.0], json()).unwrap();
    d.dump(true).unwrap();
    d.set_dump_count(0);
    d.set_dump_is_compare(CompareSettings {
        allow_missing_data_in_previous: true,
        ..Default::default()
    });
    d.add_tensor_data("a", vec![1.0, 2.0000001], json())
        .unwrap();
    d.add_tensor_data("extra", vec![3], json()).unwrap();
    assert!(d.dump(true).unwrap());
    assert_eq!(d.dump_count(), 1);
    // The original drops the flag: without it the extra key fails.
    d.set_dump_count(0);
    d.set_dump_is_compare(CompareSettings::default());
    d.add_tensor_data("a", vec![1.0, 2.0], json()).unwrap();
    d.add_tensor_data("extra", vec![3], json()).unwrap();
    let error = d.dump(true).unwrap_err().to_string();
    assert!(
        error.contains("  Extra key 'extra' at path: . (i.e. root) in current data but not present in reference"),
        "{error}"
    );
}

#[test]
fn compare_refuses_blobs_and_reports_missing_or_corrupt_references() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("t1", t([[1.0; 3]; 2]), AddOptions::new(DumpType::Binary))
        .unwrap();
    let error = d
        .compare_to_dumped_data(CompareSettings::default(), true)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Cannot compare to dumped data with binary or image format.\nFound image or binary format at: t1\nwith format: bin\nPlease use the JSON format when dumping the data for comparison."
    );
    d.add_tensor_data("x", vec![1], json()).unwrap();
    let error = d
        .compare_to_dumped_data(CompareSettings::default(), true)
        .unwrap_err();
    let file = dir.path().join("1").join("tensors.json");
    assert_eq!(
        error.to_string(),
        format!(
            "No previously dumped data found for [tensors] data for dump 1\nunder file path: {}.\nDump the data first before comparing to previously dumped data.",
            file.display()
        )
    );
    for (count, bad) in [(2, "{\n  \"x\": [\n    1,"), (3, "\u{0}\u{1}garbage")] {
        std::fs::create_dir_all(dir.path().join(count.to_string())).unwrap();
        let file = dir.path().join(format!("{count}/tensors.json"));
        std::fs::write(&file, bad).unwrap();
        d.add_tensor_data("x", vec![1], json()).unwrap();
        let error = d
            .compare_to_dumped_data(CompareSettings::default(), true)
            .unwrap_err();
        assert!(matches!(error, DumpError::BadReference { .. }), "{error}");
        assert!(
            error.to_string().contains(&file.display().to_string()),
            "{error}"
        );
    }
}

#[test]
fn a_failing_dump_writes_nothing_and_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("good", t([[1.0; 3]; 2]), AddOptions::new(DumpType::Binary))
        .unwrap();
    d.add_tensor_data(
        "bad",
        Tensor::<B, 1>::from_floats([1.0, 2.0], &Default::default()),
        AddOptions::new(DumpType::ImageRgb),
    )
    .unwrap();
    let error = d.dump(true).unwrap_err();
    let file = dir.path().join("0").join("[tensors.json]bad.png");
    assert_eq!(
        error.to_string(),
        format!(
            "Number of image dimensions does not match the dump type for file:\n{}.\nImage data has 1 dimensions; dump type is Type.IMAGE_RGB.",
            file.display()
        )
    );
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    assert_eq!(d.dump_count(), 0);

    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data(
        "c",
        Tensor::<B, 3>::zeros([2, 2, 4], &Default::default()),
        AddOptions::new(DumpType::ImageBgr),
    )
    .unwrap();
    let file = dir.path().join("0").join("[tensors.json]c.png");
    assert_eq!(
        d.dump(true).unwrap_err().to_string(),
        format!(
            "Color image must have 3 channels, but image to be dumped to:\n{}\nhas 4 channels.",
            file.display()
        )
    );
    assert!(entries(dir.path()).is_empty());

    // Gradients added but not computed: refused before writing anything, data kept.
    type A = Autodiff<NdArray>;
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("x", vec![1], json()).unwrap();
    let g = Tensor::<A, 1>::from_floats([1.0], &Default::default()).require_grad();
    d.add_grad_data("g", g.clone(), json()).unwrap();
    assert_eq!(
        d.dump(true).unwrap_err().to_string(),
        "Gradients were not computed. Call `set_gradients` before dumping if any gradients are included."
    );
    assert!(entries(dir.path()).is_empty());
    let _ = d.set_gradients::<A>((g * 3.0).sum()).unwrap();
    d.dump(true).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap(),
        "{\n  \"g\": [\n    3.0\n  ]\n}"
    );
    assert_eq!(entries(dir.path()), vec!["0"]);
}

#[test]
fn redumping_a_count_replaces_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("x", t([[1.0; 3]; 2]), AddOptions::new(DumpType::Binary))
        .unwrap();
    d.dump(true).unwrap();
    d.reset_dump_count();
    d.add_tensor_data("y", vec![1], json()).unwrap();
    d.dump(true).unwrap();
    assert_eq!(entries(&dir.path().join("0")), vec!["tensors.json"]);
    assert_eq!(entries(dir.path()), vec!["0"]);
}

#[test]
fn dump_type_for_all_rewrites_existing_records_and_wins_later() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("a", t([[1.0; 3]; 2]), AddOptions::new(DumpType::Binary))
        .unwrap();
    d.set_dump_type_for_all(DumpType::Json, true, true);
    d.add_tensor_data(
        "b",
        Map::new().with("c", t([[2.0; 3]; 2])),
        AddOptions::new(DumpType::Npy).type_override("c", DumpType::Binary),
    )
    .unwrap();
    d.dump(true).unwrap();
    assert_eq!(entries(&dir.path().join("0")), vec!["tensors.json"]);
    // Excluding tensors keeps their type.
    d.add_tensor_data("a", t([[1.0; 3]; 2]), AddOptions::new(DumpType::Binary))
        .unwrap();
    d.set_dump_type_for_all(DumpType::Binary, false, true);
    d.dump(true).unwrap();
    let text = std::fs::read_to_string(dir.path().join("1/tensors.json")).unwrap();
    assert!(text.contains("[\n      1.0,"), "{text}");
}

#[test]
fn invalid_permutations_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.add_tensor_data("a", t([[1.0; 3]; 2]), json().permute_axes([0, 0]))
        .unwrap();
    let error = d.dump(true).unwrap_err();
    assert!(
        matches!(error, DumpError::InvalidPermutation { .. }),
        "{error}"
    );
}
