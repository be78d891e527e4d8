#!/usr/bin/env node
// session.cjs drives queryd with the official MCP TypeScript SDK, the way an
// MCP client does, and prints what it saw as one JSON document on stdout for
// the Go test (e2e/mcp) to check.
//
//   node session.cjs stdio QUERYD_BINARY   (spawns `queryd mcp`; env passes through)
//   node session.cjs http URL TOKEN         (streamable HTTP, bearer token)
//   node session.cjs http-refused URL [TOKEN]  (reports whether the server refused)
//   node session.cjs http-sampling URL TOKEN    (a sampling-capable client asks strata_ask)
//   node session.cjs proof QUERYD_BINARY         (the proof loop over stdio, see proof below)
//
// Environment: STRATA_E2E_DIR is the folder setup-e2e.sh installed the SDK
// into (var/e2e); SEARCH_QUERY and SEARCH_LAYER the search to run, ASK_QUESTION
// the question strata_ask gets (default: SEARCH_QUERY), VERIFY_DRAFT a draft
// checked with strata_verify against strata_ask's first passage (unset: none).
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const e2eDir = process.env.STRATA_E2E_DIR;
if (!e2eDir) {
  console.error('session.cjs: set STRATA_E2E_DIR to the folder scripts/setup-e2e.sh installs into');
  process.exit(2);
}
const sdk = createRequire(path.join(e2eDir, 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const sdkVersion = JSON.parse(require('node:fs').readFileSync(
  path.join(e2eDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version;

async function main() {
  const [mode, target, token] = process.argv.slice(2);
  let transport;
  if (mode === 'stdio') {
    transport = new StdioClientTransport({ command: target, args: ['mcp'], env: process.env, stderr: 'inherit' });
  } else if (mode === 'http-refused') {
    // Connect with the token given (wrong or none) and report the refusal.
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const client = new Client({ name: 'stratakb-e2e', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } }));
      await client.listTools();
      process.stdout.write(JSON.stringify({ refused: false }));
    } catch (err) {
      process.stdout.write(JSON.stringify({ refused: true, error: String(err && err.message ? err.message : err) }));
    }
    return;
  } else if (mode === 'http-sampling') {
    // A client that declares sampling and answers sampling/createMessage
    // with its own "model": a reply in prose around a JSON list, as small
    // models write. The server (QUERY_REWRITE_PROVIDER=mcp_sampling) asks
    // it for rewrites of the question.
    const { CreateMessageRequestSchema } = sdk('@modelcontextprotocol/sdk/types.js');
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const client = new Client({ name: 'stratakb-e2e-sampling', version: '1.0.0' }, { capabilities: { sampling: {} } });
    const seen = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      seen.push(req.params);
      return { model: 'e2e-fake', role: 'assistant',
        content: { type: 'text', text: 'Here are rewrites:\n["carry over unused annual leave days"]\nHope that helps.' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } }));
    const question = process.env.ASK_QUESTION || process.env.SEARCH_QUERY;
    const ask = await client.callTool({ name: 'strata_ask', arguments: { question, layers: [process.env.SEARCH_LAYER], response_format: 'detailed' } });
    process.stdout.write(JSON.stringify({ sdk_version: sdkVersion, mode, sampling_requests: seen.length,
      sampling_prompt: seen[0] ? JSON.stringify(seen[0]) : '', ask }));
    await client.close();
    return;
  } else if (mode === 'proof') {
    await proof(new StdioClientTransport({ command: target, args: ['mcp'], env: process.env, stderr: 'inherit' }));
    return;
  } else if (mode === 'http') {
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  const client = new Client({ name: 'stratakb-e2e', version: '1.0.0' });
  const out = { sdk_version: sdkVersion, mode };
  await client.connect(transport);
  if (mode === 'http') out.session_id_before_delete = transport.sessionId;
  out.server = client.getServerVersion();
  out.protocol_version = transport.protocolVersion ?? null;
  out.instructions = client.getInstructions() ?? null;
  out.tools = (await client.listTools()).tools;
  out.prompts = (await client.listPrompts()).prompts;

  const query = process.env.SEARCH_QUERY;
  const layer = process.env.SEARCH_LAYER;
  out.search = await client.callTool({ name: 'strata_search', arguments: { query, layers: [layer], top_k: 3 } });
  out.bad_top_k = await client.callTool({ name: 'strata_search', arguments: { query, top_k: 99 } });
  out.bad_layers = await client.callTool({ name: 'strata_search', arguments: { query, layers: 'not-a-list' } });
  out.unknown_layer = await client.callTool({ name: 'strata_search', arguments: { query, layers: ['no-such-layer'] } });
  if (out.tools.some((t) => t.name === 'strata_ask')) {
    const question = process.env.ASK_QUESTION || query;
    out.ask = await client.callTool({ name: 'strata_ask', arguments: { question, layers: [layer] } });
    out.ask_detailed = await client.callTool({ name: 'strata_ask', arguments: { question, response_format: 'detailed' } });
    out.bad_ask = await client.callTool({ name: 'strata_ask', arguments: { question, response_format: 'long' } });
    // In extractive mode, a named clause: its own sentences and a receipt
    // (the SDK checks the answer against the output schema), and the
    // receipt opened.
    out.ask_extractive = await client.callTool({ name: 'strata_ask',
      arguments: { question: 'What does clause 2.2 say about carrying over leave?', layers: [layer], mode: 'extractive' } });
    const rid = out.ask_extractive.structuredContent && out.ask_extractive.structuredContent.receipt_id;
    if (rid) out.extractive_receipt = await client.callTool({ name: 'strata_get_receipt', arguments: { receipt_id: rid } });
    const first = out.ask.structuredContent && out.ask.structuredContent.passages[0];
    const draft = process.env.VERIFY_DRAFT;
    if (first && draft && out.tools.some((t) => t.name === 'strata_verify')) {
      // A draft quoting the first passage (VERIFY_DRAFT), checked against
      // it, and the receipt opened.
      out.verify = await client.callTool({ name: 'strata_verify', arguments: { draft, passages: [first.ref] } });
      out.verify_wrong = await client.callTool({ name: 'strata_verify', arguments: { draft: draft.replace(/[0-9]+/, '13'), passages: [first.ref] } });
      const id = out.verify.structuredContent && out.verify.structuredContent.receipt_id;
      if (id) out.receipt = await client.callTool({ name: 'strata_get_receipt', arguments: { receipt_id: id } });
    }
  }
  out.prompt = await client.getPrompt({ name: 'answer_from_documents', arguments: { question: query, layers: `${layer}, other` } });
  out.prompt_without_question = await refusal(() => client.getPrompt({ name: 'answer_from_documents', arguments: {} }));
  if (mode === 'http') {
    // End the session as a client does (DELETE), then use its id again:
    // the server must answer 404 for a session it no longer has.
    out.session_id_issued = Boolean(transport.sessionId);
    await transport.terminateSession();
    out.after_delete = await refusal(() => transport.send({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} }),
      () => { transport._sessionId = out.session_id_before_delete; });
  }
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

// proof runs the proof loop as an assistant does, in one session. It asks
// PROOF_QUESTION on PROOF_LAYER (no mode), writes a draft from the
// sentences that came back, each on one line citing its own passage, and a
// wrong draft with one fact changed (PROOF_CHANGE, "FROM=>TO", FROM the
// first whole word FROM of the draft), verifies the wrong one, then the
// right one, and opens the receipt; then a draft with no citation and one
// citing [S5] with at most four passages. It asks PROOF_CLAUSE_QUESTION, a
// clause the question names, and runs the same loop on its sentences
// (PROOF_CLAUSE_CHANGE), with a draft of its facts in other forms
// (PROOF_OTHER_FORMS, citing the clause's sentences as [S1]..); and it asks
// PROOF_QUESTION again with mode grounded. Every result and draft is
// printed.
async function proof(transport) {
  const client = new Client({ name: 'stratakb-e2e-proof', version: '1.0.0' });
  const out = { sdk_version: sdkVersion, mode: 'proof' };
  await client.connect(transport);
  out.server = client.getServerVersion();
  const layers = [process.env.PROOF_LAYER];
  const call = (name, args) => client.callTool({ name, arguments: args });
  const receipt = async (r) => {
    const id = r && r.structuredContent && r.structuredContent.receipt_id;
    return id ? call('strata_get_receipt', { receipt_id: id }) : null;
  };
  const sentences = (r) => (r && r.structuredContent && r.structuredContent.answer) || [];
  const oneLine = (t) => t.replace(/\s+/g, ' ').trim();
  // loop: draft, wrong draft, verify both, open the receipt.
  const loop = async (answer, change) => {
    const l = { refs: answer.map((s) => s.ref) };
    l.draft = answer.map((s, i) => `${oneLine(s.text)} [S${i + 1}]`).join(' ');
    const [from, to] = (change || '').split('=>');
    const word = new RegExp(`(^|[^0-9A-Za-z])${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![0-9A-Za-z])`);
    l.wrong_draft = l.draft.replace(word, (m, before) => before + to);
    if (l.refs.length === 0) return l;
    l.verify_wrong = await call('strata_verify', { draft: l.wrong_draft, passages: l.refs });
    l.verify = await call('strata_verify', { draft: l.draft, passages: l.refs });
    l.receipt = await receipt(l.verify);
    return l;
  };

  out.ask = await call('strata_ask', { question: process.env.PROOF_QUESTION, layers });
  out.ask_receipt = await receipt(out.ask);
  const answer = sentences(out.ask);
  out.loop = await loop(answer, process.env.PROOF_CHANGE);
  if (answer.length > 0) {
    out.uncited_draft = out.loop.draft.replace(/ \[S[0-9]+\]/g, '');
    out.verify_uncited = await call('strata_verify', { draft: out.uncited_draft, passages: out.loop.refs });
    out.unknown_passages = out.loop.refs.slice(0, 4);
    out.unknown_draft = `${oneLine(answer[0].text)} [S5]`;
    out.verify_unknown = await call('strata_verify', { draft: out.unknown_draft, passages: out.unknown_passages });
  }

  out.clause = await call('strata_ask', { question: process.env.PROOF_CLAUSE_QUESTION, layers });
  out.clause_receipt = await receipt(out.clause);
  const clause = sentences(out.clause);
  out.clause_loop = await loop(clause, process.env.PROOF_CLAUSE_CHANGE);
  if (clause.length > 0) {
    out.verify_other_forms = await call('strata_verify', { draft: process.env.PROOF_OTHER_FORMS, passages: clause.map((s) => s.ref) });
  }

  out.grounded = await call('strata_ask', { question: process.env.PROOF_QUESTION, layers, mode: 'grounded' });
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

// refusal runs fn (after prepare, when given) and reports the error it
// throws: its JSON-RPC code or HTTP status and its message.
async function refusal(fn, prepare) {
  if (prepare) prepare();
  try {
    await fn();
    return { refused: false };
  } catch (err) {
    return { refused: true, code: err && err.code, message: String(err && err.message ? err.message : err) };
  }
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err), code: err && err.code }));
  process.exit(1);
});
