'use strict';
// @areev/areev: Anthropic's memory tool (memory_20250818) on a versioned
// SQLite store. A thin layer over the areev.node addon; see docs/bindings.md.
const path = require('node:path');

function loadAddon() {
  const file = process.env.AREEV_NODE_ADDON || path.join(__dirname, 'build', 'Release', 'areev.node');
  try {
    return require(file);
  } catch (e) {
    e.message = `@areev/areev: cannot load the native addon ${file} ` +
      `(run \`npm run install\` in ${__dirname}): ${e.message}`;
    throw e;
  }
}

const native = loadAddon();

/** Error codes carried by `err.code` on errors this package raises. */
const codes = Object.freeze({
  TOOL: 'ERR_AREEV_TOOL', // a memory-tool command failed (message = the bare tool message)
  INVALID: 'ERR_AREEV_INVALID', // bad argument (namespace name, path, version)
  NOT_FOUND: 'ERR_AREEV_NOT_FOUND', // no such file, version or history
  CLOSED: 'ERR_AREEV_CLOSED', // the handle was closed
  STORE: 'ERR_AREEV_STORE', // the store failed (I/O, busy, corruption)
  TOO_LARGE: 'ERR_AREEV_TOO_LARGE', // a result longer than a JavaScript string can be
});

// Runs `call`, turning a synchronous throw (a method called without its
// object, arguments JSON.stringify cannot encode) into a rejected promise:
// every call returns a promise.
function settled(call) {
  try {
    return call();
  } catch (e) {
    return Promise.reject(e);
  }
}

// A TypeError as the addon raises it for an argument of the wrong type.
function argTypeError(message) {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' });
}

// The addon's rejection of a call on a closed handle.
function closedError() {
  return Object.assign(new Error('the Areev handle is closed'), { code: codes.CLOSED });
}

// The commands of memory_20250818, as @anthropic-ai/sdk's MemoryToolHandlers names them.
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'];

class Areev {
  #h;
  // Handler calls made and not yet settled (memoryToolHandlers() runs them
  // one after another), and whether close() waits for them to finish: a
  // call made before close() finishes, as memoryTool()'s do.
  #queued = 0;
  #closing = false;

