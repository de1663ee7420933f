//! The dumper's blob formats: the original's `.bin` + meta, `.png` + meta and NumPy `.npy`,
//! byte for byte where the original is known, and readers that reject malformed files.

use std::path::{Path, PathBuf};

use burn::tensor::{DType, TensorData};
use burn_profiled::dump::blob::{
    Array, BlobError, Dtype, ImageFormat, read_bin, read_npy, read_png, write_bin, write_npy,
    write_png,
};
use burn_profiled::dump::json::PyJson;
use half::{bf16, f16};
use proptest::prelude::*;

fn file(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn meta_text(path: &Path) -> String {
    let mut name = path.as_os_str().to_owned();
    name.push(".meta.json");
    std::fs::read_to_string(name).unwrap()
}

/// A named pipe at `path`: neither a file nor a symlink.
fn make_fifo(path: &Path) {
    let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn bin_of_a_permuted_tensor_is_the_documented_bytes_and_meta() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "[tensors.json]group.bin.bin");
    let a = Array::from_values(&[2, 2], &[1.0f32, 2.5, 3.0, 4.0]).unwrap();
    write_bin(&path, &a.permuted(&[1, 0]).unwrap()).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        f32_bytes(&[1.0, 3.0, 2.5, 4.0])
    );
    assert_eq!(
        meta_text(&path),
        "{\n  \"file_data_shape\": [\n    2,\n    2\n  ],\n  \"file_data_dtype\": \"torch.float32\"\n}"
    );
    let back = read_bin(&path).unwrap();
    assert_eq!(back.shape, vec![2, 2]);
    assert_eq!(back.values_f64(), vec![1.0, 3.0, 2.5, 4.0]);
}

/// One small array of every dtype, with awkward values.
fn arrays_of_every_dtype() -> Vec<Array> {
    let shape = [2, 2];
    vec![
        Array::from_values(&shape, &[1.5f32, -0.0, f32::NAN, f32::INFINITY]).unwrap(),
        Array::from_values(&shape, &[0.1f64, -1e300, 5e-324, 2.0]).unwrap(),
        Array::from_values(&shape, &[1.5, -2.0, 65504.0, 0.25].map(f16::from_f32)).unwrap(),
        Array::from_values(&shape, &[1.5, -2.0, 3.0e38, 0.25].map(bf16::from_f32)).unwrap(),
        Array::from_values(&shape, &[i8::MIN, -1, 0, i8::MAX]).unwrap(),
        Array::from_values(&shape, &[i16::MIN, -1, 0, i16::MAX]).unwrap(),
        Array::from_values(&shape, &[i32::MIN, -1, 0, i32::MAX]).unwrap(),
        Array::from_values(&shape, &[i64::MIN, -1, 0, i64::MAX]).unwrap(),
        Array::from_values(&shape, &[0u8, 1, 128, 255]).unwrap(),
        Array::from_values(&shape, &[0u16, 1, 300, u16::MAX]).unwrap(),
        Array::from_values(&shape, &[0u32, 1, 70_000, u32::MAX]).unwrap(),
        Array::from_values(&shape, &[0u64, 1, 1 << 40, u64::MAX]).unwrap(),
        Array::from_values(&shape, &[true, false, false, true]).unwrap(),
    ]
}

#[test]
fn bin_round_trips_every_dtype_with_its_torch_name() {
    let dir = tempfile::tempdir().unwrap();
    for array in arrays_of_every_dtype() {
        let path = file(&dir, &format!("{}.bin", array.dtype.torch_name()));
        write_bin(&path, &array).unwrap();
        assert!(meta_text(&path).contains(array.dtype.torch_name()));
        assert_eq!(read_bin(&path).unwrap(), array);
    }
}

#[test]
fn npy_header_is_byte_for_byte_what_numpy_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "a.npy");
    let values = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
    write_npy(&path, &Array::from_values(&[2, 3], &values).unwrap()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut expected_header =
        b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
            .to_vec();
    expected_header.resize(127, b' ');
    expected_header.push(b'\n');
    assert_eq!(&bytes[..128], &expected_header[..]);
    assert_eq!(&bytes[128..], &f32_bytes(&values)[..]);
}

