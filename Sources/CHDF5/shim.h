#ifndef SCENELINEAR_CHDF5_SHIM_H
#define SCENELINEAR_CHDF5_SHIM_H
// HDF5 1.10 C API (Debian libhdf5-dev, serial). The predefined type and property-list
// "constants" are macros that call H5open(); Swift cannot import them, so they are
// evaluated here.
#include <hdf5.h>
#include <H5DSpublic.h>   // dimension scales (libhdf5_hl)

static inline hid_t chdf5_NATIVE_FLOAT(void)   { return H5T_NATIVE_FLOAT; }
static inline hid_t chdf5_NATIVE_DOUBLE(void)  { return H5T_NATIVE_DOUBLE; }
static inline hid_t chdf5_NATIVE_INT32(void)   { return H5T_NATIVE_INT32; }
static inline hid_t chdf5_NATIVE_INT64(void)   { return H5T_NATIVE_INT64; }
static inline hid_t chdf5_NATIVE_UINT16(void)  { return H5T_NATIVE_UINT16; }
static inline hid_t chdf5_NATIVE_UINT8(void)   { return H5T_NATIVE_UINT8; }
static inline hid_t chdf5_NATIVE_UINT32(void)  { return H5T_NATIVE_UINT32; }
static inline hid_t chdf5_NATIVE_UINT64(void)  { return H5T_NATIVE_UINT64; }
static inline hid_t chdf5_IEEE_F32LE(void)     { return H5T_IEEE_F32LE; }
static inline hid_t chdf5_IEEE_F64LE(void)     { return H5T_IEEE_F64LE; }
static inline hid_t chdf5_STD_I32LE(void)      { return H5T_STD_I32LE; }
static inline hid_t chdf5_STD_I64LE(void)      { return H5T_STD_I64LE; }
static inline hid_t chdf5_STD_U8LE(void)       { return H5T_STD_U8LE; }
static inline hid_t chdf5_STD_U16LE(void)      { return H5T_STD_U16LE; }
static inline hid_t chdf5_STD_U32LE(void)      { return H5T_STD_U32LE; }
static inline hid_t chdf5_C_S1(void)           { return H5T_C_S1; }
static inline hid_t chdf5_P_DATASET_CREATE(void) { return H5P_DATASET_CREATE; }
static inline hid_t chdf5_P_LINK_CREATE(void) { return H5P_LINK_CREATE; }
static inline hid_t chdf5_P_FILE_ACCESS(void)  { return H5P_FILE_ACCESS; }
static inline hid_t chdf5_P_FILE_CREATE(void)  { return H5P_FILE_CREATE; }
static inline hid_t chdf5_P_GROUP_CREATE(void) { return H5P_GROUP_CREATE; }
static inline hid_t chdf5_P_OBJECT_CREATE(void) { return H5P_OBJECT_CREATE; }
static inline unsigned chdf5_P_CRT_ORDER_TRACKED_INDEXED(void) { return H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED; }
static inline unsigned chdf5_F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }
static inline unsigned chdf5_F_ACC_EXCL(void)  { return H5F_ACC_EXCL; }
static inline unsigned chdf5_F_ACC_RDONLY(void){ return H5F_ACC_RDONLY; }
static inline hid_t chdf5_P_DEFAULT(void)      { return H5P_DEFAULT; }
static inline hid_t chdf5_S_ALL(void)          { return H5S_ALL; }
static inline hid_t chdf5_E_DEFAULT(void)      { return H5E_DEFAULT; }
static inline size_t chdf5_T_VARIABLE(void)    { return H5T_VARIABLE; }
static inline hid_t chdf5_E_TRUNCATED(void)    { return H5E_TRUNCATED; }

/// IEEE 754 binary16, little endian, laid out exactly as h5py creates it for numpy.float16
/// (HDF5 1.10 has no predefined half type): sign bit 15, exponent bits 10..14 (bias 15),
/// mantissa bits 0..9.
static inline hid_t chdf5_create_float16_le(void) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
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