  /**
   * Opens (creating if missing) the store file at `file` and namespace `ns`.
   * Throws Error (code ERR_AREEV_INVALID for a bad namespace name, ERR_AREEV_STORE
   * if the file cannot be opened) or TypeError.
   */
  constructor(file, ns = 'default', options = {}) {
    if (file instanceof URL) file = require('node:url').fileURLToPath(file);
    // A third argument `true`, or `{ durable: 'false' }`, would otherwise open
    // the store other than asked, silently.
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw argTypeError('options must be an object, such as { durable: true }');
    }
    const durable = options == null ? undefined : options.durable;
    if (durable !== undefined && typeof durable !== 'boolean') {
      throw argTypeError('options.durable must be a boolean');
    }
    this.#h = new native.Handle(file, ns, durable === true);
  }

  /**
   * Runs one command (JSON text); resolves to the tool_result content, rejects with
   * Error(message) (code ERR_AREEV_TOOL; for `Storage operation failed ...`, `detail` is the
   * store's own message, for a log, not the model).
   */
  memoryTool(json) {
    return settled(() => this.#open().memoryTool(json));
  }

  /** Versions of the memory file at `memoryPath`, oldest first. */
  history(memoryPath) {
    return settled(() => this.#open().history(memoryPath));
  }

  /**
   * The current body (version null/undefined) or a version (number, or grain-id prefix string),
   * decoded as UTF-8: bytes that are not UTF-8 become U+FFFD. readBytes gives them as stored.
   */
  read(memoryPath, version = null) {
    return settled(() => this.#open().read(memoryPath, version));
  }

  /** The same body as read(), as a Buffer of the bytes stored. */
  readBytes(memoryPath, version = null) {
    return settled(() => this.#open().readBytes(memoryPath, version));
  }

  /**
   * Closes the handle; calls already made still finish (handler calls still
   * waiting for their turn too). Idempotent.
   */
  close() {
    if (this.#queued === 0) this.#h.close();
    else this.#closing = true;
  }

  get closed() {
    return this.#closing || this.#h.closed;
  }

  // The addon's handle for a call, which is refused once close() has been
  // called (the addon's own refusal once it has closed the handle).
  #open() {
    if (this.#closing) throw closedError();
    return this.#h;
  }

  // One handler call, run after the calls made before it: it counts as made
  // from now on, so a close() meanwhile lets it run before the store closes.
  #queue(previous, text) {
    if (this.#closing || this.#h.closed) return Promise.reject(closedError());
    ++this.#queued;
    const done = () => {
      if (--this.#queued === 0 && this.#closing) this.#h.close();
    };
    const result = previous.then(() => settled(() => this.#h.memoryTool(text)));
    result.then(done, done);
    return result;
  }

  /**
   * Handlers for @anthropic-ai/sdk's betaMemoryTool(handlers): each forwards its
   * command to memoryTool(). Every other command name the model may send also
   * reaches the backend, so the model gets its `Unknown command: ...` error,
   * while the object converts, prints and awaits as a plain object (see below).
   */
  memoryToolHandlers() {
    // The SDK's runner starts one turn's tool calls together, in the order the
    // model wrote them, and awaits them all: the handlers run them one after
    // another in the order they were called, so each command sees what the one
    // before it did, as through the CLI or Python (a turn that creates a file
    // and then edits it). Calls through other handlers or memoryTool() are not
    // ordered with these.
    let previous = Promise.resolve();
    const after = () => {};
    const run = (command) => {
      let text;
      try {
        text = JSON.stringify(command);
      } catch (e) {
        return Promise.reject(e);
      }
      const result = this.#queue(previous, text);
      previous = result.then(after, after);
      return result;
    };
    const handlers = {};
    for (const name of COMMANDS) handlers[name] = run;
    const wrapped = new Map();  // one per method, so that h.toString === h.toString
    return new Proxy(handlers, {
      get(target, key, receiver) {
        if (Object.hasOwn(target, key)) return target[key];
        const inherited = Reflect.get(target, key, receiver);
        if (typeof key !== 'string' || PROBED_NAMES.has(key)) return inherited;
        if (typeof inherited === 'function') {
          if (!wrapped.has(key)) wrapped.set(key, commandOr(key, run, inherited));
          return wrapped.get(key);
        }
        if (inherited !== undefined) return inherited;
        return isUnknownCommandName(key) ? run : undefined;
      },
    });
  }
}

// The SDK runs a model's command as handlers[input.command](input). So an
// Object.prototype method (toString, constructor, hasOwnProperty, ...) called
// with the command it is named after runs that command, which the backend
// refuses as unknown; called otherwise (String(handlers), a library's
// hasOwnProperty) it is the method itself.
function commandOr(name, run, method) {
  return function commandOrMethod(...args) {
    const [input] = args;
    if (input !== null && typeof input === 'object' && input.command === name) return run(input);
    return Reflect.apply(method, this, args);
  };
}

// Names a model might send as a command that no object has: snake_case words
// like the six, so not the protocol keys JavaScript and libraries probe any
// object for (Symbol.toPrimitive, toJSON, asymmetricMatch, $$typeof;
// Object.prototype's keys are handled by commandOr). `then` and `inspect` are
// lower-case probes: a runner there would make the handlers a thenable that
// `await` calls, or a custom inspector. A probe answered with a runner made
// the runner's promise reject unhandled, which ends a Node process.
const PROBED_NAMES = new Set(['then', 'inspect']);
function isUnknownCommandName(key) {
  return typeof key === 'string' && /^[a-z][a-z0-9_]*$/.test(key) && !PROBED_NAMES.has(key);
}

module.exports = { Areev, codes };