#[test]
fn npy_headers_of_scalars_vectors_and_empty_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[usize], &[i64], &str); 4] = [
        (&[], &[7], "'shape': (), }"),
        (&[3], &[1, 2, 3], "'shape': (3,), }"),
        (&[0], &[], "'shape': (0,), }"),
        (&[2, 0, 5], &[], "'shape': (2, 0, 5), }"),
    ];
    for (shape, values, shape_text) in cases {
        let path = file(&dir, "s.npy");
        let array = Array::from_values(shape, values).unwrap();
        write_npy(&path, &array).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header_length = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
        assert!((10 + header_length).is_multiple_of(64));
        let header = std::str::from_utf8(&bytes[10..10 + header_length]).unwrap();
        assert!(header.starts_with("{'descr': '<i8', 'fortran_order': False, "));
        assert!(header.contains(shape_text), "{header}");
        assert!(header.ends_with(" \n"));
        assert_eq!(read_npy(&path).unwrap(), array);
    }
}

#[test]
fn npy_round_trips_every_dtype_and_widens_bfloat16() {
    let dir = tempfile::tempdir().unwrap();
    for array in arrays_of_every_dtype() {
        let path = file(&dir, &format!("{}.npy", array.dtype.torch_name()));
        write_npy(&path, &array).unwrap();
        let back = read_npy(&path).unwrap();
        if array.dtype == Dtype::BF16 {
            assert_eq!(back.dtype, Dtype::F32);
            assert_eq!(back.shape, array.shape);
            assert_eq!(back.values_f64(), array.values_f64());
        } else {
            assert_eq!(back, array, "{:?}", array.dtype);
        }
    }
}

#[test]
fn numpy_loads_what_we_write() {
    let has_numpy = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_numpy {
        println!("NOTE: python3 with numpy is not available; skipping the numpy.load check");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut script = String::from("import numpy, sys\n");
    for array in arrays_of_every_dtype() {
        let name = format!("{}.npy", array.dtype.torch_name());
        write_npy(&file(&dir, &name), &array).unwrap();
        let expected: Vec<String> = array
            .values_f64()
            .iter()
            .map(|v| format!("float('{v}')"))
            .collect();
        script.push_str(&format!(
            "a = numpy.load(sys.argv[1] + '/{name}')\nassert a.shape == (2, 2), a.shape\n\
             e = numpy.array([{}], dtype=numpy.float64).reshape(2, 2)\n\
             assert numpy.array_equal(a.astype(numpy.float64), e, equal_nan=True), (a, e)\n\
             numpy.save(sys.argv[1] + '/numpy-{name}', a)\n",
            expected.join(", ")
        ));
    }
    write_npy(
        &file(&dir, "scalar.npy"),
        &Array::from_values(&[], &[2.5f64]).unwrap(),
    )
    .unwrap();
    script.push_str("assert numpy.load(sys.argv[1] + '/scalar.npy').shape == ()\n");
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What numpy.save writes back is byte for byte what we wrote (bfloat16 aside: widened).
    for array in arrays_of_every_dtype() {
        let name = format!("{}.npy", array.dtype.torch_name());
        let ours = std::fs::read(file(&dir, &name)).unwrap();
        let numpys = std::fs::read(file(&dir, &format!("numpy-{name}"))).unwrap();
        assert_eq!(ours, numpys, "{name}");
    }
}

#[test]
fn intensity_png_of_int64_is_the_documented_pixels_and_meta() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "[tensors.json]group.gray.png");
    let gray = Array::from_values(&[2, 3], &[0i64, 1, 2, 3, 4, 5]).unwrap();
    write_png(&path, &gray, ImageFormat::Intensity).unwrap();
    assert_eq!(
        meta_text(&path),
        "{\n  \"original_range\": [\n    0,\n    5\n  ],\n  \"image_format\": \"Intensity\"\n}"
    );
    let (pixels, meta) = read_png(&path).unwrap();
    assert_eq!(pixels.dtype, Dtype::U8);
    assert_eq!(pixels.shape, vec![2, 3]);
    assert_eq!(pixels.bytes, vec![0, 51, 102, 153, 204, 255]);
    assert_eq!(
        meta.get("original_range"),
        Some(&PyJson::List(vec![PyJson::Int(0), PyJson::Int(5)]))
    );
}

