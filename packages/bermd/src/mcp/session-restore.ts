/**
 * A 2025-era session rebuilt on a replica that did not answer its `initialize`: its transport and server
 * brought to the state that `initialize` left them in on the replica that did.
 *
 * Why this reaches into the SDK: it has no public way to do it. The transport accepts a session id only
 * after it has itself answered an `initialize` (`validateSession` reads its private `_initialized` and
 * `sessionId`), and the server learns the client's capabilities and info, and negotiates the protocol
 * version, only in its `initialize` handler (`_oninitialize`). Replaying the `initialize` over HTTP
 * would take a fabricated request and response and a discarded answer. So this module, and nothing else
 * in bermd, touches those names: the server's own handler is run on the stored request (negotiating as
 * it did the first time), and the transport is given its id and marked initialised. Should a version of
 * the SDK move them, it throws rather than guess, and test/session-restore.test.ts, which drives a
 * restored transport over HTTP with the pinned SDK, fails.
 */
import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';

/** What an `initialize` request carried, as stored. */
export interface InitializeParams {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown>;
}

interface WebTransportInternals {
  sessionId?: string;
  _initialized?: unknown;
}

interface NodeTransportInternals {
  _webStandardTransport?: WebTransportInternals;
}

interface ServerInternals {
  _oninitialize?: (request: { method: 'initialize'; params: InitializeParams }) => Promise<unknown>;
}

/** Brings `transport` and `server` (connected to it) to where answering `init` as session `id` would have left them. */
export async function restoreInitialized(
  transport: NodeStreamableHTTPServerTransport,
  server: Server,
  id: string,
  init: InitializeParams,
): Promise<void> {
  const inner = (transport as unknown as NodeTransportInternals)._webStandardTransport;
  const oninitialize = (server as unknown as ServerInternals)._oninitialize;
  if (inner === undefined || typeof inner._initialized !== 'boolean' || typeof oninitialize !== 'function') {
    throw new Error('this version of the MCP SDK does not have what rebuilding a session needs (see mcp/session-restore.ts)');
  }
  await oninitialize.call(server, { method: 'initialize', params: init });
  inner.sessionId = id;
  inner._initialized = true;
}
