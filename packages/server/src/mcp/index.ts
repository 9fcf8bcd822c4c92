export { createMcpServer } from './create-mcp-server.js';
export type { McpServerOptions } from './create-mcp-server.js';
export { toMcpToolError } from './mcp-tool-error.js';
export type { McpErrorLog } from './mcp-tool-error.js';
export { createMcpTools } from './mcp-tools.js';
export type { McpCallContext, McpTool, McpToolsOptions } from './mcp-tools.js';
export { mcpPath, mountMcpRoutes } from './mount-mcp-routes.js';
export { serveMcpOverStdio } from './serve-mcp-stdio.js';
export type { McpStdioOptions, McpStdioServer } from './serve-mcp-stdio.js';
