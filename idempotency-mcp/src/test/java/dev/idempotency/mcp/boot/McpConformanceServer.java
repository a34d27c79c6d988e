package dev.idempotency.mcp.boot;

import java.util.Arrays;
import java.util.stream.Stream;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Boot MCP application {@code .ci/mcp-conformance} runs the official conformance suite against: the auto-configured
 * endpoint with {@link IdempotencyMcpAutoConfigurationTest}'s tools, on 127.0.0.1 and a free port, with the default
 * allow-lists. Prints {@code listening on http://127.0.0.1:PORT/mcp} once it serves; arguments are Boot's.
 */
public final class McpConformanceServer {

    private McpConformanceServer() {
    }

    /**
     * Starts the application until the process is stopped.
     *
     * @param args Spring Boot arguments, after the ones set here
     */
    public static void main(String[] args) {
        String[] all = Stream.concat(Stream.of("--server.address=127.0.0.1", "--server.port=0",
                "--spring.main.banner-mode=off", "--idempotency.mcp.enabled=true",
                "--spring.datasource.url=jdbc:h2:mem:mcp-conformance;DB_CLOSE_DELAY=-1"), Arrays.stream(args))
                .toArray(String[]::new);
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(IdempotencyMcpAutoConfigurationTest.App.class)
                        .web(WebApplicationType.SERVLET).run(all);
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        System.out.println("listening on http://127.0.0.1:" + port + "/mcp");
    }
}
