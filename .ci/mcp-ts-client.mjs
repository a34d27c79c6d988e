// The official TypeScript MCP client (@modelcontextprotocol/client) against this library's tools, pinned to the
// 2026-07-28 revision or in legacy (2025-11-25) mode: lists the tools, holds funds twice under one key (the second
// replays), and refunds once, the user's yes given through the client's elicitation handler (on 2026-07-28 the
// server asks with input_required and the client re-sends the request); the refund re-sent replays.
// Usage: node mcp-ts-client.mjs <2026-07-28|legacy> <stdio|http> <command...|url>
// Prints one line; exits 1 when the story does not hold.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [revision, over, ...target] = process.argv.slice(2);
const mode = revision === 'legacy' ? 'legacy' : { pin: revision };
const client = new Client({ name: 'idempotency-ci', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } });
let asked = 0;
client.setRequestHandler('elicitation/create', async () => {
  asked++;  // the user says yes
  return { action: 'accept', content: { confirm: true } };
});
const transport = over === 'stdio'
    ? new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'ignore' })
    : new StreamableHTTPClientTransport(new URL(target[0]));
const run = Math.random().toString(36).slice(2, 10);  // keys of this run (the HTTP server outlives one run)

function fail(why, result) {
  console.log(`ts client (${revision}, ${over}): FAILED, ${why}${result ? ': ' + JSON.stringify(result) : ''}`);
  process.exit(1);
}
const replayed = r => r?._meta?.['dev.idempotency/replayed'] === true;

try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map(t => t.name).sort();
  if (!['hold_funds', 'lookup_order', 'refund'].every(n => tools.includes(n))) fail('tools ' + tools);
  const hold = { orderId: 'A-1001', cents: 4999, idempotencyKey: 'hold-' + run };
  const held = await client.callTool({ name: 'hold_funds', arguments: hold });
  const heldAgain = await client.callTool({ name: 'hold_funds', arguments: hold });
  if (held.isError || replayed(held) || !replayed(heldAgain)) fail('the hold did not replay', heldAgain);
  const refund = { orderId: 'A-1001', cents: 4999, idempotencyKey: 'refund-' + run };
  const refunded = await client.callTool({ name: 'refund', arguments: refund });
  if (refunded.isError || asked !== 1) fail(`the refund (asked ${asked} times)`, refunded);
  const again = await client.callTool({ name: 'refund', arguments: refund });
  if (again.isError || !replayed(again) || asked !== 1) fail('the refund re-sent did not replay', again);
  let executed = '';
  if (over === 'stdio') {  // the refund sample's gateway counts what it really did
    const order = await client.callTool({ name: 'lookup_order', arguments: { orderId: 'A-1001' } });
    executed = `, refunds executed: ${order.structuredContent.refundsExecuted}`;
    if (order.structuredContent.refundsExecuted !== 1) fail('refunds executed', order);
  }
  console.log(`ts client (${revision}, ${over}): passed (${tools.length} tools, hold replayed, refund confirmed by`
      + ` the user and replayed${executed})`);
  await client.close();
  process.exit(0);
} catch (e) {
  fail(String(e?.message ?? e));
}
