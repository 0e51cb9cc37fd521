/**
 * The wiki's persisted search index: one file, `<wiki>/.index/search.idx`, so `wiki search`
 * loads a wiki of any size in one read instead of reading every entry's `meta.json`.
 *
 * Layout (little-endian; every section starts on an 8-byte boundary):
 *   magic "skidx\n\0\0" · u32 format · u32 header bytes · header JSON (format, the wiki stamp it
 *   was built from, counts, domain names, section offsets) · then the resident sections, read
 *   whole at open — per document its token count (u32), domain number (u16) and flags (u8: 1
 *   verified, 2 has a visual); per term (sorted by UTF-8 bytes) its end in the term bytes (u32)
 *   and its postings' end (u32); the term bytes — then, read on demand, the postings (document
 *   numbers i32 and term frequencies u16, grouped by term, documents ascending), per document
 *   the end of its card (f64), and the cards (UTF-8 JSON, `cardOf` of the entry).
 *
 * The postings index the four card fields (the paper's stage 1, the default); a search over
 * fewer fields is answered from the entries (`openCardSearch`). The visual boost is applied as
 * by the in-memory search, over the two groups of cards.
 *
 * Documents are the entries of every domain sorted by skill id (as `listEntries` orders them).
 * A search restricted to a domain computes BM25 over that domain's documents only (their count,
 * average length and document frequencies), so it ranks and scores exactly as an index built
 * from that domain's entries alone: the same expressions (`bm25Idf`, `bm25Norm`, `bm25Impact`)
 * in the same order give bit-identical scores.
 *
 * Freshness: the header records the wiki's stamp — the domain folders (name, inode, mtime,
 * ctime, link count) and `wiki.json` — taken before the entries were read. Writing or replacing
 * an entry renames a folder inside its domain folder, which changes that folder's mtime; adding
 * a domain adds a folder. A stamp that differs means the index is stale and is not used. (An
 * entry's file edited in place, not through a build, changes no folder: rebuild the index with
 * `writeSearchIndex` after such an edit.) The index is rewritten by `wiki build` at the end of
 * every build, under the build lock, and by a search that finds it stale when no build runs;
 * every writer holds `<wiki>/.index/search.lock` (`acquireLock`: exclusive, host-aware) and
 * publishes with a rename, so readers see the old file or the new one, never a mix.
 *
 * Memory model: see `src/wiki/README.md` ("Search at scale").
 *
 * One file (over 400 lines) because the writer and the reader are two halves of one binary format
 * (the layout above): kept together, a change to one cannot miss the other.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type Bm25Parameters,
  type Bm25Postings,
  Bm25PostingsBuilder,
  bm25Idf,
  bm25Impact,
  bm25Norm,
  distinctTokens,
  ScoreAccumulator,
} from "../core/bm25.js";
import { InputError, isSkillsmithError, UnsupportedError } from "../core/errors.js";
import { isMissing, unlessMissing, unreadableError } from "../core/fs.js";
import { acquireLock } from "../core/lock.js";
import type { EmbeddingClient } from "../model/index.js";
import {
  cardOf,
  indexedText,
  mergeBoosted,
  type SkillCard,
  seededSample,
  shortlistConfigOf,
} from "./cards.js";
import type { CardEmbeddings } from "./embedding.js";
import {
  entryFolderPattern,
  LOCK_FILE,
  listDomainsNow,
  META_FILE,
  WIKI_MANIFEST_FILE,
} from "./layout.js";
import type { SkillMeta, Thresholds } from "./meta.js";
import {
  checkCardSource,
  checkSkillCard,
  parseSkillMetaText,
  readWikiManifestChecked,
} from "./meta-check.js";
import type { IdfScope, ShortlistConfig, ShortlistHit, ShortlistOptions } from "./search.js";
import { type ShortlistField, shortlistFields } from "./search-constants.js";

/**
 * 2: tokens split where an unspaced script (Han, kana, Hangul) meets another (format 1 did not).
 * 3: a text-only verified entry's card says exec_ok "not-applicable" (format 2 held "unknown").
 * 4: the wiki's thresholds in the header; per document the SHA-256 of its meta.json, checked
 *    for every hit before it is answered.
 * 5: a posting set per field set (`INDEXED_FIELD_SETS`): the four fields and the public code's
 *    three, so `--selection public-code` is answered from the file too.
 */
export const SEARCH_INDEX_FORMAT = 5;
export const SEARCH_INDEX_FOLDER = ".index";
export const SEARCH_INDEX_FILE = "search.idx";
const SEARCH_INDEX_LOCK = "search.lock";
const MAGIC = Buffer.from("skidx\n\0\0", "latin1");
const PREFIX_BYTES = 16;
const VERIFIED = 1;
const VISUAL = 2;
/** The first read takes this much, which holds the header and, for small wikis, everything resident. */
const FIRST_READ_BYTES = 256 * 1024;
/** A SHA-256 per document: the meta.json the document was indexed from. */
const DIGEST_BYTES = 32;
/** An entry's meta.json is small; a bigger one is not an entry this index was built from. */
const MAX_META_BYTES = 4 * 1024 * 1024;
/** This machine's byte order, as `os.endianness()` names it (without loading `node:os` on the query path). */
const ENDIANNESS = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1 ? "LE" : "BE";

/** The state of the wiki folders an index was built from; a difference means it is stale. */
export interface WikiStamp {
  readonly manifest: string;
  readonly domains: readonly { readonly name: string; readonly stat: string }[];
}

interface Section {
  readonly offset: number;
  readonly bytes: number;
}

