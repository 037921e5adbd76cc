// The entries of a zip archive as torch.save writes it (PyTorch >= 1.6,
// caffe2/serialize/inline_container.cc through miniz): every entry stored,
// not compressed, its data padded to 64-byte alignment by an extra field, and
// zip64 records for archives or entries past 4 GiB. Read from the central
// directory, which is what torch.load reads too.
//
// Only stored entries are read, as views into the caller's bytes: nothing is
// inflated or copied, so no archive can expand in memory (a "zip bomb" needs
// compression). Everything read from the file is checked against the file's
// length before use; a problem throws ZipProblem, which the caller names.

export class ZipProblem extends Error {}

const SIGNATURES = {
  local: 0x04034b50,
  central: 0x02014b50,
  end: 0x06054b50,
  zip64End: 0x06064b50,
  zip64Locator: 0x07064b50,
};
const END_BYTES = 22;
const LOCATOR_BYTES = 20;
const ZIP64_END_BYTES = 56;
const CENTRAL_BYTES = 46;
const LOCAL_BYTES = 30;
const MAX_COMMENT = 0xffff;
const ZIP64_EXTRA = 0x0001;
const FLAG_ENCRYPTED = 0x1;
const METHOD_NAMES = { 8: 'deflate', 9: 'deflate64', 12: 'bzip2', 14: 'lzma', 93: 'zstandard', 95: 'xz', 99: 'AES encryption' };
const names = new TextDecoder('utf-8');

const u64 = (view, at) => view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;

// The end-of-central-directory record: the last 22 bytes, or earlier when a comment follows it.
function findEnd(view) {
  const last = view.byteLength - END_BYTES;
  for (let at = last; at >= Math.max(0, last - MAX_COMMENT); at--) {
    if (view.getUint32(at, true) === SIGNATURES.end && at + END_BYTES + view.getUint16(at + 20, true) === view.byteLength) {
      return at;
    }
  }
  throw new ZipProblem('it has no end-of-central-directory record (the file is truncated or not a zip archive)');
}

// { count, size, offset, end } of the central directory, from the zip64 records when present.
function centralDirectory(view) {
  const end = findEnd(view);
  if (view.getUint16(end + 4, true) !== 0 || view.getUint16(end + 6, true) !== 0) {
    throw new ZipProblem('it is a multi-part (spanned) zip archive');
  }
  let count = view.getUint16(end + 10, true);
  let size = view.getUint32(end + 12, true);
  let offset = view.getUint32(end + 16, true);
  let directoryEnd = end;
  const locator = end - LOCATOR_BYTES;
  if (locator >= 0 && view.getUint32(locator, true) === SIGNATURES.zip64Locator) {
    const zip64End = u64(view, locator + 8);
    if (zip64End + ZIP64_END_BYTES > locator || view.getUint32(zip64End, true) !== SIGNATURES.zip64End) {
      throw new ZipProblem('its zip64 end-of-central-directory locator points outside the file');
    }
    count = u64(view, zip64End + 32);
    size = u64(view, zip64End + 40);
    offset = u64(view, zip64End + 48);
    directoryEnd = zip64End;
  }
  if (offset + size > directoryEnd) {
    throw new ZipProblem(`its central directory (${size} bytes at ${offset}) runs past the end of the file (truncated?)`);
  }
  if (count * CENTRAL_BYTES > size) throw new ZipProblem(`its central directory is too small for the ${count} entries it claims`);
  return { count, size, offset };
}

// The sizes and offset a zip64 extra field holds for the header fields set to 0xFFFFFFFF.
function applyZip64(view, extraStart, extraEnd, entry) {
  for (let at = extraStart; at + 4 <= extraEnd;) {
    const id = view.getUint16(at, true);
    const length = view.getUint16(at + 2, true);
    if (at + 4 + length > extraEnd) throw new ZipProblem(`entry "${entry.name}" has an extra field that runs past its header`);
    if (id === ZIP64_EXTRA) {
      let field = at + 4;
      for (const key of ['size', 'storedSize', 'localOffset']) {
        if (entry[key] !== 0xffffffff) continue;
        if (field + 8 > at + 4 + length) throw new ZipProblem(`entry "${entry.name}" has a zip64 extra field without its ${key}`);
        entry[key] = u64(view, field);
        field += 8;
      }
    }
    at += 4 + length;
  }
}

function readCentralEntry(view, bytes, at, directoryEnd) {
  if (at + CENTRAL_BYTES > directoryEnd || view.getUint32(at, true) !== SIGNATURES.central) {
    throw new ZipProblem(`its central directory has a bad entry header at byte ${at}`);
  }
  const nameLength = view.getUint16(at + 28, true);
  const extraLength = view.getUint16(at + 30, true);
  const commentLength = view.getUint16(at + 32, true);
  const next = at + CENTRAL_BYTES + nameLength + extraLength + commentLength;
  if (next > directoryEnd) throw new ZipProblem(`its central directory entry at byte ${at} runs past the directory`);
  const entry = {
    name: names.decode(bytes.subarray(at + CENTRAL_BYTES, at + CENTRAL_BYTES + nameLength)),
    flags: view.getUint16(at + 8, true),
    method: view.getUint16(at + 10, true),
    storedSize: view.getUint32(at + 20, true),
    size: view.getUint32(at + 24, true),
    localOffset: view.getUint32(at + 42, true),
  };
  const extraStart = at + CENTRAL_BYTES + nameLength;
  applyZip64(view, extraStart, extraStart + extraLength, entry);
  return { entry, next };
}

// The entry's data: after its local header, whose name and extra field (the padding) may differ in length.
function entryData(view, bytes, entry, dataEnd) {
  if (entry.flags & FLAG_ENCRYPTED) throw new ZipProblem(`entry "${entry.name}" is encrypted`);
  if (entry.method !== 0) {
    throw new ZipProblem(`entry "${entry.name}" is compressed (${METHOD_NAMES[entry.method] ?? `method ${entry.method}`}); ` +
      'torch.save stores entries uncompressed, and only those are read');
  }
  if (entry.storedSize !== entry.size) {
    throw new ZipProblem(`entry "${entry.name}" is stored but its sizes differ (${entry.storedSize} and ${entry.size} bytes)`);
  }
  const at = entry.localOffset;
  if (at + LOCAL_BYTES > dataEnd || view.getUint32(at, true) !== SIGNATURES.local) {
    throw new ZipProblem(`entry "${entry.name}" has no local header at byte ${at}`);
  }
  const start = at + LOCAL_BYTES + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.size > dataEnd) {
    throw new ZipProblem(`entry "${entry.name}" (${entry.size} bytes at ${start}) runs past the archive's data (truncated?)`);
  }
  return bytes.subarray(start, start + entry.size);
}

/**
 * The stored entries of a zip archive, by name, as views into `bytes`.
 * @param {Uint8Array} bytes the whole archive
 * @returns {Map<string, Uint8Array>}
 * @throws {ZipProblem} naming what is wrong
 */
export function readStoredZip(bytes) {
  if (bytes.length < END_BYTES) throw new ZipProblem(`it has ${bytes.length} bytes, too few for a zip archive`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const directory = centralDirectory(view);
  const directoryEnd = directory.offset + directory.size;
  const entries = new Map();
  let at = directory.offset;
  for (let i = 0; i < directory.count; i++) {
    const { entry, next } = readCentralEntry(view, bytes, at, directoryEnd);
    if (entries.has(entry.name)) throw new ZipProblem(`it holds entry "${entry.name}" twice`);
    entries.set(entry.name, entryData(view, bytes, entry, directory.offset));
    at = next;
  }
  return entries;
}
