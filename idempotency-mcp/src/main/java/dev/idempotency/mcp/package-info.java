/**
 * MCP tools from idempotent operations, on the MCP Java SDK: {@link dev.idempotency.mcp.McpIdempotentTools} turns
 * {@link dev.idempotency.mcp.IdempotentTool}s into the SDK's tool specifications, whose tier is told by the tool
 * annotations and {@code _meta} ({@link dev.idempotency.mcp.McpMeta}), whose key comes from the client runtime or the
 * turn (never from the JSON-RPC id), scoped to the principal, and whose irreversible calls wait for a confirmation
 * ({@link dev.idempotency.mcp.McpConfirmations}). Every call goes through {@link dev.idempotency.IdempotentExecutor}.
 */
@NullMarked
package dev.idempotency.mcp;

import org.jspecify.annotations.NullMarked;
