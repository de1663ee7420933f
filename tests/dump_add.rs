//! The add pipeline: converters, exclude, override resolution, insert rules and their
//! messages, hostile names, ragged batches.

use std::path::Path;

use burn::backend::NdArray;
use burn::tensor::{DType, Tensor, TensorData};
use burn_profiled::dump::json::PyJson;
use burn_profiled::dump::{
    AddOptions, DumpError, DumpType, Map, RaggedBatch, TensorDumper, ToDump, Value,
};

type B = NdArray;

fn json() -> AddOptions {
    AddOptions::new(DumpType::Json)
}

fn t2x3() -> Tensor<B, 2> {
    Tensor::from_floats([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], &Default::default())
}

/// Dumps and returns `tensors.json` of dump 0, parsed.
fn dumped(mut d: TensorDumper, dir: &Path) -> PyJson {
    d.dump(true).unwrap();
    PyJson::parse(&std::fs::read_to_string(dir.join("0/tensors.json")).unwrap()).unwrap()
}

fn parse(text: &str) -> PyJson {
    PyJson::parse(text).unwrap()
}

struct Outer(i32);
struct Inner(i32);

#[test]
fn converters_chain_until_stable_and_missing_converter_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.register_custom_converter(|o: Outer| {
        Map::new()
            .with("inner", Value::opaque(Inner(o.0)))
            .with("n", o.0)
    });
    d.register_custom_converter(|i: Inner| TensorData::new(vec![i.0, i.0 + 1], [2]));
    d.add_tensor_data("o", Value::opaque(Outer(4)), json())
        .unwrap();
    let error = d
        .add_tensor_data("p", Value::opaque(3u8), json())
        .unwrap_err();
    assert!(
        matches!(error, DumpError::NoConverter(ref t) if t == "u8"),
        "{error}"
    );
    assert_eq!(
        dumped(d, dir.path()),
        parse(r#"{"o": {"inner": [4, 5], "n": 4}}"#)
    );
}

#[test]
fn a_converter_returning_its_own_type_is_reported_not_looped_forever() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.register_custom_converter(|i: Inner| Value::opaque(Inner(i.0)));
    let error = d
        .add_tensor_data("x", Value::opaque(Inner(1)), json())
        .unwrap_err();
    assert!(matches!(error, DumpError::ConverterLoop(_)), "{error}");
}

#[test]
fn exclude_drops_keys_in_nested_maps_but_not_inside_lists() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let data = parse(r#"{"a": 1, "b": {"a": 2, "c": [{"a": 3}]}}"#);
    d.add_tensor_data("x", data, json().exclude(["a"])).unwrap();
    assert_eq!(
        dumped(d, dir.path()),
        parse(r#"{"x": {"b": {"c": [{"a": 3}]}}}"#)
    );
}

#[test]
fn overrides_resolve_by_the_innermost_map_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let data = Map::new()
        .with(
            "A",
            Map::new()
                .with("B", t2x3())
                .with("C", Map::new().with("A", t2x3()).with("D", t2x3())),
        )
        .with("B", t2x3());
    let options = AddOptions::new(DumpType::Binary)
        .type_override("A", DumpType::Json)
        .type_override("C", DumpType::Npy)
        .type_override("B", DumpType::ImageI);
    d.add_tensor_data("x", data, options).unwrap();
    let list = Map::new().with(
        "L",
        vec![t2x3().to_dump(), Map::new().with("k", t2x3()).to_dump()],
    );
    let options = AddOptions::new(DumpType::Binary)
        .type_override("L", DumpType::Json)
        .type_override("k", DumpType::Npy)
        .type_override("0", DumpType::ImageI);
    d.add_tensor_data("y", list, options).unwrap();
    // A tensor given directly is never overridden, whatever the path.
    d.add_tensor_data(
        "z",
        t2x3(),
        AddOptions::new(DumpType::Binary).type_override("z", DumpType::Json),
    )
    .unwrap();
    let t = "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]";
    assert_eq!(
        dumped(d, dir.path()),
        parse(&format!(
            r#"{{"x": {{"A": {{"B": "x.A.B.png", "C": {{"A": {t}, "D": "x.A.C.D.npy"}}}}, "B": "x.B.png"}},
               "y": {{"L": [{t}, {{"k": "y.L.1.k.npy"}}]}}, "z": "z.bin"}}"#
        ))
    );
}

