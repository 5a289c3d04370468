// Types for @areev/areev.

export interface Version {
  version: number;
  grainId: string;
  /** ISO 8601 UTC, microsecond precision. */
  created: string;
  /** Nanoseconds since the Unix epoch. */
  createdNs: bigint;
  size: number;
  op: string;
  subject: string;
  transient: boolean;
  /** The body was erased by `areev purge`; reading this version rejects with ERR_AREEV_NOT_FOUND. */
  purged: boolean;
  /** The file's state, the same on every version: live, deleted or purged. */
  chainState: 'live' | 'deleted' | 'purged';
}

export interface AreevOptions {
  /** fsync every write (SQLite synchronous=FULL). */
  durable?: boolean;
}

/**
 * A command handler as @anthropic-ai/sdk's MemoryToolHandlers expects. The
 * command is any object with a `command` name: the SDK's command types (which
 * have no index signature) are assignable to it, and so is a plain object.
 */
export type MemoryCommandHandler = <C extends { readonly command: string }>(command: C) => Promise<string>;

export interface AreevMemoryToolHandlers {
  view: MemoryCommandHandler;
  create: MemoryCommandHandler;
  str_replace: MemoryCommandHandler;
  insert: MemoryCommandHandler;
  delete: MemoryCommandHandler;
  rename: MemoryCommandHandler;
}

export declare const codes: Readonly<{
  TOOL: 'ERR_AREEV_TOOL';
  INVALID: 'ERR_AREEV_INVALID';
  NOT_FOUND: 'ERR_AREEV_NOT_FOUND';
  CLOSED: 'ERR_AREEV_CLOSED';
  STORE: 'ERR_AREEV_STORE';
  TOO_LARGE: 'ERR_AREEV_TOO_LARGE';
}>;

export declare class Areev {
  constructor(file: string | URL, ns?: string, options?: AreevOptions);
  memoryTool(json: string): Promise<string>;
  history(memoryPath: string): Promise<Version[]>;
  read(memoryPath: string, version?: number | string | null): Promise<string>;
  /** The body's bytes as stored: a Node Buffer (typed as its base, Uint8Array, so that no @types/node is needed). */
  readBytes(memoryPath: string, version?: number | string | null): Promise<Uint8Array>;
  close(): void;
  readonly closed: boolean;
  memoryToolHandlers(): AreevMemoryToolHandlers;
}
