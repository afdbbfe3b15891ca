import { BaseCommand } from '../base-command.js';
import { daemonFlags } from '../daemon-flags.js';
import { mcp } from '../actions/mcp.js';

export default class Mcp extends BaseCommand {
  static summary = "Serve a bermd's tools to an MCP client over stdio.";
  static description =
    "An MCP server on stdin and stdout that relays every message to bermd's /mcp endpoint, for clients that start local servers (Claude Desktop, and any client configured with a command). Either protocol generation the client speaks goes through: 2025-11-25 sessions with their list changes and events, and 2026-07-28 requests with their listen streams. stdout carries the protocol only; what the relay has to say goes to stderr. While bermd cannot be reached, each request is answered with an error saying so, and the relay keeps trying: once bermd answers again, the client's session or listen streams are restored and it is told the lists changed. A call bermd refuses for a scope the token lacks is answered with an error naming the scope. A line that is not a JSON-RPC message is answered with a parse error or an invalid request. It runs until stdin closes, or stdout does. The token is --token or BERM_TOKEN, else the login berm login stored for the address, refreshed when it expires or bermd refuses it, the client's session kept.";
  static examples = [
    '<%= config.bin %> mcp',
    'BERM_URL=http://127.0.0.1:7477 BERM_TOKEN=... <%= config.bin %> mcp',
    'claude mcp add --transport stdio berm -- <%= config.bin %> mcp',
  ];

  // stdout is the protocol's: there is no other output to format.
  static enableJsonFlag = false;

  static flags = { ...daemonFlags };

  async run() {
    return this.act(await this.parse(Mcp), mcp);
  }
}
