//! Image dumps: normalised 8-bit PNGs with the original value range in a JSON sidecar.

use std::io;
use std::path::Path;

use super::element::{element_int, int_json};
use super::error::{malformed, with_file};
use super::file::{meta_exists, read_file, read_meta, write_file};
use super::{Array, ArrayView, BlobError, Dtype, meta_path};
use crate::dump::json::PyJson;

/// How the channels of an image dump are to be read, as the original's `IMAGE_*` dump types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// `(H, W, 3)`, channels R, G, B (`Type.IMAGE_RGB`).
    Rgb,
    /// `(H, W, 3)`, channels B, G, R (`Type.IMAGE_BGR`).
    Bgr,
    /// `(H, W)` grey (`Type.IMAGE_I`).
    Intensity,
}

impl ImageFormat {
    /// The `image_format` the sidecar records: `RGB`, `BGR` or `Intensity`.
    pub fn meta_name(self) -> &'static str {
        match self {
            ImageFormat::Rgb => "RGB",
            ImageFormat::Bgr => "BGR",
            ImageFormat::Intensity => "Intensity",
        }
    }

    /// The original's name of the dump type: `Type.IMAGE_RGB`.
    fn dump_type(self) -> &'static str {
        match self {
            ImageFormat::Rgb => "Type.IMAGE_RGB",
            ImageFormat::Bgr => "Type.IMAGE_BGR",
            ImageFormat::Intensity => "Type.IMAGE_I",
        }
    }
}

/// The smallest and largest element as the sidecar's JSON: ints for integer and bool dtypes,
/// floats otherwise. NaNs are ignored, as far as they can be.
fn value_range(array: ArrayView<'_>) -> (f64, f64, PyJson, PyJson) {
    let values = array.values_f64();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if array.dtype.is_float() {
        return (min, max, PyJson::Float(min), PyJson::Float(max));
    }
    let ints = || {
        array
            .bytes
            .chunks_exact(array.dtype.size())
            .filter_map(|chunk| element_int(array.dtype, chunk))
    };
    let int_min = ints().min().map_or(PyJson::Null, int_json);
    let int_max = ints().max().map_or(PyJson::Null, int_json);
    (min, max, int_min, int_max)
}

/// Writes an image dump as the original does: `image` is `(H, W)` for
/// [`ImageFormat::Intensity`] or `(H, W, 3)` for RGB/BGR, any dtype. Normalised per image over
/// all channels, `(v - min) * (255 / (max - min) if max > min else 1)`, computed in f64 and
/// truncated to `u8`; written as an 8-bit RGB (BGR input swapped so the PNG shows true
/// colours) or grey PNG, with `{path}.meta.json` = `{"original_range": [min, max],
/// "image_format": ...}`.
pub fn write_png(path: &Path, image: &Array, format: ImageFormat) -> Result<(), BlobError> {
    write_png_view(path, image.view(), format)
}

/// [`write_png`] of borrowed parts.
pub(crate) fn write_png_view(
    path: &Path,
    image: ArrayView<'_>,
    format: ImageFormat,
) -> Result<(), BlobError> {
    image.check().map_err(|e| with_file(path, e))?;
    let unwritable = |message: String| BlobError::Unwritable {
        path: path.to_owned(),
        message,
    };
    let file = path.display();
    let wanted_rank = if format == ImageFormat::Intensity {
        2
    } else {
        3
    };
    if image.shape.len() != wanted_rank {
        return Err(unwritable(format!(
            "Number of image dimensions does not match the dump type for file:\n{file}.\nImage data has {} dimensions; dump type is {}.",
            image.shape.len(),
            format.dump_type()
        )));
    }
    if wanted_rank == 3 && image.shape[2] != 3 {
        return Err(unwritable(format!(
            "Color image must have 3 channels, but image to be dumped to:\n{file}\nhas {} channels.",
            image.shape[2]
        )));
    }
    let (height, width) = (image.shape[0], image.shape[1]);
    let (Ok(png_height), Ok(png_width)) = (u32::try_from(height), u32::try_from(width)) else {
        return Err(unwritable(format!(
            "cannot write {file}: a {height}x{width} image is too large for PNG"
        )));
    };
    if image.bytes.is_empty() {
        return Err(unwritable(format!(
            "cannot write {file}: the image of shape {:?} is empty",
            image.shape
        )));
    }
    let (min, max, json_min, json_max) = value_range(image);
    let scale = if max - min > 0.0 {
        255.0 / (max - min)
    } else {
        1.0
    };
    // `as u8` truncates towards zero and saturates (NaN becomes 0), as `astype(np.uint8)` does
    // for values in range.
    let mut pixels: Vec<u8> = image
        .values_f64()
        .into_iter()
        .map(|v| ((v - min) * scale) as u8)
        .collect();
    if format == ImageFormat::Bgr {
        for pixel in pixels.chunks_exact_mut(3) {
            pixel.swap(0, 2);
        }
    }
    let colour = if format == ImageFormat::Intensity {
        image::ExtendedColorType::L8
    } else {
        image::ExtendedColorType::Rgb8
    };
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        &pixels,
        png_width,
        png_height,
        colour,
    )
    .map_err(|e| unwritable(format!("cannot encode {file} as PNG: {e}")))?;
    write_file(path, &png)?;
    let meta = PyJson::Object(vec![
        (
            "original_range".to_owned(),
            PyJson::List(vec![json_min, json_max]),
        ),
        (
            "image_format".to_owned(),
            PyJson::Str(format.meta_name().to_owned()),
        ),
    ]);
    write_file(&meta_path(path), meta.to_python_string().as_bytes())
}

/// Reads a PNG image dump: its pixels as `u8`, `(H, W)` for grey images (alpha dropped) and
/// `(H, W, 3)` in RGB order otherwise (16-bit images scaled to 8 bits), and its
/// `{path}.meta.json` if there is one (else `Null`).
pub fn read_png(path: &Path) -> Result<(Array, PyJson), BlobError> {
    let bytes = read_file(path)?;
    let reader = image::ImageReader::with_format(io::Cursor::new(bytes), image::ImageFormat::Png);
    let decoded = reader
        .decode()
        .map_err(|e| malformed(path, format!("not a readable PNG: {e}")))?;
    let (height, width) = (decoded.height() as usize, decoded.width() as usize);
    let array = if decoded.color().has_color() {
        Array::new(
            Dtype::U8,
            vec![height, width, 3],
            decoded.into_rgb8().into_raw(),
        )
    } else {
        Array::new(
            Dtype::U8,
            vec![height, width],
            decoded.into_luma8().into_raw(),
        )
    }
    .map_err(|e| with_file(path, e))?;
    let meta_file = meta_path(path);
    let meta = if meta_exists(&meta_file) {
        read_meta(&meta_file)?
    } else {
        PyJson::Null
    };
    Ok((array, meta))
}
