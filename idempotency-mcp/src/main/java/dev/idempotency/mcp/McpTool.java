package dev.idempotency.mcp;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a class whose public {@code @Idempotent} methods are MCP tools (as {@link McpIdempotentTools.Builder#bean}
 * makes them). Two things read it:
 * <ul>
 * <li>the annotation processor ({@code idempotency-processor}) refuses to compile a writing method of such a class
 * whose key is not made from its {@code String idempotencyKey} parameter: a key made from the other parameters is made
 * from what the model writes, and a model that regenerates a call would get a new key and a second effect;</li>
 * <li>the Spring Boot auto-configuration ({@code idempotency.mcp.enabled=true}) serves every bean of such a class as
 * tools over the SDK's streamable HTTP servlet transport.</li>
 * </ul>
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface McpTool {

    /**
     * Whether the class's tools reach outside the application (a payment gateway, another service), shown as their
     * {@code openWorldHint}; true unless set, as MCP assumes for a tool that does not say.
     *
     * @return whether the tools reach outside the application
     */
    boolean openWorld() default true;
}