#[test]
fn permute_overrides_may_say_no_permutation() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let data = Map::new()
        .with("p", t2x3())
        .with("q", Map::new().with("r", t2x3()));
    let options = json().permute_axes([1, 0]).permute_override("q", None);
    d.add_tensor_data("x", data, options).unwrap();
    assert_eq!(
        dumped(d, dir.path()),
        parse(
            r#"{"x": {"p": [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], "q": {"r": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]}}}"#
        )
    );
}

#[test]
fn insert_rules_and_their_messages_and_no_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let message = |r: Result<(), DumpError>| r.unwrap_err().to_string();
    d.add_tensor_data("m", Map::new().with("k", 1), json())
        .unwrap();
    assert_eq!(
        message(d.add_tensor_data("m", Map::new().with("k", 2), json())),
        "Path `m` has an existing element with key `k`. Cannot insert element from `value` with the same key."
    );
    assert_eq!(
        message(d.add_tensor_data("m", t2x3(), json())),
        "Path part `m` points to an existing non-empty dictionary. Cannot insert tensors or sequences as this would overwrite the existing elements."
    );
    assert_eq!(
        message(d.add_tensor_data("m", "text", json())),
        "Path part `m` points to an existing non-empty dictionary. Cannot insert tensors or sequences as this would overwrite the existing elements."
    );
    assert_eq!(
        message(d.add_tensor_data("m.k", Map::new().with("z", 1), json())),
        "Path `m.k` points to an existing element which is not a dictionary. Cannot insert there."
    );
    d.add_tensor_data("l", vec![Map::new().to_dump(), 1.to_dump()], json())
        .unwrap();
    assert_eq!(
        message(d.add_tensor_data("l.x.y", t2x3(), json())),
        "Path part x is not a number, but parent is a sequence"
    );
    assert_eq!(
        message(d.add_tensor_data("l.5", t2x3(), json())),
        "Path part 5 is out of bounds (parent is a sequence)"
    );
    d.add_tensor_data("t", t2x3(), json()).unwrap();
    assert_eq!(
        message(d.add_tensor_data("t.u.v", t2x3(), json())),
        "'_TensorWithFormat' object is not subscriptable"
    );
    assert_eq!(
        message(d.add_tensor_data("n.deep", 5, json())),
        "Unsupported data type: <class 'int'>"
    );
    assert_eq!(
        message(d.add_tensor_data("f", 0.5, json())),
        "Unsupported data type: <class 'float'>"
    );
    assert_eq!(
        message(d.add_tensor_data("nothing", None::<i32>, json())),
        "Unsupported data type: <class 'NoneType'>"
    );
    // Several adds to one path merge; a list slot holding an empty map takes a tensor.
    d.add_tensor_data("m", Map::new().with("k2", true), json())
        .unwrap();
    d.add_tensor_data(
        "l.0",
        Tensor::<B, 1>::from_floats([9.0], &Default::default()),
        json(),
    )
    .unwrap();
    // No `{}` left behind by the failed inserts (`n`, `f`, `nothing`, `l.x`, `t.u`).
    assert_eq!(
        dumped(d, dir.path()),
        parse(
            r#"{"m": {"k": 1, "k2": true}, "l": [[9.0], 1], "t": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]}"#
        )
    );
}

