//! What a user range or mark carries: its text, and optionally a color, a category or a
//! registered string.

use std::sync::atomic::{AtomicU32, Ordering};

/// The text of a range or mark, with optional color and category.
///
/// Anything that takes a label takes `&str` or `String` too:
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::nvtx::{Color, Label};
///
/// let plain: Label = "forward".into();
/// let colored = Label::new("backward").color(Color::rgb(200, 40, 40));
/// assert_eq!(colored.text(), "backward");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    text: String,
    color: Option<Color>,
    category: Option<Category>,
    /// `(domain key, handle)` of a registered string standing for `text`.
    /// The domain's key and the string's NVTX handle (`ffi::RawString`).
    registered: Option<(u64, u64)>,
}

impl Label {
    /// A label with this text (NUL characters are dropped when it reaches NVTX).
    pub fn new(text: impl Into<String>) -> Self {
        Label {
            text: text.into(),
            color: None,
            category: None,
            registered: None,
        }
    }

    /// Shows the range or mark in this color.
    pub fn color(mut self, color: Color) -> Self {
        self.color = Some(color);
        self
    }

    /// Files the range or mark under this category (see [`category`](super::category)).
    pub fn category(mut self, category: Category) -> Self {
        self.category = Some(category);
        self
    }

    /// The label's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    #[doc(hidden)]
    pub fn with_registered(mut self, domain_key: u64, handle: u64) -> Self {
        self.registered = (handle != 0).then_some((domain_key, handle));
        self
    }

    /// The registered string to send instead of the text, if it belongs to this domain.
    #[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
    #[doc(hidden)]
    pub fn registered_in(&self, domain_key: u64) -> Option<u64> {
        self.registered
            .filter(|(key, _)| *key == domain_key)
            .map(|(_, handle)| handle)
    }

    #[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
    #[doc(hidden)]
    pub fn color_value(&self) -> Option<Color> {
        self.color
    }

    #[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
    #[doc(hidden)]
    pub fn category_id(&self) -> u32 {
        self.category.map_or(0, |c| c.0)
    }
}

impl From<&str> for Label {
    fn from(text: &str) -> Self {
        Label::new(text)
    }
}

impl From<String> for Label {
    fn from(text: String) -> Self {
        Label::new(text)
    }
}

impl From<&String> for Label {
    fn from(text: &String) -> Self {
        Label::new(text.as_str())
    }
}

impl From<&Label> for Label {
    fn from(label: &Label) -> Self {
        label.clone()
    }
}

/// An ARGB color for a range or mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Color(u32);

impl Color {
    /// An opaque color.
    pub const fn rgb(red: u8, green: u8, blue: u8) -> Self {
        Color(0xff00_0000 | (red as u32) << 16 | (green as u32) << 8 | blue as u32)
    }

    /// A color from its `0xAARRGGBB` value.
    pub const fn from_argb(argb: u32) -> Self {
        Color(argb)
    }

    /// The `0xAARRGGBB` value.
    pub const fn argb(self) -> u32 {
        self.0
    }
}

/// A named category of ranges and marks, shown by Nsight Systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Category(u32);

impl Category {
    /// The category's NVTX id.
    pub fn id(self) -> u32 {
        self.0
    }

    /// A new category's id, process-wide (named in NVTX by `domain.rs`).
    #[doc(hidden)]
    pub fn next() -> Category {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        Category(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}