#[test]
fn rgb_is_written_as_is_and_bgr_is_swapped_to_true_colours() {
    let dir = tempfile::tempdir().unwrap();
    // One row of two pixels: pure red and pure blue in RGB order.
    let rgb = Array::from_values(&[1, 2, 3], &[1u8, 0, 0, 0, 0, 1]).unwrap();
    let rgb_path = file(&dir, "rgb.png");
    write_png(&rgb_path, &rgb, ImageFormat::Rgb).unwrap();
    let (pixels, meta) = read_png(&rgb_path).unwrap();
    assert_eq!(pixels.shape, vec![1, 2, 3]);
    assert_eq!(pixels.bytes, vec![255, 0, 0, 0, 0, 255]);
    assert_eq!(meta.get("image_format"), Some(&PyJson::Str("RGB".into())));
    // The same colours in BGR order come out the same.
    let bgr = Array::from_values(&[1, 2, 3], &[0u8, 0, 1, 1, 0, 0]).unwrap();
    let bgr_path = file(&dir, "bgr.png");
    write_png(&bgr_path, &bgr, ImageFormat::Bgr).unwrap();
    let (pixels, meta) = read_png(&bgr_path).unwrap();
    assert_eq!(pixels.bytes, vec![255, 0, 0, 0, 0, 255]);
    assert_eq!(meta.get("image_format"), Some(&PyJson::Str("BGR".into())));
}

#[test]
fn a_constant_image_is_black_and_float_ranges_are_python_floats() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "c.png");
    let constant = Array::from_values(&[2, 2], &[0.75f32; 4]).unwrap();
    write_png(&path, &constant, ImageFormat::Intensity).unwrap();
    assert_eq!(read_png(&path).unwrap().0.bytes, vec![0; 4]);
    assert!(meta_text(&path).contains("[\n    0.75,\n    0.75\n  ]"));
    // The documented float range: f32 0.4857142857 widened as Python prints it.
    let path = file(&dir, "f.png");
    let image = Array::from_values(&[1, 1, 3], &[0.0f32, 0.25, 0.485_714_3]).unwrap();
    write_png(&path, &image, ImageFormat::Rgb).unwrap();
    assert_eq!(
        meta_text(&path),
        "{\n  \"original_range\": [\n    0.0,\n    0.48571428656578064\n  ],\n  \"image_format\": \"RGB\"\n}"
    );
}

#[test]
fn normalisation_truncates_instead_of_rounding() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "t.png");
    // min 0 and max 255 make the scale exactly 1: 254.999 maps to 254.999, truncated to 254.
    let image = Array::from_values(&[1, 4], &[0.0f64, 254.999, 127.9, 255.0]).unwrap();
    write_png(&path, &image, ImageFormat::Intensity).unwrap();
    assert_eq!(read_png(&path).unwrap().0.bytes, vec![0, 254, 127, 255]);
}

#[test]
fn image_shape_errors_use_the_original_wording() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "bad.png");
    let flat = Array::from_values(&[2, 3], &[0u8; 6]).unwrap();
    let error = write_png(&path, &flat, ImageFormat::Rgb).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "Number of image dimensions does not match the dump type for file:\n{}.\nImage data has 2 dimensions; dump type is Type.IMAGE_RGB.",
            path.display()
        )
    );
    let cube = Array::from_values(&[1, 1, 3], &[0u8; 3]).unwrap();
    let error = write_png(&path, &cube, ImageFormat::Intensity).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("Image data has 3 dimensions; dump type is Type.IMAGE_I.")
    );
    let rgba = Array::from_values(&[1, 1, 4], &[0u8; 4]).unwrap();
    let error = write_png(&path, &rgba, ImageFormat::Bgr).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "Color image must have 3 channels, but image to be dumped to:\n{}\nhas 4 channels.",
            path.display()
        )
    );
    let empty = Array::from_values::<u8>(&[0, 3], &[]).unwrap();
    assert!(write_png(&path, &empty, ImageFormat::Intensity).is_err());
    assert!(!path.exists(), "nothing written on errors");
}

