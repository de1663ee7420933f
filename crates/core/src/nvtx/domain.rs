//! User-created NVTX domains: their own ranges, marks, categories and registered strings.

use std::marker::PhantomData;

use super::ffi::{self, RawDomain};
use super::label::{Category, Label};
use super::ranges;

/// An NVTX domain of the program's own, shown by Nsight Systems as its own row of ranges.
///
/// Ranges and marks follow [`enable`](super::enable): no-ops until then, synced as configured
/// there. Order tracking covers only the default domain's ranges.
///
/// ```
/// use std::sync::LazyLock;
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::nvtx::Domain;
///
/// static DATA: LazyLock<Domain> = LazyLock::new(|| Domain::new("data"));
///
/// let decode = DATA.register("decode"); // sent as a registered string: cheaper per push
/// let _range = DATA.range(&decode);
/// DATA.mark("batch ready");
/// ```
#[derive(Debug)]
pub struct Domain {
    raw: RawDomain,
    name: String,
}

impl Domain {
    /// Creates the domain `name`.
    pub fn new(name: &str) -> Self {
        Domain {
            raw: ffi::create_domain(name),
            name: name.to_owned(),
        }
    }

    /// The domain's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A label whose text is registered in this domain once, here. Used with this domain it is
    /// sent as a registered string; anywhere else, as its text.
    pub fn register(&self, text: &str) -> Label {
        Label::new(text).with_registered(self.raw.key, ffi::register_string(Some(self.raw), text))
    }

    /// Names a new category in this domain.
    pub fn category(&self, name: &str) -> Category {
        new_category(Some(self.raw), name)
    }

    /// Opens a range in this domain that closes when the returned guard is dropped.
    pub fn range(&self, label: impl Into<Label>) -> DomainRange<'_> {
        self.open(ranges::config().map(|_| label.into()))
    }

    /// [`range`](Domain::range) with a name computed only when ranges are enabled.
    pub fn range_with<L: Into<Label>>(&self, label: impl FnOnce() -> L) -> DomainRange<'_> {
        self.open(ranges::config().map(|_| label().into()))
    }

    fn open(&self, label: Option<Label>) -> DomainRange<'_> {
        let pushed = match (label, ranges::config()) {
            (Some(label), Some(config)) => {
                if let Some(device) = config.sync_on_push_device() {
                    device.sync();
                }
                ffi::push(Some(self.raw), &label);
                true
            }
            _ => false,
        };
        DomainRange {
            domain: self,
            pushed,
            _not_send: PhantomData,
        }
    }

    /// Places a mark in this domain.
    pub fn mark(&self, label: impl Into<Label>) {
        if ranges::is_enabled() {
            ffi::mark(Some(self.raw), &label.into());
        }
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        ffi::destroy_domain(self.raw);
    }
}

/// A range opened with [`Domain::range`]; popped on drop.
#[must_use = "the range is popped when this guard is dropped"]
#[derive(Debug)]
pub struct DomainRange<'d> {
    domain: &'d Domain,
    pushed: bool,
    _not_send: PhantomData<*const ()>,
}

impl Drop for DomainRange<'_> {
    fn drop(&mut self) {
        if self.pushed {
            if let Some(device) = ranges::config().and_then(|c| c.sync_on_pop_device()) {
                device.sync();
            }
            ffi::pop(Some(self.domain.raw));
        }
    }
}

fn new_category(domain: Option<RawDomain>, name: &str) -> Category {
    let category = Category::next();
    ffi::name_category(domain, category.id(), name);
    category
}

/// Names a new category in NVTX's default domain.
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::nvtx::{category, Label};
///
/// let data = category("data loading");
/// let label = Label::new("decode").category(data);
/// ```
pub fn category(name: &str) -> Category {
    new_category(None, name)
}