#[test]
fn hostile_names_are_rejected_and_nothing_is_written_outside() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("out");
    let mut d = TensorDumper::new(&dir);
    let bin = || AddOptions::new(DumpType::Binary);
    for path in ["../evil", "a/b", "/abs", "a\\b", "a\0b", "x./etc"] {
        let error = d.add_tensor_data(path, t2x3(), bin()).unwrap_err();
        assert!(
            matches!(error, DumpError::InvalidName { .. }),
            "{path}: {error}"
        );
        assert!(error.to_string().contains("path"), "{error}");
    }
    for key in ["..", "x/../../y", "/etc/passwd", "c:\\x", "nul\0"] {
        let error = d
            .add_tensor_data("ok", Map::new().with(key, t2x3()), bin())
            .unwrap_err();
        assert!(
            matches!(error, DumpError::InvalidName { .. }),
            "{key:?}: {error}"
        );
        assert!(error.to_string().contains("key"), "{error}");
    }
    for range in ["..", "../..", "/tmp", "a\\b"] {
        let error = d.push_range(range).unwrap_err();
        assert!(error.to_string().contains("range name"), "{range}: {error}");
    }
    assert!(matches!(d.pop_range(), Err(DumpError::EmptyRangeStack)));
    assert_eq!(
        d.pop_range().unwrap_err().to_string(),
        "pop from empty list"
    );
    // Dots alone cannot escape: the file name is one component (`[tensors.json]a.....bin`).
    d.add_tensor_data("a", Map::new().with("...", t2x3()), bin())
        .unwrap();
    d.add_tensor_data("ok", t2x3(), bin()).unwrap();
    d.dump(true).unwrap();
    let outside: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, vec!["out"]);
    let inside: Vec<_> = std::fs::read_dir(dir.join("0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(inside.len(), 5, "{inside:?}");
    assert!(inside.contains(&"[tensors.json]a.....bin".to_owned()));
}

/// A key with a dot and nested maps, or names differing only in case, would share a blob file:
/// the dump is refused before anything is written, naming the file and both tensors.
#[test]
fn tensors_sharing_a_blob_file_are_refused_before_writing() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("out");
    let bin = || AddOptions::new(DumpType::Binary);
    let mut d = TensorDumper::new(&dir);
    d.add_tensor_data("p", Map::new().with("a.b", t2x3()), bin())
        .unwrap();
    d.add_tensor_data("p.a", Map::new().with("b", t2x3()), bin())
        .unwrap();
    assert_eq!(
        d.dump(true).unwrap_err().to_string(),
        r#"Two tensors would be written to the same blob file `[tensors.json]p.a.b.bin` (file names are compared ignoring case): tensors["p"]["a.b"] and tensors["p"]["a"]["b"]"#
    );
    assert!(!dir.exists(), "nothing is created");

    let mut d = TensorDumper::new(&dir);
    d.add_tensor_data(
        "img",
        Map::new().with("0", t2x3()),
        AddOptions::new(DumpType::ImageI),
    )
    .unwrap();
    d.add_tensor_data(
        "IMG",
        t2x3().reshape([1, 2, 3]),
        AddOptions::new(DumpType::ImageI),
    )
    .unwrap();
    assert_eq!(
        d.dump(true).unwrap_err().to_string(),
        r#"Two tensors would be written to the same blob file `[tensors.json]IMG.0.png` (file names are compared ignoring case): tensors["img"]["0"] and tensors["IMG"][0]"#
    );
    assert!(!dir.exists(), "nothing is created");
}

#[test]
fn a_map_with_a_key_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let map = Map(vec![
        ("k".to_owned(), Value::Int(1)),
        ("k".to_owned(), t2x3().to_dump()),
    ]);
    assert_eq!(
        d.add_tensor_data("m", Map::new().with("inner", map), json())
            .unwrap_err()
            .to_string(),
        "The map at path `m.inner` has the key `k` more than once"
    );
}

struct Ragged {
    data: TensorData,
    sizes: Vec<usize>,
}

impl RaggedBatch for Ragged {
    fn data(&self) -> TensorData {
        self.data.clone()
    }
    fn sample_sizes(&self) -> Vec<usize> {
        self.sizes.clone()
    }
    fn non_uniform_dim(&self) -> usize {
        1
    }
    fn num_batch_dims(&self) -> usize {
        1
    }
}

fn ragged() -> Value {
    let values: Vec<f32> = (0..15).map(|v| v as f32).collect();
    Value::opaque(Ragged {
        data: TensorData::new(values, [3, 5]),
        sizes: vec![3, 5, 1],
    })
}

#[test]
fn ragged_batches_per_sample_or_as_a_map_switchable_between_adds() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    d.enable_ragged_batch_dumping::<Ragged>(true);
    d.add_tensor_data("ragged_batches.batch_1", ragged(), json())
        .unwrap();
    d.enable_ragged_batch_dumping::<Ragged>(false);
    d.add_tensor_data("ragged_batches.batch_2", ragged(), json())
        .unwrap();
    assert_eq!(
        dumped(d, dir.path()),
        parse(
            r#"{"ragged_batches": {
                "batch_1": [[0.0, 1.0, 2.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0]],
                "batch_2": {"data": [[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0]],
                            "sample_sizes": [3, 5, 1], "non_uniform_dim": 1, "num_batch_dims": 1}}}"#
        )
    );
}