/** Sections every search reads: per document its domain and flags, its card and digest. */
const commonSectionNames = ["domains", "flags", "cardEnds", "digests", "cards"] as const;
type CommonSectionName = (typeof commonSectionNames)[number];
/** Sections of one posting set (the postings of one field set). */
const postingSectionNames = [
  "lengths",
  "termEnds",
  "postingEnds",
  "termBytes",
  "postingDocs",
  "postingFrequencies",
] as const;
type PostingSectionName = (typeof postingSectionNames)[number];

/**
 * The field sets the index holds postings for, each a posting set of its own: the paper's four
 * fields (the default) and the public Resource2Skill code's name ⊕ tags ⊕ applicability
 * (`--selection public-code`), so both are answered from the file. Each set is tokenised from
 * its own text (`indexedText(meta, fields)`), exactly as the in-memory search indexes it.
 */
export const INDEXED_FIELD_SETS: readonly (readonly ShortlistField[])[] = [
  shortlistFields,
  ["name", "tags", "applicability"],
];

interface PostingSetHeader {
  readonly fields: readonly ShortlistField[];
  readonly terms: number;
  readonly postings: number;
  readonly sections: Readonly<Record<PostingSectionName, Section>>;
}

interface IndexHeader {
  readonly format: typeof SEARCH_INDEX_FORMAT;
  readonly endianness: "LE" | "BE";
  readonly stamp: WikiStamp;
  /** The wiki's thresholds as `wiki.json` held them (validated) when the index was written. */
  readonly thresholds: Thresholds;
  readonly documents: number;
  readonly domains: readonly string[];
  readonly sections: Readonly<Record<CommonSectionName, Section>>;
  /** One per `INDEXED_FIELD_SETS`, in that order. */
  readonly postingSets: readonly PostingSetHeader[];
}

const isNatural = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((each) => typeof each === "string");
const sectionsValid = (sections: unknown, names: readonly string[]): boolean =>
  isRecord(sections) &&
  names.every((name) => {
    const section = sections[name];
    return isRecord(section) && isNatural(section.offset) && isNatural(section.bytes);
  });

/**
 * The header's shape, checked by hand rather than with zod: this runs on every query, and
 * loading zod costs more than the whole query on a small wiki. Anything unexpected is a header
 * we do not trust (undefined: the caller rebuilds the index from the validated entries). The
 * thresholds are checked for the values search reads (numbers in range, known fields).
 */
export function parseIndexHeader(value: unknown): IndexHeader | undefined {
  if (!isRecord(value) || value.format !== SEARCH_INDEX_FORMAT) return undefined;
  if (value.endianness !== "LE" && value.endianness !== "BE") return undefined;
  const { stamp, thresholds, sections, postingSets } = value;
  if (!isRecord(stamp) || typeof stamp.manifest !== "string" || !Array.isArray(stamp.domains))
    return undefined;
  if (
    !stamp.domains.every(
      (domain) =>
        isRecord(domain) && typeof domain.name === "string" && typeof domain.stat === "string",
    )
  )
    return undefined;
  if (!isNatural(value.documents)) return undefined;
  if (!isStringList(value.domains) || !sectionsValid(sections, commonSectionNames))
    return undefined;
  if (!Array.isArray(postingSets) || postingSets.length !== INDEXED_FIELD_SETS.length)
    return undefined;
  for (const [number, set] of postingSets.entries())
    if (
      !isRecord(set) ||
      JSON.stringify(set.fields) !== JSON.stringify(INDEXED_FIELD_SETS[number]) ||
      !isNatural(set.terms) ||
      !isNatural(set.postings) ||
      !sectionsValid(set.sections, postingSectionNames)
    )
      return undefined;
  if (!searchThresholdsValid(thresholds)) return undefined;
  return value as unknown as IndexHeader;
}

/** The thresholds a search reads, each of the type and range `thresholdsSchema` demands. */
function searchThresholdsValid(value: unknown): value is Thresholds {
  if (!isRecord(value)) return false;
  const positiveInteger = (key: string) =>
    Number.isSafeInteger(value[key]) && (value[key] as number) > 0;
  const fields = value.shortlist_fields;
  return (
    positiveInteger("shortlist_k") &&
    positiveInteger("select_max") &&
    positiveInteger("card_max_tokens") &&
    (value.shortlist_size === "k" || value.shortlist_size === "max(5n,25)") &&
    isStringList(fields) &&
    fields.length > 0 &&
    fields.every((field) => (shortlistFields as readonly string[]).includes(field)) &&
    typeof value.shortlist_visual_boost === "number" &&
    value.shortlist_visual_boost >= 1 &&
    typeof value.bm25_k1 === "number" &&
    value.bm25_k1 > 0 &&
    typeof value.bm25_b === "number" &&
    value.bm25_b >= 0 &&
    value.bm25_b <= 1
  );
}

function statText(info: {
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  nlink: bigint;
  size: bigint;
}): string {
  return `${info.ino}:${info.mtimeNs}:${info.ctimeNs}:${info.nlink}:${info.size}`;
}

/** The stamp of the wiki as it is now (domain folders and `wiki.json`). */
export async function wikiStamp(root: string): Promise<WikiStamp> {
  return wikiStampNow(root);
}

/**
 * `wikiStamp`, synchronously (a few stats): the query opens the index without `fs/promises`,
 * whose loading costs more start-up than the stats.
 */
export function wikiStampNow(root: string): WikiStamp {
  const manifest = statText(statSync(join(root, WIKI_MANIFEST_FILE), { bigint: true }));
  const domains = [];
  for (const name of listDomainsNow(root))
    domains.push({ name, stat: statText(statSync(join(root, name), { bigint: true })) });
  return { manifest, domains };
}

