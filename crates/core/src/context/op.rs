//! An op's identity: its static name, as a C string for NVTX, and the slot where the op-range
//! sink keeps its registered name.

use std::ffi::CStr;

/// The NVTX registration of an op's name, made by the op-range sink on first use.
#[cfg(feature = "nvtx")]
pub type RegisteredName = std::sync::OnceLock<nvtx::sys::StringHandle>;
/// Without the `nvtx` feature there is nothing to register.
#[cfg(not(feature = "nvtx"))]
pub type RegisteredName = ();

/// One backend op: its static name and its NVTX registration.
///
/// Every forwarded method of `Profiled` owns one `Op`, so observers can key
/// statistics by its [`name`](Op::name) (or by its address, which is stable for the process).
#[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
pub struct Op {
    name_nul: &'static str,
    c_name: &'static CStr,
    pub registered: RegisteredName,
}

impl Op {
    /// `name_nul` is the op name followed by one NUL byte.
    pub const fn new(name_nul: &'static str) -> Self {
        let c_name = match CStr::from_bytes_with_nul(name_nul.as_bytes()) {
            Ok(c_name) => c_name,
            Err(_) => panic!("an op name must end with its only NUL byte"),
        };
        Op {
            name_nul,
            c_name,
            #[cfg(feature = "nvtx")]
            registered: std::sync::OnceLock::new(),
            #[cfg(not(feature = "nvtx"))]
            registered: (),
        }
    }

    /// The op's name, as in Burn's backend traits: `float_matmul`, `conv2d_weight_backward`, ...
    pub fn name(&self) -> &'static str {
        &self.name_nul[..self.name_nul.len() - 1]
    }

    #[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
    pub fn c_name(&self) -> &'static CStr {
        self.c_name
    }
}

/// The ops named at run time (fused blocks), one per distinct name, made once and kept for the
/// process like the static ones.
static NAMED: std::sync::Mutex<Vec<&'static Op>> = std::sync::Mutex::new(Vec::new());

impl Op {
    /// The op named `name`, made on first use: an op whose name is known only at run time
    /// (`fused elementwise[add, exp]`). A NUL in `name` becomes a space.
    pub fn named(name: &str) -> &'static Op {
        let mut named = NAMED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(op) = named.iter().find(|op| op.name() == name) {
            return op;
        }
        let name_nul: &'static str =
            Box::leak(format!("{}\0", name.replace('\0', " ")).into_boxed_str());
        let op: &'static Op = Box::leak(Box::new(Op::new(name_nul)));
        named.push(op);
        op
    }
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Op").field(&self.name()).finish()
    }
}
