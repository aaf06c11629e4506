import Foundation
import ImageCore

/// The variable-length strings of an HDF5 file, read from its global heap by this module,
/// each from a collection checked from end to end first.
///
/// A variable-length string attribute stores, per string, a reference: the string's length
/// (4 bytes), the file address of a global heap collection ("size of offsets" bytes) and the
/// index of an object in that collection (4 bytes). The collection (HDF5 file format
/// specification, "Global Heap") is the signature `GCOL`, version 1, 3 reserved bytes, the
/// collection size ("size of lengths" bytes, at least 4096), then objects: index (2 bytes),
/// reference count (2), reserved (4), data size ("size of lengths" bytes), the data padded to
/// a multiple of 8. Object 0 is the free space, the rest of the collection, last; fewer bytes
/// than an object header at the end are free space too.
///
/// libhdf5 1.10.8 (Debian 12) trusts these sizes: an object size from a damaged file makes
/// `H5HG_read` copy far past the collection, a free-space size of 0 makes it loop forever,
/// an index the collection does not hold makes it read through a null pointer, and a string
/// length shorter than its object overflows the buffer it copies into. So `HDF5Session`
/// never lets libhdf5 read a variable-length string: it reads the stored references (through
/// `HDF5Library.storedStringType`, a conversion that only copies them), and this type finds
/// each string in a collection that passed `Collection.parse`. Only collections a reference
/// names are read, as libhdf5 would; bytes that merely look like a collection elsewhere in
/// the file (inside compressed pixels, say) are never looked at.
package final class HDF5GlobalHeap {
    /// A variable-length string as an attribute stores it.
    package struct Reference: Equatable {
        /// The string's length in bytes.
        package var length: UInt32
        /// The collection's address (relative to the file's base address).
        package var address: UInt64
        /// The object's index in the collection.
        package var index: UInt32

        /// A reference from the bytes `HDF5Library.storedStringType` holds for one string:
        /// the stored form (`offsetSize + 8` bytes) and, in the last byte, its size; nil for
        /// an element libhdf5 left zero (an attribute without data), which reads as "".
        /// - Throws: `Damage` when the stored form's size is not `offsetSize + 8`.
        package init?(stored element: UnsafeRawBufferPointer, offsetSize: Int) throws(Damage) {
            let size = Int(element[element.count - 1])
            if size == 0 { return nil }
            guard size == offsetSize + 8 else {
                throw Damage("a string reference of \(size) bytes; this file's addresses take \(offsetSize), so \(offsetSize + 8) were expected")
            }
            guard let address = HDF5GlobalHeap.unsigned(element, at: 4, size: offsetSize) else {
                throw Damage("a string reference with an address beyond 64 bits")
            }
            length = UInt32(truncatingIfNeeded: HDF5GlobalHeap.unsigned(element, at: 0, size: 4) ?? 0)
            self.address = address
            index = UInt32(truncatingIfNeeded: HDF5GlobalHeap.unsigned(element, at: 4 + offsetSize, size: 4) ?? 0)
        }

        package init(length: UInt32, address: UInt64, index: UInt32) {
            self.length = length
            self.address = address
            self.index = index
        }
    }

    /// What is wrong with a collection or a reference, as a sentence fragment.
    package struct Damage: Error, Equatable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// One collection that passed the checks: where each object's data is.
    package struct Collection: Equatable {
        /// The spec's minimum collection size, which libhdf5 also writes as the smallest.
        package static let minimumSize = 4096

        /// The collection's size in bytes.
        package let size: Int
        /// Object index → (file offset of the data, data size in bytes); object 0 (free
        /// space) is not listed.
        package let objects: [UInt16: Object]

        package struct Object: Equatable {
            package let offset: Int
            package let size: Int
        }

        /// Checks the collection at file offset `start` of `file` and lists its objects.
        /// - Parameter lengthSize: the superblock's "size of lengths" (2, 4, 8, ...).
        /// - Throws: `Damage` naming the first thing wrong.
        package static func parse(_ file: UnsafeRawBufferPointer, at start: Int, lengthSize: Int) throws(Damage) -> Collection {
            let headerSize = 8 + lengthSize
            guard start >= 0, start < file.count else {
                throw Damage("the address is past the end of the file (\(file.count) bytes)")
            }
            let available = file.count - start
            guard available >= headerSize else {
                throw Damage("the collection header (\(headerSize) bytes) runs past the end of the file")
            }
            guard file[start] == 0x47, file[start + 1] == 0x43, file[start + 2] == 0x4F, file[start + 3] == 0x4C else {
                throw Damage("no global heap collection (signature GCOL) there")
            }
            guard file[start + 4] == 1 else {
                throw Damage("collection version \(file[start + 4]); only version 1 is defined")
            }
            guard let declared = HDF5GlobalHeap.unsigned(file, at: start + 8, size: lengthSize) else {
                throw Damage("a collection size beyond 64 bits")
            }
            guard declared >= UInt64(minimumSize) else {
                throw Damage("collection size \(declared) is below the minimum of \(minimumSize) bytes")
            }
            guard declared <= UInt64(available) else {
                throw Damage("the collection of \(declared) bytes runs past the end of the file (\(available) bytes from its start)")
            }
            let size = Int(declared)
            let objectHeaderSize = 8 + lengthSize
            var objects: [UInt16: Object] = [:]
            var position = headerSize
            while size - position >= objectHeaderSize {
                let at = start + position
                let index = UInt16(file[at]) | UInt16(file[at + 1]) << 8
                guard let dataSize = HDF5GlobalHeap.unsigned(file, at: at + 8, size: lengthSize) else {
                    throw Damage("object \(index) at collection offset \(position) has a size beyond 64 bits")
                }
                let remaining = size - position
                if index == 0 {
                    // The free space: its size counts its own header and must be all that is left.
                    guard dataSize == UInt64(remaining) else {
                        throw Damage("the free space (object 0) at collection offset \(position) claims \(dataSize) bytes; \(remaining) remain")
                    }
                    position = size
                    break
                }
                guard dataSize <= UInt64(remaining - objectHeaderSize),
                      (dataSize + 7) & ~7 <= UInt64(remaining - objectHeaderSize) else {
                    throw Damage("object \(index) of \(dataSize) bytes at collection offset \(position) runs past the end of the collection (\(size) bytes)")
                }
                let padded = (dataSize + 7) & ~7
                guard objects[index] == nil else {
                    throw Damage("object index \(index) appears twice")
                }
                objects[index] = Object(offset: at + objectHeaderSize, size: Int(dataSize))
                position += objectHeaderSize + Int(padded)
            }
            return Collection(size: size, objects: objects)
        }
    }

    /// The file, mapped.
    package let file: HDF5MappedFile
    /// The superblock's "size of offsets" and "size of lengths".
    package let offsetSize: Int
    package let lengthSize: Int
    private var collections: [UInt64: Collection] = [:]

    package init(file: HDF5MappedFile, offsetSize: Int, lengthSize: Int) {
        self.file = file
        self.offsetSize = offsetSize
        self.lengthSize = lengthSize
    }

    private var bytes: UnsafeRawBufferPointer { file.bytes }

    /// The bytes of the string `reference` names, up to its first NUL (as libhdf5 hands
    /// strings out): "" for a null reference (address 0) or an empty string, whose
    /// collection libhdf5 does not read either.
    /// - Throws: `Damage` when the collection fails `Collection.parse`, holds no object of
    ///   that index, or the object's size is not the string's length.
    package func string(_ reference: Reference) throws(Damage) -> String {
        guard reference.address != 0, reference.length != 0 else { return "" }
        let place = "the collection at address \(reference.address)"
        let collection: Collection
        do {
            collection = try self.collection(at: reference.address)
        } catch {
            throw Damage("\(place): \(error)")
        }
        guard reference.index != 0, reference.index <= UInt32(UInt16.max), let object = collection.objects[UInt16(reference.index)] else {
            throw Damage("\(place) holds no object \(reference.index)")
        }
        guard object.size == Int(reference.length) else {
            throw Damage("\(place): object \(reference.index) holds \(object.size) bytes, the string \(reference.length)")
        }
        let data = UnsafeRawBufferPointer(rebasing: bytes[object.offset ..< object.offset + object.size])
        return String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The checked collection at `address`, parsed once per file.
    private func collection(at address: UInt64) throws(Damage) -> Collection {
        if let known = collections[address] { return known }
        let (offset, overflow) = file.base.addingReportingOverflow(address)
        guard !overflow, offset < UInt64(bytes.count) else {
            throw Damage("the address is past the end of the file (\(bytes.count) bytes)")
        }
        let collection = try Collection.parse(bytes, at: Int(offset), lengthSize: lengthSize)
        collections[address] = collection
        return collection
    }

    /// The little-endian unsigned integer of `size` bytes at `offset`, or nil when it does
    /// not fit in 64 bits. The caller has checked the range.
    package static func unsigned(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64? {
        var value: UInt64 = 0
        for i in 0..<size {
            let byte = UInt64(bytes[offset + i])
            if i >= 8 {
                if byte != 0 { return nil }
            } else {
                value |= byte << (8 * UInt64(i))
            }
        }
        return value
    }
}
