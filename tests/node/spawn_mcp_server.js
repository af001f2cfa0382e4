// Spawns an MCP server the way Node-hosted MCP clients do (child_process.spawn with piped
// stdio, which libuv makes Unix sockets), speaks MCP to it with a plain JSON-RPC client, and
// prints what it learned as one JSON line.
//
// usage: node spawn_mcp_server.js COMMAND [ARGS...]
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });

let buffered = "";
const waiting = new Map();
let nextId = 1;

child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  buffered += chunk;
  let end;
  while ((end = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, end).trim();
    buffered = buffered.slice(end + 1);
    if (!line) continue;
    const message = JSON.parse(line);
    if (message.id !== undefined && waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  }
});

// A server that exits fails every request still waiting (instead of leaving them hanging).
child.on("exit", (code) => {
  for (const [id, resolve] of waiting) {
    resolve({ id, error: { message: `the server exited (status ${code}) before answering` } });
  }
  waiting.clear();
});

function answer(message) {
  if (message.error) throw new Error(message.error.message);
  return message.result;
}

function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve) => waiting.set(id, resolve));
}

function notify(method, params) {
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
}

// What libuv gave the child as its stdin (read before the stream is closed).
const stdinIsSocket = fs.fstatSync(child.stdin._handle.fd).isSocket();

async function main() {
  const init = answer(await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "node-test-client", version: "1.0.0" },
  }));
  notify("notifications/initialized", {});
  const listed = answer(await request("tools/list", {}));
  const called = answer(await request("tools/call", { name: "add", arguments: { a: 2, b: 40 } }));
  const closed = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  child.stdin.end();
  const exitCode = await closed;
  process.stdout.write(
    JSON.stringify({
      stdinIsSocket,
      server: init.serverInfo.name,
      protocolVersion: init.protocolVersion,
      tools: listed.tools.map((t) => t.name).sort(),
      call: called,
      exitCode,
    }) + "\n",
  );
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  child.kill();
  process.exit(1);
});
