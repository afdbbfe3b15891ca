import { breaks, type Break } from './breaks/index.js';
import { extractSection } from './image.js';
import { mergeRecords } from './records.js';
import { validateManifest } from './validate.js';
import type { EventSpec, ManifestData, ToolSpec } from './types.js';

/** A validated, merged manifest. Built from image bytes or from a manifest object; never touches the filesystem. */
export class Manifest {
  readonly data: ManifestData;

  private constructor(data: ManifestData) {
    this.data = data;
  }

  /** Reads the `.berm.abi` section of a wasm module or ELF file without compiling anything. */
  static fromImage(bytes: Uint8Array): Manifest {
    return Manifest.fromJSON(mergeRecords(extractSection(bytes)));
  }

  /** Validates a merged manifest object (as `crab inspect --json` prints it). */
  static fromJSON(value: unknown): Manifest {
    return new Manifest(validateManifest(value));
  }

  get tools(): ToolSpec[] {
    return this.data.tools;
  }

  get events(): EventSpec[] {
    return this.data.events;
  }

  /** Every way `next` breaks a caller of this manifest, as data. */
  breaks(next: Manifest): Break[] {
    return breaks(this.data, next.data);
  }

  toJSON(): ManifestData {
    return this.data;
  }
}
