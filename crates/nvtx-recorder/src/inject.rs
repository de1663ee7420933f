//! The injection entry point: NVTX calls [`InitializeInjectionNvtx2`], which
//! writes the callbacks of [`crate::hooks`] into NVTX's function tables.

use crate::hooks::*;
use crate::store;
use nvtx_sys::ffi as sys;
use std::ffi::{c_int, c_uint};
use std::ptr;
use std::sync::Once;

/// The NVTX version this tool implements (passed to `SetInjectionNvtxVersion`).
const INJECTION_NVTX_VERSION: u32 = 3;

/// Type-checks `$f` against the NVTX slot type `$ty`, then erases it to the
/// generic `NvtxFunctionPointer` the function table stores.
macro_rules! slot {
    ($id:expr, $ty:ident, $f:expr) => {{
        let f: sys::$ty = Some($f);
        // SAFETY: both are nullable pointers to `extern "C"` functions; NVTX calls
        // the slot back with the signature `$ty`.
        let erased = unsafe { std::mem::transmute::<sys::$ty, sys::NvtxFunctionPointer>(f) };
        ($id as c_uint, erased)
    }};
}

fn core_hooks() -> [(c_uint, sys::NvtxFunctionPointer); 15] {
    use sys::NvtxCallbackIdCore as C;
    [
        slot!(C::NVTX_CBID_CORE_MarkEx, nvtxMarkEx_impl_fntype, mark_ex),
        slot!(C::NVTX_CBID_CORE_MarkA, nvtxMarkA_impl_fntype, mark_a),
        slot!(C::NVTX_CBID_CORE_MarkW, nvtxMarkW_impl_fntype, mark_w),
        slot!(
            C::NVTX_CBID_CORE_RangeStartEx,
            nvtxRangeStartEx_impl_fntype,
            range_start_ex
        ),
        slot!(
            C::NVTX_CBID_CORE_RangeStartA,
            nvtxRangeStartA_impl_fntype,
            range_start_a
        ),
        slot!(
            C::NVTX_CBID_CORE_RangeStartW,
            nvtxRangeStartW_impl_fntype,
            range_start_w
        ),
        slot!(
            C::NVTX_CBID_CORE_RangeEnd,
            nvtxRangeEnd_impl_fntype,
            range_end
        ),
        slot!(
            C::NVTX_CBID_CORE_RangePushEx,
            nvtxRangePushEx_impl_fntype,
            range_push_ex
        ),
        slot!(
            C::NVTX_CBID_CORE_RangePushA,
            nvtxRangePushA_impl_fntype,
            range_push_a
        ),
        slot!(
            C::NVTX_CBID_CORE_RangePushW,
            nvtxRangePushW_impl_fntype,
            range_push_w
        ),
        slot!(
            C::NVTX_CBID_CORE_RangePop,
            nvtxRangePop_impl_fntype,
            range_pop
        ),
        slot!(
            C::NVTX_CBID_CORE_NameCategoryA,
            nvtxNameCategoryA_impl_fntype,
            name_category_a
        ),
        slot!(
            C::NVTX_CBID_CORE_NameCategoryW,
            nvtxNameCategoryW_impl_fntype,
            name_category_w
        ),
        slot!(
            C::NVTX_CBID_CORE_NameOsThreadA,
            nvtxNameOsThreadA_impl_fntype,
            name_os_thread_a
        ),
        slot!(
            C::NVTX_CBID_CORE_NameOsThreadW,
            nvtxNameOsThreadW_impl_fntype,
            name_os_thread_w
        ),
    ]
}

fn core2_hooks() -> [(c_uint, sys::NvtxFunctionPointer); 12] {
    use sys::NvtxCallbackIdCore2 as C;
    [
        slot!(
            C::NVTX_CBID_CORE2_DomainMarkEx,
            nvtxDomainMarkEx_impl_fntype,
            domain_mark_ex
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainRangeStartEx,
            nvtxDomainRangeStartEx_impl_fntype,
            domain_range_start_ex
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainRangeEnd,
            nvtxDomainRangeEnd_impl_fntype,
            domain_range_end
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainRangePushEx,
            nvtxDomainRangePushEx_impl_fntype,
            domain_range_push_ex
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainRangePop,
            nvtxDomainRangePop_impl_fntype,
            domain_range_pop
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainNameCategoryA,
            nvtxDomainNameCategoryA_impl_fntype,
            domain_name_category_a
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainNameCategoryW,
            nvtxDomainNameCategoryW_impl_fntype,
            domain_name_category_w
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainRegisterStringA,
            nvtxDomainRegisterStringA_impl_fntype,
            domain_register_string_a
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainRegisterStringW,
            nvtxDomainRegisterStringW_impl_fntype,
            domain_register_string_w
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainCreateA,
            nvtxDomainCreateA_impl_fntype,
            domain_create_a
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainCreateW,
            nvtxDomainCreateW_impl_fntype,
            domain_create_w
        ),
        slot!(
            C::NVTX_CBID_CORE2_DomainDestroy,
            nvtxDomainDestroy_impl_fntype,
            domain_destroy_cb
        ),
    ]
}

