//! The worked example of the original's directory layout (reference §3.8), byte for byte,
//! with `.npy` in place of `.pkl`.

use std::collections::BTreeSet;
use std::path::Path;

use burn::backend::{Autodiff, NdArray};
use burn::tensor::{Int, Tensor, TensorData};
use burn_profiled::dump::{AddOptions, DumpType, Map, TensorDumper, ToDump, Value};

type B = Autodiff<NdArray>;

struct Wrapper {
    t: Tensor<B, 1, Int>,
    txt: String,
}

const TENSORS_JSON: &str = r#"{
  "a": [
    [
      1.0,
      2.5
    ],
    [
      3.0,
      4.0
    ]
  ],
  "group": {
    "bin": "group.bin.bin",
    "img": [
      "group.img.0.png",
      "group.img.1.png"
    ],
    "gray": "group.gray.png",
    "w": {
      "t": [
        1,
        2
      ],
      "txt": "hi"
    },
    "np": "group.np.bin",
    "lst": [
      "group.lst.0.bin",
      "str",
      3,
      null
    ],
    "pk": "group.pk.npy"
  },
  "outer": {
    "inner_3": {
      "x": {
        "y": 7
      }
    }
  }
}"#;

const GRADS_JSON: &str = r#"{
  "grads": {
    "g1": "grads.g1.bin",
    "g2": null,
    "g3": "`.requires_grad == False`"
  }
}"#;

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn worked_example_layout_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let device = Default::default();
    let mut d = TensorDumper::new(dir.path().join("out"));
    let a = Tensor::<B, 2>::from_floats([[1.0, 2.5], [3.0, 4.0]], &device);
    d.register_custom_converter(|w: Wrapper| Map::new().with("t", w.t).with("txt", w.txt));
    d.add_tensor_data("a", a.clone(), AddOptions::new(DumpType::Json))
        .unwrap();
    let img = Tensor::<B, 1, Int>::arange(0..36, &device)
        .float()
        .div_scalar(35.0)
        .reshape([2, 3, 2, 3]);
    let gray = Tensor::<B, 1, Int>::arange(0..6, &device).reshape([2, 3]);
    let wrapper = Wrapper {
        t: Tensor::from_ints([1, 2], &device),
        txt: "hi".into(),
    };
    let group = Map::new()
        .with("bin", a.clone())
        .with("img", img)
        .with("gray", gray)
        .with("w", Value::opaque(wrapper))
        .with("np", TensorData::new(vec![0.5f64, 1.5], [2]))
        .with("skip", a.clone())
        .with(
            "lst",
            vec![
                a.clone().to_dump(),
                "str".to_dump(),
                3.to_dump(),
                Value::Null,
            ],
        );
    d.add_tensor_data(
        "group",
        group,
        AddOptions::new(DumpType::Binary)
            .type_override("img", DumpType::ImageRgb)
            .type_override("gray", DumpType::ImageI)
            .type_override("w", DumpType::Json)
            .permute_override("bin", Some(vec![1, 0]))
            .exclude(["skip"]),
    )
    .unwrap();
    d.add_tensor_data("group.pk", a.clone(), AddOptions::new(DumpType::Npy))
        .unwrap();
    d.push_range("outer").unwrap();
    d.push_range(format!("inner_{}", 3)).unwrap();
    // Burn has no 0-d tensors; TensorData with an empty shape is one.
    d.add_tensor_data(
        "x.y",
        TensorData::new(vec![7i64], Vec::<usize>::new()),
        AddOptions::new(DumpType::Json),
    )
    .unwrap();
    assert_eq!(d.pop_range().unwrap(), "inner_3");
    assert_eq!(d.pop_range().unwrap(), "outer");

    let g1 = Tensor::<B, 1>::from_floats([1.0, 2.0], &device).require_grad();
    let g2 = Tensor::<B, 1>::from_floats([5.0], &device).require_grad();
    let g3 = Tensor::<B, 1>::from_floats([6.0], &device);
    d.add_grad_data(
        "grads",
        Map::new()
            .with("g1", g1.clone())
            .with("g2", g2)
            .with("g3", g3),
        AddOptions::new(DumpType::Json).type_override("g1", DumpType::Binary),
    )
    .unwrap();
    let loss = (g1.clone() * g1).sum();
    let _ = d.set_gradients::<B>(loss).unwrap();
    d.dump(true).unwrap();

    let out = dir.path().join("out/0");
    let files: BTreeSet<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let expected: BTreeSet<String> = [
        "tensors.json",
        "grads.json",
        "[tensors.json]group.bin.bin",
        "[tensors.json]group.bin.bin.meta.json",
        "[tensors.json]group.img.0.png",
        "[tensors.json]group.img.0.png.meta.json",
        "[tensors.json]group.img.1.png",
        "[tensors.json]group.img.1.png.meta.json",
        "[tensors.json]group.gray.png",
        "[tensors.json]group.gray.png.meta.json",
        "[tensors.json]group.np.bin",
        "[tensors.json]group.np.bin.meta.json",
        "[tensors.json]group.lst.0.bin",
        "[tensors.json]group.lst.0.bin.meta.json",
        "[tensors.json]group.pk.npy",
        "[grads.json]grads.g1.bin",
        "[grads.json]grads.g1.bin.meta.json",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(files, expected);
    // Nothing else in the dump directory (no leftover temporary directory).
    let top: Vec<_> = std::fs::read_dir(dir.path().join("out")).unwrap().collect();
    assert_eq!(top.len(), 1);

    assert_eq!(read(&out, "tensors.json"), TENSORS_JSON);
    assert_eq!(read(&out, "grads.json"), GRADS_JSON);
    assert_eq!(
        read(&out, "[tensors.json]group.bin.bin.meta.json"),
        "{\n  \"file_data_shape\": [\n    2,\n    2\n  ],\n  \"file_data_dtype\": \"torch.float32\"\n}"
    );
    assert_eq!(
        std::fs::read(out.join("[tensors.json]group.bin.bin")).unwrap(),
        f32_bytes(&[1.0, 3.0, 2.5, 4.0])
    );
    assert_eq!(
        read(&out, "[tensors.json]group.gray.png.meta.json"),
        "{\n  \"original_range\": [\n    0,\n    5\n  ],\n  \"image_format\": \"Intensity\"\n}"
    );
    assert_eq!(
        read(&out, "[tensors.json]group.img.0.png.meta.json"),
        "{\n  \"original_range\": [\n    0.0,\n    0.48571428656578064\n  ],\n  \"image_format\": \"RGB\"\n}"
    );
    assert!(read(&out, "[tensors.json]group.np.bin.meta.json").contains("\"torch.float64\""));
    assert_eq!(
        std::fs::read(out.join("[tensors.json]group.np.bin")).unwrap(),
        [0.5f64, 1.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    );
    // The gradient of sum(g1²) is 2·g1.
    assert_eq!(
        std::fs::read(out.join("[grads.json]grads.g1.bin")).unwrap(),
        f32_bytes(&[2.0, 4.0])
    );
    let gray = image::open(out.join("[tensors.json]group.gray.png"))
        .unwrap()
        .to_luma8();
    assert_eq!(gray.dimensions(), (3, 2));
    assert_eq!(gray.into_raw(), vec![0, 51, 102, 153, 204, 255]);
    let rgb = image::open(out.join("[tensors.json]group.img.1.png"))
        .unwrap()
        .to_rgb8();
    assert_eq!(rgb.dimensions(), (2, 3));
    // Image 1 holds 18..=35: min-max scaled to 0..=255 (truncated), channels R, G, B.
    let expected: Vec<u8> = (0..18).map(|i| (i as f64 * 255.0 / 17.0) as u8).collect();
    let got = rgb.into_raw();
    assert_eq!(got.len(), 18);
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            (*g as i32 - *e as i32).abs() <= 1,
            "{got:?} vs {expected:?}"
        );
    }
    let npy = std::fs::read(out.join("[tensors.json]group.pk.npy")).unwrap();
    assert!(npy.starts_with(b"\x93NUMPY"));
}
