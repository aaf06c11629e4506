#ifndef SCENELINEAR_CHDF5_SHIM_H
#define SCENELINEAR_CHDF5_SHIM_H
// HDF5 1.10 C API (Debian libhdf5-dev, serial). The predefined type and property-list
// "constants" are macros that call H5open(); Swift cannot import them, so they are
// evaluated here.
#include <hdf5.h>
#include <H5DSpublic.h>   // dimension scales (libhdf5_hl)

/// The address of a data symbol of a library that is loaded on first use (Sources/CLazyLibraries,
/// which HDF5Exchange links): libhdf5 is not linked, so its predefined types and property-list
/// classes, variables that H5open() sets, are looked up by name after H5open().
extern const void *sl_lazy_data(const char *library, const char *symbol) __attribute__((visibility("hidden")));
static inline hid_t chdf5_global(const char *symbol) {
    H5open();
    return *(const hid_t *)sl_lazy_data("hdf5", symbol);
}

static inline hid_t chdf5_NATIVE_FLOAT(void)    { return chdf5_global("H5T_NATIVE_FLOAT_g"); }
static inline hid_t chdf5_NATIVE_DOUBLE(void)   { return chdf5_global("H5T_NATIVE_DOUBLE_g"); }
static inline hid_t chdf5_NATIVE_INT32(void)    { return chdf5_global("H5T_NATIVE_INT32_g"); }
static inline hid_t chdf5_NATIVE_INT64(void)    { return chdf5_global("H5T_NATIVE_INT64_g"); }
static inline hid_t chdf5_NATIVE_UINT16(void)   { return chdf5_global("H5T_NATIVE_UINT16_g"); }
static inline hid_t chdf5_NATIVE_UINT8(void)    { return chdf5_global("H5T_NATIVE_UINT8_g"); }
static inline hid_t chdf5_NATIVE_UINT32(void)   { return chdf5_global("H5T_NATIVE_UINT32_g"); }
static inline hid_t chdf5_NATIVE_UINT64(void)   { return chdf5_global("H5T_NATIVE_UINT64_g"); }
static inline hid_t chdf5_IEEE_F32LE(void)      { return chdf5_global("H5T_IEEE_F32LE_g"); }
static inline hid_t chdf5_IEEE_F64LE(void)      { return chdf5_global("H5T_IEEE_F64LE_g"); }
static inline hid_t chdf5_STD_I32LE(void)       { return chdf5_global("H5T_STD_I32LE_g"); }
static inline hid_t chdf5_STD_I64LE(void)       { return chdf5_global("H5T_STD_I64LE_g"); }
static inline hid_t chdf5_STD_U8LE(void)        { return chdf5_global("H5T_STD_U8LE_g"); }
static inline hid_t chdf5_STD_U16LE(void)       { return chdf5_global("H5T_STD_U16LE_g"); }
static inline hid_t chdf5_STD_U32LE(void)       { return chdf5_global("H5T_STD_U32LE_g"); }
static inline hid_t chdf5_C_S1(void)            { return chdf5_global("H5T_C_S1_g"); }
static inline hid_t chdf5_P_DATASET_CREATE(void) { return chdf5_global("H5P_CLS_DATASET_CREATE_ID_g"); }
static inline hid_t chdf5_P_LINK_CREATE(void)   { return chdf5_global("H5P_CLS_LINK_CREATE_ID_g"); }
static inline hid_t chdf5_P_FILE_ACCESS(void)   { return chdf5_global("H5P_CLS_FILE_ACCESS_ID_g"); }
static inline hid_t chdf5_P_FILE_CREATE(void)   { return chdf5_global("H5P_CLS_FILE_CREATE_ID_g"); }
static inline hid_t chdf5_P_GROUP_CREATE(void)  { return chdf5_global("H5P_CLS_GROUP_CREATE_ID_g"); }
static inline hid_t chdf5_P_OBJECT_CREATE(void) { return chdf5_global("H5P_CLS_OBJECT_CREATE_ID_g"); }
static inline unsigned chdf5_P_CRT_ORDER_TRACKED_INDEXED(void) { return H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED; }
static inline unsigned chdf5_F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }
static inline unsigned chdf5_F_ACC_EXCL(void)  { return H5F_ACC_EXCL; }
static inline unsigned chdf5_F_ACC_RDONLY(void){ return H5F_ACC_RDONLY; }
static inline hid_t chdf5_P_DEFAULT(void)      { return H5P_DEFAULT; }
static inline hid_t chdf5_S_ALL(void)          { return H5S_ALL; }
static inline hid_t chdf5_E_DEFAULT(void)      { return H5E_DEFAULT; }
static inline size_t chdf5_T_VARIABLE(void)    { return H5T_VARIABLE; }
static inline hid_t chdf5_E_TRUNCATED(void)    { return chdf5_global("H5E_TRUNCATED_g"); }

/// IEEE 754 binary16, little endian, laid out exactly as h5py creates it for numpy.float16
/// (HDF5 1.10 has no predefined half type): sign bit 15, exponent bits 10..14 (bias 15),
/// mantissa bits 0..9.
static inline hid_t chdf5_create_float16_le(void) {
    hid_t t = H5Tcopy(chdf5_IEEE_F32LE());
    if (t < 0) return t;
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/// The file address of `object`'s header (relative to the base address), from its basic
/// information only (no message is decoded); HADDR_UNDEF on failure.
static inline haddr_t chdf5_object_address(hid_t object) {
    H5O_info_t info;
    if (H5Oget_info2(object, &info, H5O_INFO_BASIC) < 0) return HADDR_UNDEF;
    return info.addr;
}
/// The same for the object `name` names from `loc`.
static inline haddr_t chdf5_object_address_by_name(hid_t loc, const char *name) {
    H5O_info_t info;
    if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return HADDR_UNDEF;
    return info.addr;
}
static inline haddr_t chdf5_HADDR_UNDEF(void) { return HADDR_UNDEF; }

/// Silences HDF5's automatic error stack printing; errors are reported through return codes.
static inline void chdf5_silence_errors(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }
#endif
