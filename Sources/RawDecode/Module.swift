// RawDecode module