#[test]
fn tensor_data_of_every_burn_dtype_converts() {
    let data = TensorData::new(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let array = Array::from_tensor_data(&data).unwrap();
    assert_eq!((array.dtype, array.shape.clone()), (Dtype::F32, vec![2, 3]));
    let permuted = array.permuted(&[1, 0]).unwrap();
    assert_eq!(permuted.values_f64(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let data = TensorData::new(vec![bf16::from_f32(0.5)], [1]);
    assert_eq!(Array::from_tensor_data(&data).unwrap().dtype, Dtype::BF16);
    let data = TensorData::new(vec![-3i64, 4], [2]);
    assert_eq!(Array::from_tensor_data(&data).unwrap().dtype, Dtype::I64);
    let data = TensorData::new(vec![7u16], [1]);
    assert_eq!(Array::from_tensor_data(&data).unwrap().dtype, Dtype::U16);
    for dtype in [
        DType::F64,
        DType::F32,
        DType::Flex32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
    ] {
        let dumped = Dtype::from_burn(dtype).unwrap();
        assert_eq!(dumped.size(), dtype.size(), "{dtype:?}");
    }
    let quantized = DType::QFloat(burn::tensor::quantization::QuantScheme::default());
    assert_eq!(Dtype::from_burn(quantized), None);
    let data = TensorData::from_bytes_vec(vec![0; 4], [4], quantized);
    let error = Array::from_tensor_data(&data).unwrap_err();
    assert!(error.to_string().contains("QFloat"), "{error}");
}

/// The dumper writes a tensor's own bytes where it can: its files must be those of the array
/// `Array::from_tensor_data` converts, for every dtype (bool and bfloat16 are converted).
#[test]
fn the_dumper_writes_every_dtype_as_the_array_writers_do() {
    let tensors = [
        TensorData::new(vec![1.5f64, -2.0, 3.25], [3]),
        TensorData::new(vec![1.5f32, -2.0, 3.25, 0.0], [2, 2]),
        TensorData::new(vec![f16::from_f32(0.5), f16::from_f32(-7.0)], [2]),
        TensorData::new(vec![bf16::from_f32(0.5), bf16::from_f32(-7.0)], [1, 2]),
        TensorData::new(vec![-3i64, 4], [2]),
        TensorData::new(vec![-3i32, 4], [2]),
        TensorData::new(vec![-3i16, 4], [2]),
        TensorData::new(vec![-3i8, 4], [2]),
        TensorData::new(vec![u64::MAX, 4], [2]),
        TensorData::new(vec![7u32, 4], [2]),
        TensorData::new(vec![7u16, 4], [2]),
        TensorData::new(vec![7u8, 4], [2]),
        TensorData::new(vec![true, false, true], [3]),
        TensorData::from_bytes_vec(
            vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0],
            [3],
            DType::Bool(burn::tensor::BoolStore::U32),
        ),
    ];
    for data in tensors {
        let expected = tempfile::tempdir().unwrap();
        let array = Array::from_tensor_data(&data).unwrap();
        write_bin(&expected.path().join("t.bin"), &array).unwrap();
        write_npy(&expected.path().join("t.npy"), &array).unwrap();
        let dumps = tempfile::tempdir().unwrap();
        let mut dumper = burn_profiled::dump::TensorDumper::new(dumps.path());
        let options = |dump_type| burn_profiled::dump::AddOptions::new(dump_type);
        dumper
            .add_tensor_data(
                "b",
                data.clone(),
                options(burn_profiled::dump::DumpType::Binary),
            )
            .unwrap();
        dumper
            .add_tensor_data(
                "n",
                data.clone(),
                options(burn_profiled::dump::DumpType::Npy),
            )
            .unwrap();
        assert!(dumper.dump(true).unwrap());
        let dumped = |name: &str| std::fs::read(dumps.path().join("0").join(name)).unwrap();
        let written = |name: &str| std::fs::read(expected.path().join(name)).unwrap();
        let dtype = data.dtype;
        assert_eq!(dumped("[tensors.json]b.bin"), written("t.bin"), "{dtype:?}");
        assert_eq!(
            dumped("[tensors.json]b.bin.meta.json"),
            written("t.bin.meta.json"),
            "{dtype:?}"
        );
        assert_eq!(dumped("[tensors.json]n.npy"), written("t.npy"), "{dtype:?}");
    }
}

#[test]
fn nested_list_counts_bound_the_json_form() {
    // Only the shape matters (the fields are public; `Array::new` would refuse these bytes).
    let array = |shape: &[usize]| Array {
        dtype: Dtype::U8,
        shape: shape.to_vec(),
        bytes: Vec::new(),
    };
    assert_eq!(array(&[]).nested_list_count(), Some(0));
    assert_eq!(array(&[0]).nested_list_count(), Some(1));
    assert_eq!(array(&[4, 0]).nested_list_count(), Some(5));
    assert_eq!(array(&[4, 3, 0]).nested_list_count(), Some(17));
    assert_eq!(array(&[usize::MAX, 2, 0]).nested_list_count(), None);
    let full = Array::from_values(&[2, 3], &[0u8; 6]).unwrap();
    assert_eq!(full.nested_list_count(), Some(3));
}

#[test]
fn permutation_errors() {
    let array = Array::from_values(&[2, 3], &[0u8; 6]).unwrap();
    for axes in [&[0usize][..], &[0, 0], &[0, 2], &[1, 0, 2]] {
        let error = array.permuted(axes).unwrap_err();
        assert!(error.to_string().contains("permutation"), "{error}");
    }
    assert!(Array::new(Dtype::F32, vec![3], vec![0; 11]).is_err());
}

fn assert_malformed(result: Result<Array, BlobError>, file: &Path, needle: &str) {
    let error = result.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains(&file.display().to_string()),
        "{text} should name {}",
        file.display()
    );
    assert!(text.contains(needle), "{text} should say {needle:?}");
}

#[test]
fn malformed_bin_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "x.bin");
    let meta = file(&dir, "x.bin.meta.json");
    assert_malformed(read_bin(&path), &meta, "cannot read");
    let write_meta = |text: &str| std::fs::write(&meta, text).unwrap();
    std::fs::write(&path, [0u8; 8]).unwrap();
    write_meta("{\"file_data_shape\": [2, ");
    assert_malformed(read_bin(&path), &meta, "invalid JSON");
    write_meta(r#"{"file_data_shape": [2], "file_data_dtype": "torch.complex64"}"#);
    assert_malformed(read_bin(&path), &meta, "unknown `file_data_dtype`");
    write_meta(r#"{"file_data_shape": [2, -1], "file_data_dtype": "torch.float32"}"#);
    assert_malformed(read_bin(&path), &meta, "file_data_shape");
    write_meta(r#"{"file_data_dtype": "torch.float32"}"#);
    assert_malformed(read_bin(&path), &meta, "file_data_shape");
    write_meta(r#"{"file_data_shape": [2]}"#);
    assert_malformed(read_bin(&path), &meta, "file_data_dtype");
    write_meta(r#"[1, 2]"#);
    assert_malformed(read_bin(&path), &meta, "file_data_shape");
    write_meta(r#"{"file_data_shape": [3], "file_data_dtype": "torch.float32"}"#);
    assert_malformed(
        read_bin(&path),
        &path,
        "8 bytes, but shape [3] of torch.float32 needs 12",
    );
    write_meta(
        r#"{"file_data_shape": [4611686018427387904, 4611686018427387904], "file_data_dtype": "torch.float32"}"#,
    );
    assert_malformed(read_bin(&path), &meta, "more elements than memory can hold");
    let rank_65 = format!(
        r#"{{"file_data_shape": [{}], "file_data_dtype": "torch.float32"}}"#,
        vec!["1"; 65].join(", ")
    );
    write_meta(&rank_65);
    assert_malformed(read_bin(&path), &meta, "65 dimensions; at most 64");
    write_meta(r#"{"file_data_shape": [1, 2], "file_data_dtype": "torch.float32"}"#);
    assert_eq!(read_bin(&path).unwrap().shape, vec![1, 2]);
    std::fs::remove_file(&path).unwrap();
    assert_malformed(read_bin(&path), &path, "cannot read");
}

/// A file far larger than its declared shape (sparse: no disk used) is refused by its
/// length, before any of it is read.
#[test]
fn oversized_bin_and_npy_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let huge = 1u64 << 40;
    let bin = file(&dir, "x.bin");
    std::fs::write(
        file(&dir, "x.bin.meta.json"),
        r#"{"file_data_shape": [2], "file_data_dtype": "torch.float32"}"#,
    )
    .unwrap();
    std::fs::File::create(&bin).unwrap().set_len(huge).unwrap();
    assert_eq!(
        read_bin(&bin).unwrap_err().to_string(),
        format!(
            "{}: 1099511627776 bytes, but shape [2] of torch.float32 needs 8",
            bin.display()
        )
    );
    let npy = file(&dir, "x.npy");
    let good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    let header = npy_with_header(good, 0);
    std::fs::write(&npy, &header).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&npy)
        .unwrap()
        .set_len(header.len() as u64 + huge)
        .unwrap();
    assert_eq!(
        read_npy(&npy).unwrap_err().to_string(),
        format!(
            "{}: 1099511627776 data bytes, but shape [2, 3] of torch.float32 needs 24",
            npy.display()
        )
    );
}

/// Sidecars are read only as regular files of at most 1 MiB, never through a symlink; blobs
/// only as regular files.
#[test]
fn sidecars_must_be_small_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "x.bin");
    let meta = file(&dir, "x.bin.meta.json");
    let array = Array::from_values(&[2], &[1.0f32, 2.0]).unwrap();
    write_bin(&path, &array).unwrap();
    let error = |path: &Path| read_bin(path).unwrap_err().to_string();

    let elsewhere = file(&dir, "elsewhere.json");
    std::fs::rename(&meta, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &meta).unwrap();
    assert_eq!(
        error(&path),
        format!("{}: is a symlink; not followed", meta.display())
    );

    std::fs::remove_file(&meta).unwrap();
    make_fifo(&meta);
    assert_eq!(
        error(&path),
        format!("{}: not a regular file", meta.display())
    );

    std::fs::remove_file(&meta).unwrap();
    std::fs::write(&meta, " ".repeat((1 << 20) + 1)).unwrap();
    assert_eq!(
        error(&path),
        format!(
            "{}: 1048577 bytes; a .meta.json sidecar may have at most 1048576",
            meta.display()
        )
    );

    std::fs::copy(&elsewhere, &meta).unwrap();
    std::fs::remove_file(&path).unwrap();
    make_fifo(&path);
    assert_eq!(
        error(&path),
        format!("{}: not a regular file", path.display())
    );

    let png = file(&dir, "x.png");
    write_png(
        &png,
        &Array::from_values(&[1, 2], &[0u8, 1]).unwrap(),
        ImageFormat::Intensity,
    )
    .unwrap();
    let png_meta = file(&dir, "x.png.meta.json");
    std::fs::remove_file(&png_meta).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &png_meta).unwrap();
    assert_eq!(
        read_png(&png).unwrap_err().to_string(),
        format!("{}: is a symlink; not followed", png_meta.display())
    );
}

/// A valid `.npy` of an f32 (2, 3) array, with the header text replaced by `header` (padded).
fn npy_with_header(header: &str, data_bytes: usize) -> Vec<u8> {
    let mut text = header.to_owned();
    while !(10 + text.len() + 1).is_multiple_of(64) {
        text.push(' ');
    }
    text.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(text.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.resize(bytes.len() + data_bytes, 0);
    bytes
}

#[test]
fn malformed_npy_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "x.npy");
    let good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"PK\x03\x04 not numpy".to_vec(), "magic"),
        (b"\x93NUMPY\x01".to_vec(), "truncated .npy preamble"),
        (b"\x93NUMPY\x09\x00\x10\x00".to_vec(), "version 9.0"),
        (
            npy_with_header(good, 24)[..70].to_vec(),
            "truncated .npy header",
        ),
        (
            npy_with_header(good, 23),
            "23 data bytes, but shape [2, 3] of torch.float32 needs 24",
        ),
        (npy_with_header(good, 25), "25 data bytes"),
        (
            npy_with_header(
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                24,
            ),
            "unsupported descr '>f4'",
        ),
        (
            npy_with_header(
                "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }",
                24,
            ),
            "unsupported descr '<c8'",
        ),
        (
            npy_with_header(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                24,
            ),
            "Fortran-order",
        ),
        (
            npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }",
                0,
            ),
            "more elements than memory can hold",
        ),
        (
            npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
                0,
            ),
            "expected a dimension",
        ),
        (
            npy_with_header("{'descr': '<f4', 'shape': (2, 3), }", 24),
            "'fortran_order' is missing",
        ),
        (
            npy_with_header(
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                4,
            ),
            "structured dtypes are not supported",
        ),
        (
            npy_with_header(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }",
                24,
            ),
            "shape",
        ),
        (npy_with_header("not a dict", 0), "not a dict"),
        (
            npy_with_header(
                &format!(
                    "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}",
                    "1, ".repeat(1000)
                ),
                4,
            ),
            "1000 dimensions; at most 64",
        ),
    ];
    for (bytes, needle) in cases {
        std::fs::write(&path, &bytes).unwrap();
        assert_malformed(read_npy(&path), &path, needle);
    }
    std::fs::write(&path, npy_with_header(good, 24)).unwrap();
    assert_eq!(read_npy(&path).unwrap().shape, vec![2, 3]);
}

