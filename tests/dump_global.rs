//! The process-wide dumper: disabled no-ops (closures not called), enable once, actions that
//! use the dumper. One test: the dumper is enable-once per process.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use burn_profiled::dump::{AddOptions, CompareSettings, DumpType, global};

#[test]
fn global_dumper_lifecycle() {
    let json = || AddOptions::new(DumpType::Json);
    // Disabled: nothing is evaluated, everything is neutral.
    assert!(!global::is_enabled());
    global::add_tensor_data_with(
        "x",
        || -> i32 { panic!("evaluated while disabled") },
        json(),
    )
    .unwrap();
    global::push_range_with(|| -> String { panic!("evaluated while disabled") }).unwrap();
    assert_eq!(
        global::run_if_enabled(|| panic!("run while disabled")),
        None::<()>
    );
    assert_eq!(global::pop_range().unwrap(), None);
    assert!(global::dump(true).unwrap());
    assert_eq!(global::dump_count(), 0);
    let t =
        burn::tensor::Tensor::<burn::backend::NdArray, 1>::from_floats([1.0], &Default::default());
    let same = global::grad_tap("t", t.clone(), json()).unwrap();
    assert_eq!(same.into_data(), t.into_data());

    let dir = tempfile::tempdir().unwrap();
    global::enable(dir.path());
    assert!(global::is_enabled());
    let second = std::panic::catch_unwind(|| global::enable(dir.path())).unwrap_err();
    assert_eq!(
        second.downcast_ref::<&str>().copied(),
        Some("`TensorDumper` is already enabled. Can only be enabled once.")
    );
    assert_eq!(global::run_if_enabled(|| 5), Some(5));

    // An action may use the dumper: it runs with the lock released.
    let fired = Arc::new(AtomicUsize::new(0));
    let seen = fired.clone();
    global::perform_after_dump_count(1, move || {
        seen.store(global::dump_count(), Ordering::SeqCst);
        global::add_tensor_data("from_action", vec![1], AddOptions::new(DumpType::Json)).unwrap();
    });
    global::push_range_with(|| "r").unwrap();
    global::add_tensor_data_with("x", || vec![1.5, 2.5], json()).unwrap();
    assert_eq!(global::pop_range().unwrap().as_deref(), Some("r"));
    assert!(global::dump(true).unwrap());
    assert_eq!(fired.load(Ordering::SeqCst), 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap(),
        "{\n  \"r\": {\n    \"x\": [\n      1.5,\n      2.5\n    ]\n  }\n}"
    );
    global::dump(true).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("1/tensors.json")).unwrap(),
        "{\n  \"from_action\": [\n    1\n  ]\n}"
    );

    // Then the same data again, compared.
    global::set_dump_count(0);
    global::set_dump_is_compare(CompareSettings::default());
    global::push_range("r").unwrap();
    global::add_tensor_data("x", vec![1.5, 2.5], json()).unwrap();
    global::pop_range().unwrap();
    assert!(global::dump(true).unwrap());
    assert_eq!(global::dump_count(), 1);
    global::add_tensor_data("x", vec![1.5, 2.5], json()).unwrap();
    let error = global::dump(true).unwrap_err().to_string();
    assert!(error.contains("Extra key 'x'"), "{error}");
}
