#!/usr/bin/env node
// multiqueryd_session.cjs drives one MCP session with the official
// TypeScript SDK through a load balancer in front of several queryd
// processes (multiqueryd_test.go), and prints what it saw as one JSON
// document: the session id before and after, and each tool result.
//
//   node multiqueryd_session.cjs URL
//
// Environment: STRATA_E2E_DIR (the folder scripts/setup-e2e.sh installs the
// SDK into), SEARCH_QUERY, SEARCH_LAYER, VERIFY_DRAFT (a draft citing [S1],
// checked against strata_ask's first passage), SEARCHES (how many times
// strata_search runs, default 6).
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const sdk = createRequire(path.join(process.env.STRATA_E2E_DIR, 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
  const client = new Client({ name: 'stratakb-e2e-multiqueryd', version: '1.0.0' });
  const out = { calls: [] };
  await client.connect(transport);
  out.session_first = transport.sessionId;
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    out.calls.push({ name, is_error: Boolean(r.isError), session: transport.sessionId, result: r.structuredContent || null });
    return r.structuredContent || {};
  };
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  const query = process.env.SEARCH_QUERY;
  const layers = [process.env.SEARCH_LAYER];
  for (let i = 0; i < Number(process.env.SEARCHES || 6); i++) {
    await call('strata_search', { query, layers, top_k: 3 });
  }
  const ask = await call('strata_ask', { question: query, layers });
  const first = ask.passages && ask.passages[0];
  if (first) {
    const verify = await call('strata_verify', { draft: process.env.VERIFY_DRAFT, passages: [first.ref] });
    if (verify.receipt_id) await call('strata_get_receipt', { receipt_id: verify.receipt_id });
  }
  await call('strata_learning_stats', {});
  if (ask.interaction_id) await call('strata_feedback', { interaction_id: ask.interaction_id, helpful: true });
  await call('strata_learning_stats', {});
  out.session_last = transport.sessionId;
  await transport.terminateSession();
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err), code: err && err.code }));
  process.exit(1);
});