type GetModuleFunctionTable = unsafe extern "C" fn(
    sys::NvtxCallbackModule,
    *mut sys::NvtxFunctionTable,
    *mut c_uint,
) -> c_int;

/// Writes `hooks` into the function table of `module`: `*table[cbid] = f`.
///
/// # Safety
/// `get_module` is NVTX's `GetModuleFunctionTable`.
unsafe fn fill(
    get_module: GetModuleFunctionTable,
    module: sys::NvtxCallbackModule,
    hooks: &[(c_uint, sys::NvtxFunctionPointer)],
) -> bool {
    let mut table: sys::NvtxFunctionTable = ptr::null_mut();
    let mut size: c_uint = 0;
    // SAFETY: both out-pointers are valid for writes.
    if unsafe { get_module(module, &mut table, &mut size) } == 0 || table.is_null() {
        return false;
    }
    for &(cbid, f) in hooks {
        if cbid == 0 || cbid > size {
            continue;
        }
        // SAFETY: the table has `size + 1` entries; `1 <= cbid <= size`.
        let slot = unsafe { *table.add(cbid as usize) };
        if !slot.is_null() {
            // SAFETY: a non-null entry points to this NVTX instance's slot.
            unsafe { *slot = f };
        }
    }
    true
}

/// The process-wide setup, once however many NVTX instances attach.
fn global_setup() {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        store::start();
        store::limit();
        // SAFETY: registering a plain `extern "C" fn()` with atexit is always sound.
        unsafe { libc::atexit(crate::tsv::dump_at_exit) };
    });
}

/// # Safety
/// `get_export_table` is the function NVTX passes to `InitializeInjectionNvtx2`.
unsafe fn initialize(get_export_table: sys::NvtxGetExportTableFunc_t) -> c_int {
    let Some(get) = get_export_table else {
        return 0;
    };
    global_setup();
    // SAFETY: NVTX's export-table getter accepts any id and returns null if unknown.
    let callbacks = unsafe { get(sys::NvtxExportTableID::NVTX_ETID_CALLBACKS as u32) }
        .cast::<sys::NvtxExportTableCallbacks>();
    // SAFETY: non-null means a valid callbacks table.
    let Some(callbacks) = (unsafe { callbacks.as_ref() }) else {
        return 0;
    };
    let Some(get_module) = callbacks.GetModuleFunctionTable else {
        return 0;
    };
    use sys::NvtxCallbackModule as M;
    // SAFETY: `get_module` came from NVTX's callbacks table.
    let ok = unsafe {
        fill(get_module, M::NVTX_CB_MODULE_CORE, &core_hooks())
            && fill(get_module, M::NVTX_CB_MODULE_CORE2, &core2_hooks())
    };
    if !ok {
        return 0;
    }
    // SAFETY: as above; a null or too-small version table is skipped.
    let version = unsafe { get(sys::NvtxExportTableID::NVTX_ETID_VERSIONINFO as u32) }
        .cast::<sys::NvtxExportTableVersionInfo>();
    // SAFETY: non-null means a valid version-info table.
    if let Some(version) = unsafe { version.as_ref() }
        && version.struct_size >= size_of::<sys::NvtxExportTableVersionInfo>()
        && let Some(set) = version.SetInjectionNvtxVersion
    {
        // SAFETY: NVTX's own setter.
        unsafe { set(INJECTION_NVTX_VERSION) };
    }
    store::set_attached();
    1
}

/// The NVTX v3 injection entry point. NVTX calls it once per NVTX instance,
/// either found with `dlsym` in the library named by `NVTX_INJECTION64_PATH`,
/// or through `InitializeInjectionNvtx2_fnptr` (see [`install_static!`](crate::install_static)).
/// It installs the recorder's callbacks and returns 1 (0 on failure, which makes
/// NVTX turn every call into a no-op).
///
/// # Safety
/// Only NVTX should call this, with its own `nvtxGetExportTable`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn InitializeInjectionNvtx2(
    get_export_table: sys::NvtxGetExportTableFunc_t,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(0, || unsafe { initialize(get_export_table) })
}
