/** Spring Boot auto-configuration of the MCP tools over the SDK's streamable HTTP servlet transport. */
@NullMarked
package dev.idempotency.mcp.boot;

import org.jspecify.annotations.NullMarked;
