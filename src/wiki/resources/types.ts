import type { ResourceRecord } from "../meta.js";

/** One unit a skill can be anchored to; `index` is the `extracted_node_index` of the skill id. */
export interface ExtractedUnit {
  readonly index: number;
  /** `code-block`: a fenced block or `<pre>` of a document, or a whole example page. */
  readonly kind: "code-region" | "code-block" | "paragraph" | "frame" | "image";
  /** Human-readable place: `src/x.py:3-12 function_definition slugify`, `paragraph 2`, `frame 00:00:04`. */
  readonly locator: string;
  /** The unit's text: code, paragraph, or the transcript spoken around a frame. */
  readonly text: string;
  /** Code regions and blocks: the language name (python, javascript, bash, …). */
  readonly language?: string;
  /** Frames and images: an absolute path of the image file to show the model and copy. */
  readonly imagePath?: string;
  readonly mediaType?: string;
  /** Video frames: the time of the frame, in seconds from the start. */
  readonly atSeconds?: number;
}

/** A resource after deterministic preprocessing: what the distiller reads. */
export interface PreparedResource {
  readonly record: ResourceRecord;
  /** Absolute path of the resource. */
  readonly absolutePath: string;
  /** Context for the whole resource: README excerpt, article title, full transcript. */
  readonly context: string;
  readonly units: readonly ExtractedUnit[];
}