function sameStamp(left: WikiStamp, right: WikiStamp): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

export function searchIndexPath(root: string): string {
  return join(root, SEARCH_INDEX_FOLDER, SEARCH_INDEX_FILE);
}

/** Every entry's (domain, id) in `listEntries` order, without reading any meta.json. */
async function entryRefs(root: string, domains: readonly string[]): Promise<[string, string][]> {
  const refs: [string, string][] = [];
  for (const domain of domains) {
    // A domain removed meanwhile (or one asked for that was never made) has no entries; one
    // that is there but unreadable is an error, never an empty domain.
    const folder = join(root, domain);
    const dirents = (await unlessMissing(folder, readdir(folder, { withFileTypes: true }))) ?? [];
    for (const dirent of dirents)
      if (dirent.isDirectory() && entryFolderPattern.test(dirent.name))
        refs.push([domain, dirent.name]);
  }
  // Stable, like listEntries' sort: the same id in two domains keeps the domain order.
  return refs.sort((left, right) => (left[1] < right[1] ? -1 : left[1] > right[1] ? 1 : 0));
}

/** An entry to index: its meta and the domain folder it is in. */
export interface IndexedEntry {
  readonly domain: string;
  readonly meta: SkillMeta;
  /** SHA-256 of the meta.json bytes the meta was validated from (none: generated, no file). */
  readonly sha256?: Uint8Array;
}

/**
 * The entries of `refs` in order, each meta.json read once: its bytes hashed and checked without
 * zod (`parseSkillMetaText`: the schema only for an entry the quick check does not accept).
 * Synchronous reads: a few hundred small files cost less CPU this way than through the thread pool.
 */
async function* entriesOf(
  root: string,
  refs: readonly [string, string][],
): AsyncIterable<IndexedEntry> {
  for (const [domain, id] of refs) {
    const path = join(root, domain, id, META_FILE);
    const bytes = readMetaBytes(path);
    // Both before any await: the bytes are a view of a buffer the next read reuses.
    const text = bytes.toString("utf8");
    const sha256 = createHash("sha256").update(bytes).digest();
    yield { domain, meta: await parseSkillMetaText(path, text), sha256 };
  }
}

/**
 * Rebuild the index file from the wiki's entries and publish it atomically, holding the index
 * lock. Returns false without writing when `skipIf` (checked once the lock is held) says a
 * fresh index already exists.
 */
export async function writeSearchIndex(
  root: string,
  options: { readonly skipIf?: () => Promise<boolean> } = {},
): Promise<boolean> {
  const folder = join(root, SEARCH_INDEX_FOLDER);
  await mkdir(folder, { recursive: true });
  const lock = await acquireLock(join(folder, SEARCH_INDEX_LOCK), {
    timeoutMs: 10 * 60_000,
    holderDoes: "writing the search index",
    ...(options.skipIf === undefined ? {} : { done: options.skipIf }),
  });
  if (!lock.acquired) return false;
  try {
    if (options.skipIf !== undefined && (await options.skipIf())) return false;
    // The stamp is taken before the entries are read: a change while reading leaves an index
    // whose stamp no longer matches, which the next search rebuilds.
    const stamp = await wikiStamp(root);
    const domains = stamp.domains.map((domain) => domain.name);
    const refs = await entryRefs(root, domains);
    const { thresholds } = await readWikiManifestChecked(root);
    await writeIndexFile(root, stamp, domains, refs.length, entriesOf(root, refs), thresholds);
    return true;
  } finally {
    await lock.release();
  }
}

function align(offset: number): number {
  return Math.ceil(offset / 8) * 8;
}

/**
 * Write the index of `count` entries (in document order) with the given stamp. Exported for the
 * benchmark, which indexes generated cards without writing a million entry folders.
 */
