// Type-checked by tests/test_bindings_node.py (tsc --noEmit --strict): the
// binding's declarations (bindings/node/index.d.ts) as a TypeScript program
// uses them, with @anthropic-ai/sdk's own types.
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { Areev, codes, type Version } from '../../bindings/node';

const m = new Areev('agent.db', 'assistant', { durable: true });
// docs/bindings.md: the handlers are what betaMemoryTool takes.
export const tool = betaMemoryTool(m.memoryToolHandlers());
export const viewed: Promise<string> = m.memoryToolHandlers().view({ command: 'view', path: '/memories' });
export const result: Promise<string> = m.memoryTool('{"command":"view","path":"/memories"}');
export const versions: Promise<Version[]> = m.history('/memories/a.md');
export const body: Promise<string> = m.read('/memories/a.md', 1);
export const byPrefix: Promise<string> = m.read('/memories/a.md', '3f9a1c');
export const raw: Promise<Uint8Array> = m.readBytes('/memories/a.md', 2);
export const code: 'ERR_AREEV_TOOL' = codes.TOOL;
export const closed: boolean = m.closed;
m.close();