#[test]
fn malformed_png_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "x.png");
    std::fs::write(&path, b"\x89PNG\r\n\x1a\n truncated").unwrap();
    let error = read_png(&path).unwrap_err().to_string();
    assert!(
        error.contains("x.png") && error.contains("not a readable PNG"),
        "{error}"
    );
    let image = Array::from_values(&[1, 2], &[0u8, 1]).unwrap();
    write_png(&path, &image, ImageFormat::Intensity).unwrap();
    let meta = file(&dir, "x.png.meta.json");
    std::fs::write(&meta, "{oops").unwrap();
    let error = read_png(&path).unwrap_err().to_string();
    assert!(
        error.contains("x.png.meta.json") && error.contains("invalid JSON"),
        "{error}"
    );
    std::fs::remove_file(&meta).unwrap();
    assert_eq!(read_png(&path).unwrap().1, PyJson::Null);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic_the_readers(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        meta in "[ -~]{0,80}",
        npy_prefix in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = file(&dir, "r");
        let mut content = if npy_prefix { b"\x93NUMPY\x01\x00".to_vec() } else { Vec::new() };
        content.extend_from_slice(&bytes);
        std::fs::write(&path, &content).unwrap();
        std::fs::write(file(&dir, "r.meta.json"), &meta).unwrap();
        let _ = read_npy(&path);
        let _ = read_bin(&path);
        let _ = read_png(&path);
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend_from_slice(&bytes);
        std::fs::write(&path, &png).unwrap();
        let _ = read_png(&path);
    }

    #[test]
    fn random_npy_headers_never_panic(header in "[{}()',: a-z<>|0-9TrueFalse]{0,120}") {
        let dir = tempfile::tempdir().unwrap();
        let path = file(&dir, "h.npy");
        std::fs::write(&path, npy_with_header(&header, 8)).unwrap();
        let _ = read_npy(&path);
    }
}