/// `TensorData` built by hand whose bytes do not fit its shape is refused when added, naming
/// the path, instead of panicking when dumped.
#[test]
fn tensor_data_whose_bytes_do_not_fit_its_shape_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let short = || TensorData::from_bytes_vec(vec![0; 8], [3], DType::F32);
    for dump_type in [DumpType::Json, DumpType::Binary, DumpType::ImageI] {
        assert_eq!(
            d.add_tensor_data(
                "m",
                Map::new().with("x", short()),
                AddOptions::new(dump_type)
            )
            .unwrap_err()
            .to_string(),
            "Invalid tensor data at `m.x`: 8 bytes, but shape [3] of F32 needs 12"
        );
    }
    let huge = TensorData::from_bytes_vec(vec![0; 8], [usize::MAX, 2], DType::F32);
    assert_eq!(
        d.add_tensor_data("h", huge, json())
            .unwrap_err()
            .to_string(),
        format!(
            "Invalid tensor data at `h`: shape [{}, 2] of F32 has more bytes than memory can hold",
            usize::MAX
        )
    );
    d.enable_ragged_batch_dumping::<Ragged>(true);
    let ragged = Value::opaque(Ragged {
        data: TensorData::from_bytes_vec(vec![0; 8], [3, 5], DType::F32),
        sizes: vec![3, 5, 1],
    });
    assert_eq!(
        d.add_tensor_data("r", ragged, json())
            .unwrap_err()
            .to_string(),
        "Invalid ragged batch: 8 bytes, but shape [3, 5] of F32 needs 60"
    );
    // An empty tensor with huge dims is fine, permuted or split into images.
    let empty = |shape: Vec<usize>| TensorData::from_bytes_vec(Vec::new(), shape, DType::F32);
    d.add_tensor_data(
        "p",
        empty(vec![usize::MAX, 0, usize::MAX]),
        AddOptions::new(DumpType::Binary).permute_axes(vec![2, 1, 0]),
    )
    .unwrap();
    d.add_tensor_data(
        "s",
        empty(vec![2, 0, usize::MAX, 5]),
        AddOptions::new(DumpType::ImageI),
    )
    .unwrap();
    assert_eq!(
        dumped(d, dir.path()),
        parse(r#"{"p": "p.bin", "s": [[], []]}"#)
    );
}

#[test]
fn all_dtypes_dump_as_json_and_binary() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let data = Map::new()
        .with(
            "f16",
            TensorData::new(vec![burn::tensor::f16::from_f32(0.5)], [1]),
        )
        .with(
            "bf16",
            TensorData::new(vec![burn::tensor::bf16::from_f32(1.5)], [1]),
        )
        .with("f32", TensorData::new(vec![0.1f32], [1]))
        .with("i8", TensorData::new(vec![-3i8], [1]))
        .with("u16", TensorData::new(vec![7u16], [1]))
        .with("u64", TensorData::new(vec![u64::MAX], [1]))
        .with("bool", TensorData::new(vec![true, false], [2]));
    d.add_tensor_data("j", data, json()).unwrap();
    let bin = Map::new()
        .with(
            "bf16",
            TensorData::new(vec![burn::tensor::bf16::from_f32(1.5)], [1]),
        )
        .with("bool", TensorData::new(vec![true], [1]));
    d.add_tensor_data("b", bin, AddOptions::new(DumpType::Binary))
        .unwrap();
    d.dump(true).unwrap();
    let text = std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap();
    assert_eq!(
        PyJson::parse(&text).unwrap().get("j").unwrap(),
        &parse(
            r#"{"f16": [0.5], "bf16": [1.5], "f32": [0.10000000149011612], "i8": [-3], "u16": [7],
                "u64": [1.8446744073709552e19], "bool": [true, false]}"#
        )
    );
    let meta =
        std::fs::read_to_string(dir.path().join("0/[tensors.json]b.bf16.bin.meta.json")).unwrap();
    assert!(meta.contains("torch.bfloat16"), "{meta}");
    let meta =
        std::fs::read_to_string(dir.path().join("0/[tensors.json]b.bool.bin.meta.json")).unwrap();
    assert!(meta.contains("torch.bool"), "{meta}");
}

/// A user's own type, dumped directly (`impl ToDump`, as before the core and the editions).
struct Scale {
    factor: f64,
    name: &'static str,
}

impl ToDump for Scale {
    fn to_dump(self) -> Value {
        Map::new()
            .with("factor", self.factor)
            .with("name", self.name)
            .to_dump()
    }
}

#[test]
fn a_users_own_to_dump_type_sits_beside_tensors_in_maps_lists_and_tuples() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let scale = || Scale {
        factor: 0.5,
        name: "s",
    };
    let data = Map::new()
        .with("t", t2x3())
        .with("scale", scale())
        .with("pair", (scale(), t2x3()))
        .with("list", vec![Some(scale()), None]);
    d.add_tensor_data("a", data, json()).unwrap();
    let scale_json = r#"{"factor": 0.5, "name": "s"}"#;
    let t_json = "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]";
    assert_eq!(
        dumped(d, dir.path()),
        parse(&format!(
            r#"{{"a": {{"t": {t_json}, "scale": {scale_json}, "pair": [{scale_json}, {t_json}], "list": [{scale_json}, null]}}}}"#
        ))
    );
}