export async function writeIndexFile(
  root: string,
  stamp: WikiStamp,
  domains: readonly string[],
  count: number,
  entries: AsyncIterable<IndexedEntry> | Iterable<IndexedEntry>,
  /** The wiki's thresholds (default: read from its `wiki.json`). */
  wikiThresholds?: Thresholds,
): Promise<void> {
  const thresholds = wikiThresholds ?? (await readWikiManifestChecked(root)).thresholds;
  const domainNumber = new Map(domains.map((name, index) => [name, index]));
  const builders = INDEXED_FIELD_SETS.map(() => new Bm25PostingsBuilder());
  const documentDomains = new Uint16Array(count);
  const flags = new Uint8Array(count);
  const cardEnds = new Float64Array(count);
  const digests = new Uint8Array(DIGEST_BYTES * count);
  // Cards as text: encoded a few MiB at a time when written (a Buffer per card costs more than the card).
  const cards: string[] = [];
  const cardSizes: number[] = [];
  let cardBytes = 0;
  let doc = 0;
  for await (const { domain, meta, sha256 } of entries) {
    if (doc >= count) throw new RangeError(`more than ${count} entries to index`);
    for (const [set, fields] of INDEXED_FIELD_SETS.entries())
      builders[set]?.add(indexedText(meta, fields));
    // The folder's domain, not meta.domain: a domain search lists one folder, as listEntries does.
    const number = domainNumber.get(domain);
    if (number === undefined) throw new RangeError(`domain ${domain} is not in the stamp`);
    documentDomains[doc] = number;
    flags[doc] =
      (meta.validation_status === "verified" ? VERIFIED : 0) |
      (meta.modalities_present.includes("visual") ? VISUAL : 0);
    const card = JSON.stringify(cardOf(meta));
    const size = Buffer.byteLength(card, "utf8");
    cards.push(card);
    cardSizes.push(size);
    cardBytes += size;
    cardEnds[doc] = cardBytes;
    // A generated entry without a file keeps zeros: no meta.json hashes to them, so it is never answered.
    if (sha256 !== undefined) digests.set(sha256, DIGEST_BYTES * doc);
    doc += 1;
  }
  if (doc !== count) throw new RangeError(`expected ${count} entries to index, got ${doc}`);
  const sets = builders.map((builder) => postingSetBodies(builder.finish()));

  // Written in this order: the resident sections first (read whole at open, in one read), then
  // what is read on demand.
  const bodies: { body: Uint8Array; set?: number; name: string }[] = [
    { name: "domains", body: bytesOf(documentDomains) },
    { name: "flags", body: flags },
    ...sets.flatMap((bodiesOfSet, set) =>
      (["lengths", "termEnds", "postingEnds", "termBytes"] as const).map((name) => ({
        set,
        name,
        body: bodiesOfSet[name],
      })),
    ),
    ...sets.flatMap((bodiesOfSet, set) =>
      (["postingDocs", "postingFrequencies"] as const).map((name) => ({
        set,
        name,
        body: bodiesOfSet[name],
      })),
    ),
    { name: "cardEnds", body: bytesOf(cardEnds) },
    { name: "digests", body: digests },
  ];
  // Offsets depend on the header's length, which depends on the offsets: lay out with a
  // generous header size, then pad the written header to it.
  const provisional = (headerBytes: number): IndexHeader => {
    let offset = align(PREFIX_BYTES + headerBytes);
    const common: Record<string, Section> = {};
    const perSet: Record<string, Section>[] = sets.map(() => ({}));
    for (const { name, set, body } of bodies) {
      const section = { offset, bytes: body.byteLength };
      if (set === undefined) common[name] = section;
      else (perSet[set] as Record<string, Section>)[name] = section;
      offset = align(offset + body.byteLength);
    }
    common.cards = { offset, bytes: cardBytes };
    return {
      format: SEARCH_INDEX_FORMAT,
      endianness: ENDIANNESS,
      stamp: { manifest: stamp.manifest, domains: [...stamp.domains] },
      thresholds,
      documents: count,
      domains: [...domains],
      sections: common as IndexHeader["sections"],
      postingSets: sets.map((set, number) => ({
        fields: [...(INDEXED_FIELD_SETS[number] ?? [])],
        terms: set.terms,
        postings: set.postings,
        sections: perSet[number] as PostingSetHeader["sections"],
      })),
    };
  };
  let headerBytes = 1024;
  let header = provisional(headerBytes);
  while (Buffer.byteLength(JSON.stringify(header)) > headerBytes) {
    headerBytes *= 2;
    header = provisional(headerBytes);
  }
  const headerText = Buffer.alloc(headerBytes, " ");
  headerText.write(JSON.stringify(header));
  const prefix = Buffer.alloc(PREFIX_BYTES);
  MAGIC.copy(prefix, 0);
  prefix.writeUInt32LE(SEARCH_INDEX_FORMAT, 8);
  prefix.writeUInt32LE(headerBytes, 12);

  const folder = join(root, SEARCH_INDEX_FOLDER);
  await mkdir(folder, { recursive: true });
  const temporary = join(folder, `.${SEARCH_INDEX_FILE}.${process.pid}.${Date.now()}.tmp`);
  const handle = await open(temporary, "w");
  try {
    await handle.write(prefix, 0, prefix.length, 0);
    await handle.write(headerText, 0, headerText.length, PREFIX_BYTES);
    for (const { name, set, body } of bodies) {
      const { offset } =
        set === undefined
          ? header.sections[name as CommonSectionName]
          : (header.postingSets[set] as PostingSetHeader).sections[name as PostingSectionName];
      await handle.write(body, 0, body.byteLength, offset);
    }
    // Cards in chunks of a few MiB: one write per card costs minutes at a million cards.
    let position = header.sections.cards.offset;
    for (let first = 0; first < cards.length; ) {
      let last = first;
      let bytes = 0;
      while (last < cards.length && (bytes < 4 * 1024 * 1024 || last === first)) {
        bytes += cardSizes[last] as number;
        last += 1;
      }
      const chunk = Buffer.from(cards.slice(first, last).join(""), "utf8");
      await handle.write(chunk, 0, chunk.length, position);
      position += chunk.length;
      first = last;
    }
    await handle.close();
    await rename(temporary, searchIndexPath(root));
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** One posting set's sections: terms sorted by their UTF-8 bytes, postings grouped by term. */
function postingSetBodies(postings: Bm25Postings) {
  // Sorted by bytes, so a query term is found by binary search on the bytes.
  const encoded = [...postings.terms].map(([term, id]) => ({ bytes: Buffer.from(term), id }));
  encoded.sort((left, right) => Buffer.compare(left.bytes, right.bytes));
  const termEnds = new Uint32Array(encoded.length);
  const postingEnds = new Uint32Array(encoded.length);
  const postingDocs = new Int32Array(postings.postingDocs.length);
  const postingFrequencies = new Uint16Array(postings.postingDocs.length);
  let termEnd = 0;
  let postingEnd = 0;
  for (const [position, { bytes, id }] of encoded.entries()) {
    termEnd += bytes.length;
    termEnds[position] = termEnd;
    const start = postings.offsets[id] ?? 0;
    const end = postings.offsets[id + 1] ?? 0;
    postingDocs.set(postings.postingDocs.subarray(start, end), postingEnd);
    postingFrequencies.set(postings.postingFrequencies.subarray(start, end), postingEnd);
    postingEnd += end - start;
    postingEnds[position] = postingEnd;
  }
  if (termEnd > 0xffff_ffff || postingEnd > 0xffff_ffff)
    throw new RangeError("the wiki is too large for the search index's u32 term and posting ends");
  return {
    terms: encoded.length,
    postings: postingEnd,
    lengths: bytesOf(Uint32Array.from(postings.lengths)),
    termEnds: bytesOf(termEnds),
    postingEnds: bytesOf(postingEnds),
    termBytes: Buffer.concat(encoded.map((term) => term.bytes)) as Uint8Array,
    postingDocs: bytesOf(postingDocs),
    postingFrequencies: bytesOf(postingFrequencies),
  };
}

/** Where `readMetaBytes` reads: reused, so reading an entry allocates nothing but its text. */
let metaBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * An entry's meta.json bytes, valid until the next call (a view of a reused buffer: the caller
 * hashes and decodes them at once); unreadable is an `InputError` naming the file, as
 * `readJsonFile` says it.
 */
function readMetaBytes(path: string): Buffer {
  try {
    const fd = openSync(path, "r");
    try {
      let used = 0;
      for (;;) {
        if (used === metaBuffer.length) {
          const larger = Buffer.allocUnsafe(2 * metaBuffer.length);
          metaBuffer.copy(larger);
          metaBuffer = larger;
        }
        const read = readSync(fd, metaBuffer, used, metaBuffer.length - used, null);
        if (read === 0) return metaBuffer.subarray(0, used);
        used += read;
      }
    } finally {
      closeSync(fd);
    }
  } catch (cause) {
    throw new InputError("wiki.file-unreadable", "cannot read the file", { file: path }, { cause });
  }
}

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/**
 * The index answered a document its wiki does not hold as indexed (an edited index, or one left
 * stale by an entry edited in place): never an answer; the index is rebuilt from the entries.
 */
export class IndexMismatchError extends InputError {
  constructor(path: string, what: string) {
    super("wiki.index-mismatch", `the search index does not match the wiki: ${what}`, {
      file: path,
    });
  }
}

function damaged(path: string, what: string): InputError {
  return new InputError(
    "wiki.index-damaged",
    `the search index is damaged (${what}); delete it and it is rebuilt by the next search`,
    { file: path },
  );
}

/** Read `bytes` at `position` of `fd` into a new, 8-byte-aligned buffer. */
function readAt(fd: number, position: number, bytes: number, path: string): Uint8Array {
  const target = new Uint8Array(new ArrayBuffer(align(bytes)), 0, bytes);
  let done = 0;
  while (done < bytes) {
    let read: number;
    try {
      read = readSync(fd, target, done, bytes - done, position + done);
    } catch (error) {
      // A folder where the index should be (EISDIR) or an I/O error: named, never a bare errno.
      throw unreadableError(path, error);
    }
    if (read === 0) throw damaged(path, "shorter than its header says");
    done += read;
  }
  return target;
}

/** One posting set as a search reads it: the resident arrays, postings on demand. */
interface PostingSet {
  readonly header: PostingSetHeader;
  readonly lengths: Uint32Array;
  readonly termEnds: Uint32Array;
  readonly postingEnds: Uint32Array;
  readonly termBytes: Buffer;
}

/** BM25's statistics over the documents they cover (`member`; all of them when undefined). */
interface Statistics {
  readonly count: number;
  readonly average: number;
  readonly member: Uint8Array | undefined;
}

/**
 * A search over the index file: the resident arrays in memory, postings and cards read on
 * demand. Keeps the file open (the one it validated) until `close()`.
 */
export class IndexedWikiSearch {
  private accumulator: ScoreAccumulator | undefined;
  /** Cards already checked against their entries (a long-lived search asks for them again). */
  private readonly checkedCards = new Map<number, SkillCard>();
  private digests: Uint8Array | undefined;
  private readonly embeddings = new Map<EmbeddingClient, CardEmbeddings>();
  /** Documents in scope (the domain searched, or all). */
  private readonly scopeCount: number;
  /** BM25 statistics by posting set, statistics scope and eligibility (`statisticsOf`). */
  private readonly statistics = new Map<string, Statistics>();

  private constructor(
    private readonly fd: number,
    private readonly path: string,
    private readonly header: IndexHeader,
    private readonly documentDomains: Uint16Array,
    private readonly flags: Uint8Array,
    private readonly sets: readonly PostingSet[],
    /** The domain number searched, or -1 for every domain (-2: a domain with no entries). */
    private readonly scope: number,
    readonly thresholds: Thresholds,
    readonly root: string,
    /** The domain asked for (every domain when undefined). */
    readonly domain: string | undefined,
  ) {
    let count = 0;
    for (let doc = 0; doc < header.documents; doc += 1) if (this.inScope(doc)) count += 1;
    this.scopeCount = count;
  }

  /**
   * The index of `root` when it exists, has this format and matches the wiki as it is now;
   * undefined otherwise (missing, stale, another format or damaged: the caller rebuilds it or
   * reads the entries).
   */
  static async open(
    root: string,
    /** Default: the thresholds the header recorded from `wiki.json` (its stat is in the stamp). */
    givenThresholds?: Thresholds,
    domain?: string,
  ): Promise<IndexedWikiSearch | undefined> {
    return IndexedWikiSearch.openNow(root, givenThresholds, domain);
  }

  /** `open`, synchronously (the start-up entry `cli/wiki-query.ts` runs without promises of fs). */
  static openNow(
    root: string,
    givenThresholds?: Thresholds,
    domain?: string,
  ): IndexedWikiSearch | undefined {
    const path = searchIndexPath(root);
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (error) {
      // No index yet: the caller builds one. One that is there but unreadable is an error.
      if (isMissing(error)) return undefined;
      throw unreadableError(path, error);
    }
    let keep = false;
    try {
      // The size of the file opened (a rename may have replaced the path since).
      const size = fstatSync(fd).size;
      const first = readAt(fd, 0, Math.min(size, FIRST_READ_BYTES), path);
      const prefix = Buffer.from(first.buffer, first.byteOffset, first.byteLength);
      if (size < PREFIX_BYTES || !prefix.subarray(0, 8).equals(MAGIC)) return undefined;
      if (prefix.readUInt32LE(8) !== SEARCH_INDEX_FORMAT) return undefined;
      const headerBytes = prefix.readUInt32LE(12);
      const headerBuffer =
        PREFIX_BYTES + headerBytes <= first.byteLength
          ? prefix.subarray(PREFIX_BYTES, PREFIX_BYTES + headerBytes)
          : Buffer.from(readAt(fd, PREFIX_BYTES, headerBytes, path));
      let parsed: unknown;
      try {
        parsed = JSON.parse(headerBuffer.toString("utf8"));
      } catch {
        // A damaged header (a foreign file, a crash mid-write of an old version): rebuilt.
        return undefined;
      }
      const header = parseIndexHeader(parsed);
      if (header === undefined) return undefined;
      const { sections } = header;
      if (header.endianness !== ENDIANNESS) return undefined;
      let now: WikiStamp | undefined;
      try {
        now = wikiStampNow(root);
      } catch (error) {
        // No wiki.json any more (not a wiki): the caller's reading of the manifest says so.
        if (!isMissing(error)) throw error;
      }
      if (now === undefined || !sameStamp(header.stamp, now)) return undefined;
      // The domains documents point into are the domain folders that are there now.
      const names = now.domains.map((each) => each.name);
      if (header.domains.some((name) => !names.includes(name))) return undefined;
      if (sections.digests.bytes !== DIGEST_BYTES * header.documents) return undefined;
      if (sections.cards.offset + sections.cards.bytes > size) return undefined;
      // The resident sections are contiguous, from the domains to the last set's term bytes: one
      // read (none more when the first read held them). A header placing one elsewhere is damaged.
      const start = sections.domains.offset;
      const last = header.postingSets[header.postingSets.length - 1]?.sections.termBytes;
      if (last === undefined) return undefined;
      const end = last.offset + last.bytes;
      const resident: Section[] = [
        sections.domains,
        sections.flags,
        ...header.postingSets.flatMap((set) => [
          set.sections.lengths,
          set.sections.termEnds,
          set.sections.postingEnds,
          set.sections.termBytes,
        ]),
      ];
      if (
        end > size ||
        resident.some(
          (section) =>
            section.offset % 8 !== 0 ||
            section.offset < start ||
            section.offset + section.bytes > end,
        )
      )
        return undefined;
      const bytes =
        end <= first.byteLength ? first.subarray(start, end) : readAt(fd, start, end - start, path);
      // Each section's place in the buffer holding the resident bytes (offsets stay 8-aligned).
      const buffer = bytes.buffer as ArrayBuffer;
      const at = (section: Section) => bytes.byteOffset - start + section.offset;
      const documents = header.documents;
      const documentDomains = new Uint16Array(
        buffer,
        at(sections.domains),
        sections.domains.bytes / 2,
      );
      const flags = new Uint8Array(buffer, at(sections.flags), sections.flags.bytes);
      const sets: PostingSet[] = [];
      for (const set of header.postingSets) {
        const { lengths, termEnds, postingEnds, termBytes } = set.sections;
        const view: PostingSet = {
          header: set,
          lengths: new Uint32Array(buffer, at(lengths), lengths.bytes / 4),
          termEnds: new Uint32Array(buffer, at(termEnds), termEnds.bytes / 4),
          postingEnds: new Uint32Array(buffer, at(postingEnds), postingEnds.bytes / 4),
          termBytes: Buffer.from(buffer, at(termBytes), termBytes.bytes),
        };
        if (
          view.lengths.length !== documents ||
          view.termEnds.length !== set.terms ||
          view.postingEnds.length !== set.terms
        )
          return undefined;
        sets.push(view);
      }
      if (documentDomains.length !== documents || flags.length !== documents) return undefined;
      const scope =
        domain === undefined
          ? -1
          : header.domains.includes(domain)
            ? header.domains.indexOf(domain)
            : -2;
      keep = true;
      return new IndexedWikiSearch(
        fd,
        path,
        header,
        documentDomains,
        flags,
        sets,
        scope,
        givenThresholds ?? header.thresholds,
        root,
        domain,
      );
    } catch (error) {
      // A file shorter than its header says is damaged: like a missing one, it is rebuilt.
      if (isSkillsmithError(error) && error.code === "wiki.index-damaged") return undefined;
      throw error;
    } finally {
      if (!keep) closeSync(fd);
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Entries searched (the domain's, or every domain's). */
  get size(): number {
    return this.scopeCount;
  }

  private inScope(doc: number): boolean {
    return this.scope === -1 || this.documentDomains[doc] === this.scope;
  }

  private eligible(doc: number, includeUnverified: boolean): boolean {
    return this.inScope(doc) && (includeUnverified || ((this.flags[doc] ?? 0) & VERIFIED) !== 0);
  }

  /** The posting set of exactly these fields (in any order), if the index holds one. */
  private static setNumber(fields: readonly ShortlistField[]): number {
    return INDEXED_FIELD_SETS.findIndex(
      (set) => set.length === new Set(fields).size && fields.every((field) => set.includes(field)),
    );
  }

  /** Whether the index answers a shortlist over these fields (it holds a posting set for them). */
  static indexes(fields: readonly ShortlistField[]): boolean {
    return IndexedWikiSearch.setNumber(fields) !== -1;
  }

  shortlistConfig(options: ShortlistOptions = {}): ShortlistConfig {
    return shortlistConfigOf(this.thresholds, options);
  }

  /** The term's number in a posting set, by binary search over its sorted term bytes. */
  private termNumber(set: PostingSet, token: string): number | undefined {
    const wanted = Buffer.from(token, "utf8");
    let low = 0;
    let high = set.header.terms - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const start = middle === 0 ? 0 : (set.termEnds[middle - 1] ?? 0);
      const order = Buffer.compare(
        set.termBytes.subarray(start, set.termEnds[middle] ?? 0),
        wanted,
      );
      if (order === 0) return middle;
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  private postingsOf(
    set: PostingSet,
    term: number,
  ): { docs: Int32Array; frequencies: Uint16Array } {
    const start = term === 0 ? 0 : (set.postingEnds[term - 1] ?? 0);
    const count = (set.postingEnds[term] ?? 0) - start;
    const { postingDocs, postingFrequencies } = set.header.sections;
    const docs = readAt(this.fd, postingDocs.offset + 4 * start, 4 * count, this.path);
    const frequencies = readAt(
      this.fd,
      postingFrequencies.offset + 2 * start,
      2 * count,
      this.path,
    );
    return {
      docs: new Int32Array(docs.buffer, 0, count),
      frequencies: new Uint16Array(frequencies.buffer, 0, count),
    };
  }

  /**
   * One document's card, answered only when the wiki holds the entry it came from: the entry's
   * meta.json must hash to the digest indexed for the document, and the card made from it must
   * be the indexed card, with the indexed verified and visual flags. Otherwise the index is
   * edited or stale (an entry edited in place, not through a build) and `IndexMismatchError` is
   * thrown: the caller rebuilds the index from the entries (`searchSkills` does).
   */
  card(doc: number): SkillCard {
    const known = this.checkedCards.get(doc);
    if (known !== undefined) return known;
    const indexed = this.indexedCard(doc);
    const domain = this.header.domains[this.documentDomains[doc] ?? -1];
    const id = indexed.skill_id;
    if (domain === undefined || typeof id !== "string" || !entryFolderPattern.test(id))
      throw new IndexMismatchError(this.path, `document ${doc} names no entry folder`);
    const path = join(this.root, domain, id, META_FILE);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      if (isMissing(error)) throw new IndexMismatchError(this.path, `${path} is not in the wiki`);
      throw unreadableError(path, error);
    }
    const expected = this.digest(doc);
    const actual = createHash("sha256").update(bytes).digest();
    if (bytes.length > MAX_META_BYTES || !actual.equals(expected))
      throw new IndexMismatchError(this.path, `${path} is not the file that was indexed`);
    let source: unknown;
    try {
      source = JSON.parse(bytes.toString("utf8"));
    } catch {
      source = undefined;
    }
    const checked = checkCardSource(source);
    if (checked === undefined)
      throw new IndexMismatchError(this.path, `${path} is not an entry's meta.json`);
    const card = cardOf(checked);
    const flags = this.flags[doc] ?? 0;
    if (
      JSON.stringify(card) !== JSON.stringify(indexed) ||
      card.skill_id !== id ||
      (card.validation_status === "verified") !== ((flags & VERIFIED) !== 0) ||
      card.modalities.includes("visual") !== ((flags & VISUAL) !== 0)
    )
      throw new IndexMismatchError(this.path, `document ${doc} does not match ${path}`);
    this.checkedCards.set(doc, card);
    return card;
  }

  /** The SHA-256 indexed for a document; the section is read once, when a card is first asked. */
  private digest(doc: number): Uint8Array {
    const { digests } = this.header.sections;
    this.digests ??= readAt(this.fd, digests.offset, digests.bytes, this.path);
    return this.digests.subarray(DIGEST_BYTES * doc, DIGEST_BYTES * (doc + 1));
  }

  /** One document's card as the index file holds it (not yet checked against the entry). */
  private indexedCard(doc: number): SkillCard {
    const { cardEnds, cards } = this.header.sections;
    // Card d spans [end of card d − 1, end of card d) of the card bytes.
    let start = 0;
    let end: number;
    if (doc === 0) {
      end = new Float64Array(readAt(this.fd, cardEnds.offset, 8, this.path).buffer, 0, 1)[0] ?? 0;
    } else {
      const ends = readAt(this.fd, cardEnds.offset + 8 * (doc - 1), 16, this.path);
      const pair = new Float64Array(ends.buffer, 0, 2);
      start = pair[0] ?? 0;
      end = pair[1] ?? 0;
    }
    const bytes = readAt(this.fd, cards.offset + start, end - start, this.path);
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(bytes.buffer, 0, bytes.byteLength).toString("utf8"));
    } catch {
      throw damaged(this.path, `card ${doc} is not JSON`);
    }
    // A card of another shape was edited: the entries answer instead, through a rebuild.
    const card = checkSkillCard(value);
    if (card === undefined) throw new IndexMismatchError(this.path, `card ${doc} is not a card`);
    return card;
  }

  /**
   * Stage 1: the BM25 shortlist over the scope, as `WikiSearch.shortlist` computes it (K, fields,
   * k1, visual boost and statistics scope from the wiki's thresholds unless given), from the
   * posting set of the fields asked for.
   */
  shortlist(query: string, options: ShortlistOptions = {}): ShortlistHit[] {
    const config = this.shortlistConfig(options);
    const set = this.sets[IndexedWikiSearch.setNumber(config.fields)];
    if (set === undefined)
      throw new UnsupportedError(
        "wiki.index-fields",
        `the search index holds postings for ${INDEXED_FIELD_SETS.map((fields) => fields.join(" ⊕ ")).join(" and for ")}, not ${config.fields.join(", ")}: search the entries instead`,
      );
    const includeUnverified = options.includeUnverified === true;
    const statistics = this.statisticsOf(set, config.idf_over, includeUnverified);
    const ranked = (allowed: (doc: number) => boolean) =>
      this.ranked(set, statistics, query, config.k, allowed, config.bm25_k1);
    const hits =
      config.visual_boost === 1
        ? ranked((doc) => this.eligible(doc, includeUnverified))
        : mergeBoosted(
            ranked((doc) => this.eligible(doc, includeUnverified) && this.hasVisual(doc)),
            ranked((doc) => this.eligible(doc, includeUnverified) && !this.hasVisual(doc)),
            config.visual_boost,
            config.k,
          );
    return hits.map((hit) => ({ card: this.card(hit.doc), score: hit.score }));
  }

  private hasVisual(doc: number): boolean {
    return ((this.flags[doc] ?? 0) & VISUAL) !== 0;
  }

  /**
   * The documents BM25's statistics cover, their count and average length in the set's fields:
   * `all`, every document in scope (an index of the scope's entries alone); `searched`, the
   * eligible ones with a token in those fields (`WikiSearch`'s scoped search, the reference's).
   */
  private statisticsOf(set: PostingSet, over: IdfScope, includeUnverified: boolean): Statistics {
    const key = `${set.header.fields.join(",")}|${over}|${over === "searched" && includeUnverified}`;
    const known = this.statistics.get(key);
    if (known !== undefined) return known;
    const covered = (doc: number) =>
      over === "all"
        ? this.inScope(doc)
        : this.eligible(doc, includeUnverified) && (set.lengths[doc] ?? 0) > 0;
    const member =
      over === "all" && this.scope === -1 ? undefined : new Uint8Array(this.header.documents);
    let count = 0;
    let lengthSum = 0;
    for (let doc = 0; doc < this.header.documents; doc += 1) {
      if (!covered(doc)) continue;
      if (member !== undefined) member[doc] = 1;
      count += 1;
      lengthSum += set.lengths[doc] ?? 0;
    }
    // As averageLength computes it over the covered documents alone.
    const statistics = { count, average: count === 0 ? 0 : lengthSum / count, member };
    this.statistics.set(key, statistics);
    return statistics;
  }

  /** The best k documents allowed by `allowed`, scored with the given statistics. */
  private ranked(
    set: PostingSet,
    statistics: Statistics,
    query: string,
    k: number,
    allowed: (doc: number) => boolean,
    k1: number,
  ): { doc: number; score: number }[] {
    // Impacts are computed per query from term frequencies, so any k1 is answered exactly.
    const parameters: Bm25Parameters = { k1, b: this.thresholds.bm25_b };
    const k1Plus1 = parameters.k1 + 1;
    const { member } = statistics;
    this.accumulator ??= new ScoreAccumulator(this.header.documents);
    const accumulator = this.accumulator;
    for (const token of distinctTokens(query)) {
      const term = this.termNumber(set, token);
      if (term === undefined) continue;
      const { docs, frequencies } = this.postingsOf(set, term);
      let frequency = docs.length;
      if (member !== undefined) {
        frequency = 0;
        for (const doc of docs) frequency += member[doc] ?? 0;
      }
      // A term absent from the covered documents is absent from an index of them alone.
      if (frequency === 0) continue;
      const idf = bm25Idf(statistics.count, frequency);
      for (let position = 0; position < docs.length; position += 1) {
        const doc = docs[position]!;
        if (!allowed(doc)) continue;
        const norm = bm25Norm(set.lengths[doc]!, statistics.average, parameters);
        accumulator.add(doc, idf * bm25Impact(frequencies[position]!, norm, k1Plus1));
      }
    }
    return accumulator.top(k);
  }

  private eligibleDocuments(includeUnverified: boolean): number[] {
    const docs: number[] = [];
    for (let doc = 0; doc < this.header.documents; doc += 1)
      if (this.eligible(doc, includeUnverified)) docs.push(doc);
    return docs;
  }

  /** Every eligible card in document order (linear in the wiki: the embedding strategy's input). */
  eligibleCards(includeUnverified: boolean): SkillCard[] {
    return this.eligibleDocuments(includeUnverified).map((doc) => this.card(doc));
  }

  /** The random strategy's picks: the same seeded sample as over the entries, cards read for the picks only. */
  sampleEligible(count: number, seed: number, includeUnverified: boolean): SkillCard[] {
    return seededSample(this.eligibleDocuments(includeUnverified), count, seed).map((doc) =>
      this.card(doc),
    );
  }

  async cardEmbeddings(client: EmbeddingClient): Promise<CardEmbeddings> {
    let store = this.embeddings.get(client);
    if (store === undefined) {
      const { CardEmbeddings } = await import("./embedding.js");
      store = await CardEmbeddings.open(client, this.root);
      this.embeddings.set(client, store);
    }
    return store;
  }
}

/**
 * Whether a build holds the wiki's build lock (its entries are changing: index them later). A
 * lock whose process is gone (a crashed build) holds nothing.
 */
export async function buildInProgress(root: string): Promise<boolean> {
  let holder: { pid?: unknown };
  try {
    holder = JSON.parse(await readFile(join(root, LOCK_FILE), "utf8")) as { pid?: unknown };
  } catch (error) {
    // No lock; or a lock being written right now, which is a build starting.
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
  if (typeof holder.pid !== "number") return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
